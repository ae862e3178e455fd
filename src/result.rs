//! Parallel iterators over a `Result`'s `Ok` item, if any (rayon's `rayon::result`;
//! indexed).
//!
//! ```
//! use zonal::prelude::*;
//! let ok: Result<u8, String> = Ok(7);
//! let err: Result<u8, String> = Err("no".into());
//! assert_eq!(ok.par_iter().count() + err.par_iter().count(), 1);
//! let v: Vec<u8> = ok.into_par_iter().collect();
//! assert_eq!(v, [7]);
//! ```

/// A result's `Ok` item, by value.
pub type IntoIter<T> = crate::iter::OptionIter<T>;
/// A reference to a result's `Ok` item.
pub type Iter<'a, T> = crate::iter::OptionIter<&'a T>;
/// A mutable reference to a result's `Ok` item.
pub type IterMut<'a, T> = crate::iter::OptionIter<&'a mut T>;
