//! Parallel iterators over ranges `a..b` (rayon's `rayon::range`): every integer type and
//! `char`; indexed where the length always fits a `usize`.
//!
//! ```
//! use zonal::prelude::*;
//! let r: zonal::range::Iter<i64> = (-5..5i64).into_par_iter();
//! assert_eq!(r.sum::<i64>(), -5);
//! ```

pub use crate::iter::RangeIter as Iter;
