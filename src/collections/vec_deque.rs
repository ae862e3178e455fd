//! A `VecDeque`: by value, by reference, by mutable reference, a range drained ([`ParallelDrainRange`](crate::iter::ParallelDrainRange)); in order.

/// A deque's items, by value.
pub type IntoIter<T> = crate::iter::VecIntoIter<T>;
/// References to a deque's items.
pub type Iter<'a, T> = crate::iter::VecIntoIter<&'a T>;
/// Mutable references to a deque's items.
pub type IterMut<'a, T> = crate::iter::VecIntoIter<&'a mut T>;
/// A range of a deque's items, drained.
pub type Drain<'a, T> = crate::iter::Drain<'a, T>;
