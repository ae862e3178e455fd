//! Draining a `String`'s chars in parallel (rayon's `rayon::string`; see
//! [`ParallelDrainRange`](crate::iter::ParallelDrainRange)).
//!
//! ```
//! use zonal::prelude::*;
//! let mut s = String::from("abcdef");
//! let d: zonal::string::Drain<'_> = s.par_drain(2..4);
//! assert_eq!(d.collect::<String>(), "cd");
//! assert_eq!(s, "abef");
//! ```

/// The chars drained from a `String` (indexed).
pub type Drain<'a> = crate::iter::Drain<'a, char>;
