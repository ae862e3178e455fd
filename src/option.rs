//! Parallel iterators over an `Option`'s item, if any (rayon's `rayon::option`; indexed).
//!
//! ```
//! use zonal::prelude::*;
//! let mut o = Some(3);
//! let it: zonal::option::IterMut<'_, i32> = o.par_iter_mut();
//! it.for_each(|x| *x += 1);
//! assert_eq!(o.par_iter().copied().sum::<i32>(), 4);
//! ```

/// An option's item, by value.
pub type IntoIter<T> = crate::iter::OptionIter<T>;
/// A reference to an option's item.
pub type Iter<'a, T> = crate::iter::OptionIter<&'a T>;
/// A mutable reference to an option's item.
pub type IterMut<'a, T> = crate::iter::OptionIter<&'a mut T>;
