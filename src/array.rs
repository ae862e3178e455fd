//! Parallel iterators over an array `[T; N]` by value (rayon's `rayon::array`; indexed).
//! References to arrays iterate as slices.
//!
//! ```
//! use zonal::prelude::*;
//! let it: zonal::array::IntoIter<String, 2> = [String::from("a"), "b".into()].into_par_iter();
//! assert_eq!(it.collect::<Vec<_>>(), ["a", "b"]);
//! ```

/// An array's items, by value (its items moved into a `Vec` first).
pub type IntoIter<T, const N: usize> = crate::iter::VecIntoIter<T>;
