//! Maps, sets and the other std collections, by value and by reference: their items (or
//! references) are first collected into a `Vec`, then iterated in parallel.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, LinkedList, VecDeque};

use super::vec::VecIntoIter;
use crate::iter::IntoParallelIterator;

/// The iterator of a collection: its items gathered in a `Vec`.
pub type IntoIter<T> = VecIntoIter<T>;

macro_rules! via_vec {
    ($(impl[$($g:tt)*] $coll:ty => $item:ty;)*) => {$(
        impl<$($g)*> IntoParallelIterator for $coll {
            type Iter = VecIntoIter<$item>;
            type Item = $item;
            fn into_par_iter(self) -> VecIntoIter<$item> {
                VecIntoIter::from(self.into_iter().collect::<Vec<_>>())
            }
        }
    )*};
}

via_vec! {
    impl[K: Send, V: Send, S] HashMap<K, V, S> => (K, V);
    impl['a, K: Sync, V: Sync, S] &'a HashMap<K, V, S> => (&'a K, &'a V);
    impl['a, K: Sync, V: Send, S] &'a mut HashMap<K, V, S> => (&'a K, &'a mut V);
    impl[T: Send, S] HashSet<T, S> => T;
    impl['a, T: Sync, S] &'a HashSet<T, S> => &'a T;
    impl[K: Send, V: Send] BTreeMap<K, V> => (K, V);
    impl['a, K: Sync, V: Sync] &'a BTreeMap<K, V> => (&'a K, &'a V);
    impl['a, K: Sync, V: Send] &'a mut BTreeMap<K, V> => (&'a K, &'a mut V);
    impl[T: Send] BTreeSet<T> => T;
    impl['a, T: Sync] &'a BTreeSet<T> => &'a T;
    impl[T: Send] VecDeque<T> => T;
    impl['a, T: Sync] &'a VecDeque<T> => &'a T;
    impl['a, T: Send] &'a mut VecDeque<T> => &'a mut T;
    impl[T: Send] LinkedList<T> => T;
    impl['a, T: Sync] &'a LinkedList<T> => &'a T;
    impl['a, T: Send] &'a mut LinkedList<T> => &'a mut T;
    impl[T: Send] BinaryHeap<T> => T;
    impl['a, T: Sync] &'a BinaryHeap<T> => &'a T;
}
