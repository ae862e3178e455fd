//! How big the workloads are: scaled to the machine (memory and CPUs per node), or set with
//! [`BYTES_VAR`].
//!
//! Each workload's data per node is a share of the smallest node's memory ([`Mode`]): 1/32
//! for `--quick` (between 4 MiB and 256 MiB), 1/16 for the full run (between 8 MiB and
//! 1 GiB), and 1 MiB when criterion's benches run once as tests; five runtimes' copies of
//! one workload live at once, so at most 5/16 of a node is used. Data in a last-level cache
//! shows no NUMA effect: where a node's cache holds 256 MiB, set [`BYTES_VAR`] above it.
//! Each node's data is cut into two parts per allowed CPU of the node.

use crate::numa::host::Topo;

/// The override: bytes of each workload's data per node, e.g. `64M`, `1G`, `524288`.
pub const BYTES_VAR: &str = "ZONAL_NUMA_BYTES";

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;

/// A bad [`BYTES_VAR`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SizeError {
    /// Not a number of bytes.
    #[error(
        "{BYTES_VAR}={0:?} is not a size: expected bytes, optionally with K, M or G (e.g. 64M)"
    )]
    Parse(String),
    /// Out of range.
    #[error("{BYTES_VAR}={0:?} is out of range: expected 64K..=1024G")]
    Range(String),
}

/// Parses a size (`123`, `64K`, `16M`, `2G`; binary units).
///
/// # Errors
/// [`SizeError`] naming the value.
pub fn parse_bytes(text: &str) -> Result<usize, SizeError> {
    let t = text.trim();
    let (num, unit) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], KIB),
        Some((i, 'M' | 'm')) => (&t[..i], MIB),
        Some((i, 'G' | 'g')) => (&t[..i], GIB),
        _ => (t, 1),
    };
    let n: usize = num.parse().map_err(|_| SizeError::Parse(text.to_owned()))?;
    let bytes = n
        .checked_mul(unit)
        .ok_or_else(|| SizeError::Range(text.to_owned()))?;
    if (64 * KIB..=1024 * GIB).contains(&bytes) {
        Ok(bytes)
    } else {
        Err(SizeError::Range(text.to_owned()))
    }
}

/// How long a run may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A criterion bench run once as a test: tiny data.
    Test,
    /// `numa-report --quick`: about a minute.
    Quick,
    /// The full report or `cargo bench`.
    Full,
}

/// The sizes of one run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Sizes {
    /// Bytes of each workload's data per node.
    pub bytes_per_node: usize,
    /// Where that came from: `BYTES_VAR` or the memory share.
    pub source: String,
    /// Parts per node.
    pub parts_per_node: usize,
    /// Columns of the heat grid.
    pub stencil_cols: usize,
    /// Heat steps per measured run.
    pub stencil_steps: usize,
    /// Seconds of arrivals of the service load per run.
    pub service_seconds: u64,
}

impl Sizes {
    /// The sizes for `topo` in `mode`, [`BYTES_VAR`] read from `var` (the environment's
    /// value, if set).
    ///
    /// # Errors
    /// A bad [`BYTES_VAR`].
    pub fn new(topo: &Topo, mode: Mode, var: Option<&str>) -> Result<Self, SizeError> {
        let nodes = topo.nodes_with_cpus();
        let node_mem = nodes
            .iter()
            .filter_map(|n| n.memory_bytes)
            .min()
            .unwrap_or(1 << 30) as usize;
        let (bytes_per_node, source) = match var {
            Some(v) => (parse_bytes(v)?, format!("{BYTES_VAR}={v}")),
            None if mode == Mode::Test => (MIB, "1 MiB (a bench run once as a test)".to_owned()),
            None if mode == Mode::Quick => (
                (node_mem / 32).clamp(4 * MIB, 256 * MIB),
                "1/32 of the smallest node's memory, 4 MiB..=256 MiB (--quick)".to_owned(),
            ),
            None => (
                (node_mem / 16).clamp(8 * MIB, GIB),
                "1/16 of the smallest node's memory, 8 MiB..=1 GiB".to_owned(),
            ),
        };
        let cpus = nodes
            .iter()
            .map(|n| n.allowed_cpus.len())
            .max()
            .unwrap_or(1);
        Ok(Self {
            bytes_per_node,
            source,
            parts_per_node: 2 * cpus.max(1),
            stencil_cols: 512,
            stencil_steps: if mode == Mode::Full { 16 } else { 4 },
            service_seconds: if mode == Mode::Full { 3 } else { 1 },
        })
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn topo(memory_mib: u64, cpus: u32) -> Topo {
        let node = |os_id: u32| crate::numa::host::NodeFacts {
            os_id,
            cpus: (0..cpus).map(|c| os_id * cpus + c).collect(),
            allowed_cpus: (0..cpus).map(|c| os_id * cpus + c).collect(),
            memory_bytes: Some(memory_mib << 20),
        };
        Topo {
            nodes: vec![node(0), node(1)],
            distances: vec![vec![10, 20], vec![20, 10]],
            cpus_online: 2 * cpus as usize,
            cpus_allowed: 2 * cpus as usize,
        }
    }

    #[test]
    fn sizes_scale_with_the_node_memory_and_cpus_within_their_bounds() {
        let big = topo(64 << 10, 8);
        let s = Sizes::new(&big, Mode::Full, None).unwrap();
        assert_eq!((s.bytes_per_node, s.parts_per_node), (GIB, 16));
        assert_eq!(
            Sizes::new(&big, Mode::Quick, None).unwrap().bytes_per_node,
            256 * MIB
        );
        assert_eq!(
            Sizes::new(&big, Mode::Test, None).unwrap().bytes_per_node,
            MIB
        );
        let guest = topo(128, 2);
        assert_eq!(
            Sizes::new(&guest, Mode::Quick, None)
                .unwrap()
                .bytes_per_node,
            4 * MIB
        );
        assert_eq!(
            Sizes::new(&guest, Mode::Full, None).unwrap().bytes_per_node,
            8 * MIB
        );
        let set = Sizes::new(&guest, Mode::Full, Some("2M")).unwrap();
        assert_eq!(set.bytes_per_node, 2 * MIB);
        assert_eq!(set.source, "ZONAL_NUMA_BYTES=2M");
        assert_eq!(
            Sizes::new(&guest, Mode::Quick, Some("x")).unwrap_err(),
            SizeError::Parse("x".into())
        );
    }

    #[test]
    fn sizes_parse_with_units_and_bad_ones_are_named() {
        assert_eq!(parse_bytes("64K"), Ok(64 * KIB));
        assert_eq!(parse_bytes("16m"), Ok(16 * MIB));
        assert_eq!(parse_bytes("2G"), Ok(2 * GIB));
        assert_eq!(parse_bytes("1048576"), Ok(MIB));
        assert_eq!(parse_bytes("lots"), Err(SizeError::Parse("lots".into())));
        assert_eq!(parse_bytes("1K"), Err(SizeError::Range("1K".into())));
        assert_eq!(
            parse_bytes("99999999999999999G"),
            Err(SizeError::Range("99999999999999999G".into()))
        );
        assert!(SizeError::Parse("x".into()).to_string().contains(BYTES_VAR));
    }
}
