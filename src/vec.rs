//! Parallel iterators over a `Vec` (rayon's `rayon::vec`): by value, and draining a range
//! ([`ParallelDrainRange`](crate::iter::ParallelDrainRange)).
//!
//! ```
//! use zonal::prelude::*;
//! let mut v = vec![1, 2, 3, 4];
//! let d: zonal::vec::Drain<'_, i32> = v.par_drain(1..3);
//! assert_eq!(d.sum::<i32>(), 5);
//! assert_eq!(v, [1, 4]);
//! let it: zonal::vec::IntoIter<i32> = v.into_par_iter();
//! assert_eq!(it.len(), 2);
//! ```

pub use crate::iter::Drain;
/// A parallel iterator over a `Vec`'s items, by value (indexed).
pub type IntoIter<T> = crate::iter::VecIntoIter<T>;
