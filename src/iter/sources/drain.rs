//! Draining ([`ParallelDrainRange`], [`ParallelDrainFull`]): `par_drain` moves items out of
//! a collection, which keeps the rest, as std's `drain`.
//!
//! Without `unsafe`: `par_drain` drains the items with std's `drain` into a `Vec` at once,
//! which the returned [`Drain`] then iterates by value (indexed). The cost is one
//! allocation and one move of the drained items, before any parallel work; in return the
//! collection is left as std's `drain` leaves it as soon as `par_drain` returns, whatever
//! happens next: the [`Drain`] dropped unused or half used, a consumer that stops early or
//! panics. Every drained item is yielded or dropped exactly once, by the [`Drain`].

use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::marker::PhantomData;
use std::ops::RangeBounds;

use super::vec::VecIntoIter;
use crate::iter::plumbing::{ProducerCallback, UnindexedConsumer};
use crate::iter::{IndexedParallelIterator, ParallelIterator};

/// Collections that can drain a range of their items in parallel (rayon's
/// `ParallelDrainRange`): `Vec`, `VecDeque` and `String` (its chars; the range is in bytes).
///
/// ```
/// use zonal::prelude::*;
/// let mut v: Vec<u32> = (0..10).collect();
/// let drained: Vec<u32> = v.par_drain(2..5).map(|x| x * 10).collect();
/// assert_eq!(drained, [20, 30, 40]);
/// assert_eq!(v, [0, 1, 5, 6, 7, 8, 9]);
/// let mut s = String::from("héllo");
/// assert_eq!(s.par_drain(..3).collect::<String>(), "hé");
/// assert_eq!(s, "llo");
/// ```
pub trait ParallelDrainRange<Idx = usize> {
    /// The draining iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The items drained.
    type Item: Send;

    /// Removes the items in `range` and iterates over them; the collection keeps the
    /// others (even if the iterator is dropped unused or a consumer panics).
    ///
    /// # Panics
    /// As std's `drain`: if the range is out of bounds (or, for a `String`, not on char
    /// boundaries).
    fn par_drain<R: RangeBounds<Idx>>(self, range: R) -> Self::Iter;
}

/// Collections that can drain all their items in parallel (rayon's `ParallelDrainFull`):
/// `HashMap`, `HashSet` and `BinaryHeap` (in an unspecified order).
///
/// ```
/// use zonal::prelude::*;
/// use std::collections::HashSet;
/// let mut set: HashSet<u32> = (1..=4).collect();
/// assert_eq!(set.par_drain().sum::<u32>(), 10);
/// assert!(set.is_empty());
/// ```
pub trait ParallelDrainFull {
    /// The draining iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// The items drained.
    type Item: Send;

    /// Removes every item and iterates over them; the collection is left empty (even if
    /// the iterator is dropped unused or a consumer panics).
    fn par_drain(self) -> Self::Iter;
}

/// A parallel iterator over the items drained from a collection, by value (rayon's
/// `vec::Drain`, and the `Drain` of the other collections): indexed. Made by
/// [`ParallelDrainRange::par_drain`] or [`ParallelDrainFull::par_drain`].
#[derive(Debug)]
pub struct Drain<'a, T> {
    items: VecIntoIter<T>,
    /// Holds the collection's borrow, as rayon's `Drain` does.
    marker: PhantomData<&'a mut Vec<T>>,
}

impl<T: Send> Drain<'_, T> {
    fn new(items: Vec<T>) -> Self {
        Drain {
            items: VecIntoIter::from(items),
            marker: PhantomData,
        }
    }
}

impl<T: Send> ParallelIterator for Drain<'_, T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        self.items.drive_unindexed(consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        self.items.opt_len()
    }
}

impl<T: Send> IndexedParallelIterator for Drain<'_, T> {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        self.items.with_producer(callback)
    }
}

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut Vec<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a, T> {
        Drain::new(self.drain(range).collect())
    }
}

impl<'a, T: Send> ParallelDrainRange<usize> for &'a mut VecDeque<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a, T> {
        Drain::new(self.drain(range).collect())
    }
}

impl<'a> ParallelDrainRange<usize> for &'a mut String {
    type Iter = Drain<'a, char>;
    type Item = char;
    fn par_drain<R: RangeBounds<usize>>(self, range: R) -> Drain<'a, char> {
        Drain::new(self.drain(range).collect())
    }
}

impl<'a, K: Send, V: Send, S> ParallelDrainFull for &'a mut HashMap<K, V, S> {
    type Iter = Drain<'a, (K, V)>;
    type Item = (K, V);
    fn par_drain(self) -> Drain<'a, (K, V)> {
        Drain::new(self.drain().collect())
    }
}

impl<'a, T: Send, S> ParallelDrainFull for &'a mut HashSet<T, S> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain(self) -> Drain<'a, T> {
        Drain::new(self.drain().collect())
    }
}

impl<'a, T: Ord + Send> ParallelDrainFull for &'a mut BinaryHeap<T> {
    type Iter = Drain<'a, T>;
    type Item = T;
    fn par_drain(self) -> Drain<'a, T> {
        Drain::new(self.drain().collect())
    }
}
