//! Dense identifiers for CPUs, NUMA nodes and memory access levels.
//!
//! Every id here is an *index* into the machine model (0..n), not an operating-system
//! number: the OS numbers live in [`CpuInfo::os_index`](crate::CpuInfo::os_index) and
//! [`NodeInfo::os_id`](crate::NodeInfo::os_id). Indexes are dense so that the steal path can
//! look things up in flat arrays.

use std::fmt;

macro_rules! dense_id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(transparent))]
        pub struct $name(pub u32);

        impl $name {
            /// The id for dense index `i`.
            ///
            /// # Panics
            /// If `i` does not fit in `u32` (a machine model never has that many items).
            #[inline]
            #[must_use]
            pub fn new(i: usize) -> Self {
                Self(u32::try_from(i).expect("index fits in u32"))
            }

            /// The dense index, for indexing slices.
            #[inline]
            #[must_use]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

dense_id!(
    /// A CPU (hardware thread) of the machine model, as a dense index.
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// # use zonal::topology::CpuId;
    /// assert_eq!(CpuId::new(3).index(), 3);
    /// ```
    CpuId
);
dense_id!(
    /// A NUMA node of the machine model, as a dense index (nodes are kept in ascending OS-id order).
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// # use zonal::topology::NodeId;
    /// assert_eq!(NodeId::new(1).index(), 1);
    /// ```
    NodeId
);

/// A memory access level (MAL): `Level(0)` is level I, a CPU's own node; `Level(k)` spans
/// every node within the (k+1)-th smallest distance of the node.
///
/// Displays as a Roman numeral, as the paper writes levels.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// # use zonal::topology::Level;
/// assert_eq!(Level::LOCAL.to_string(), "I");
/// assert_eq!(Level(3).to_string(), "IV");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Level(pub u8);

impl Level {
    /// Level I: the CPU's own node.
    pub const LOCAL: Level = Level(0);

    /// The level as an index (0 = level I).
    #[inline]
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The level's number as the paper counts (1 = level I).
    #[inline]
    #[must_use]
    pub const fn number(self) -> usize {
        self.0 as usize + 1
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const TABLE: [(usize, &str); 13] = [
            (1000, "M"),
            (900, "CM"),
            (500, "D"),
            (400, "CD"),
            (100, "C"),
            (90, "XC"),
            (50, "L"),
            (40, "XL"),
            (10, "X"),
            (9, "IX"),
            (5, "V"),
            (4, "IV"),
            (1, "I"),
        ];
        let mut n = self.number();
        for (value, numeral) in TABLE {
            while n >= value {
                f.write_str(numeral)?;
                n -= value;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn roman_numerals() {
        let got: Vec<String> = (0..12).map(|i| Level(i).to_string()).collect();
        assert_eq!(
            got,
            ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"]
        );
        assert_eq!(Level(48).to_string(), "XLIX");
    }
}
