//! Parallel iterators over ranges `a..=b` (rayon's `rayon::range_inclusive`): every integer
//! type and `char`; indexed where the length always fits a `usize`.
//!
//! ```
//! use zonal::prelude::*;
//! let r: zonal::range_inclusive::Iter<char> = ('a'..='c').into_par_iter();
//! assert_eq!(r.collect::<String>(), "abc");
//! ```

pub use crate::iter::RangeInclusiveIter as Iter;
