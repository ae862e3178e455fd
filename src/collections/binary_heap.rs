//! A `BinaryHeap`: by value, by reference, drained ([`ParallelDrainFull`](crate::iter::ParallelDrainFull)), in no specified order.

/// A heap's items, by value.
pub type IntoIter<T> = crate::iter::VecIntoIter<T>;
/// References to a heap's items.
pub type Iter<'a, T> = crate::iter::VecIntoIter<&'a T>;
/// A heap's items, drained.
pub type Drain<'a, T> = crate::iter::Drain<'a, T>;
