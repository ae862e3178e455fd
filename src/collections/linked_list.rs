//! A `LinkedList`: by value, by reference, by mutable reference; in order.

/// A list's items, by value.
pub type IntoIter<T> = crate::iter::VecIntoIter<T>;
/// References to a list's items.
pub type Iter<'a, T> = crate::iter::VecIntoIter<&'a T>;
/// Mutable references to a list's items.
pub type IterMut<'a, T> = crate::iter::VecIntoIter<&'a mut T>;
