//! A `HashMap`: its `(key, value)` pairs by value, by reference, with mutable values, drained ([`ParallelDrainFull`](crate::iter::ParallelDrainFull)); in no specified order.

/// A map's pairs, by value.
pub type IntoIter<K, V> = crate::iter::VecIntoIter<(K, V)>;
/// References to a map's keys and values.
pub type Iter<'a, K, V> = crate::iter::VecIntoIter<(&'a K, &'a V)>;
/// References to a map's keys, mutable references to its values.
pub type IterMut<'a, K, V> = crate::iter::VecIntoIter<(&'a K, &'a mut V)>;
/// A map's pairs, drained.
pub type Drain<'a, K, V> = crate::iter::Drain<'a, (K, V)>;
