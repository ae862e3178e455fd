//! A `BTreeMap`: its `(key, value)` pairs by value, by reference, with mutable values; in key order.

/// A map's pairs, by value.
pub type IntoIter<K, V> = crate::iter::VecIntoIter<(K, V)>;
/// References to a map's keys and values.
pub type Iter<'a, K, V> = crate::iter::VecIntoIter<(&'a K, &'a V)>;
/// References to a map's keys, mutable references to its values.
pub type IterMut<'a, K, V> = crate::iter::VecIntoIter<(&'a K, &'a mut V)>;
