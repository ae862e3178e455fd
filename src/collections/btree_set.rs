//! A `BTreeSet`: by value and by reference, in order.

/// A set's items, by value.
pub type IntoIter<T> = crate::iter::VecIntoIter<T>;
/// References to a set's items.
pub type Iter<'a, T> = crate::iter::VecIntoIter<&'a T>;
