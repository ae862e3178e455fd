//! `Vec<T>` by value (and `&Vec`, `&mut Vec` through the slices).
//!
//! Without `unsafe`: the items are moved into a `Vec<Option<T>>` (in place when
//! `Option<T>` is as big as `T`), whose disjoint sub-slices the pieces take their items
//! from. Whatever is not taken — a consumer that stopped early, a panic — is dropped with
//! that vector, once.

use crate::iter::plumbing::{Producer, ProducerCallback, UnindexedConsumer};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// A parallel iterator over a `Vec`'s items, by value (indexed).
#[derive(Clone, Debug)]
pub struct VecIntoIter<T> {
    vec: Vec<T>,
}

impl<T: Send> IntoParallelIterator for Vec<T> {
    type Iter = VecIntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> VecIntoIter<T> {
        VecIntoIter { vec: self }
    }
}

impl<T: Send, const N: usize> IntoParallelIterator for [T; N] {
    type Iter = VecIntoIter<T>;
    type Item = T;
    fn into_par_iter(self) -> VecIntoIter<T> {
        VecIntoIter {
            vec: Vec::from(self),
        }
    }
}

impl<T: Send> From<Vec<T>> for VecIntoIter<T> {
    fn from(vec: Vec<T>) -> Self {
        VecIntoIter { vec }
    }
}

impl<T: Send> ParallelIterator for VecIntoIter<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(crate::iter::plumbing::BridgeCallback { len, consumer })
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.vec.len())
    }
}

impl<T: Send> IndexedParallelIterator for VecIntoIter<T> {
    fn len(&self) -> usize {
        self.vec.len()
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        let mut slots: Vec<Option<T>> = self.vec.into_iter().map(Some).collect();
        callback.callback(TakeProducer { slots: &mut slots })
        // `slots` drops here with whatever was not taken.
    }
}

/// Takes the items out of its sub-slice of the slots.
struct TakeProducer<'a, T> {
    slots: &'a mut [Option<T>],
}

impl<'a, T: Send> Producer for TakeProducer<'a, T> {
    type Item = T;
    type IntoIter = TakeIter<'a, T>;
    fn into_iter(self) -> TakeIter<'a, T> {
        TakeIter(self.slots.iter_mut())
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.slots.split_at_mut(index);
        (TakeProducer { slots: a }, TakeProducer { slots: b })
    }
}

struct TakeIter<'a, T>(std::slice::IterMut<'a, Option<T>>);

impl<T> Iterator for TakeIter<'_, T> {
    type Item = T;
    #[inline]
    fn next(&mut self) -> Option<T> {
        self.0
            .next()
            .map(|slot| slot.take().expect("every slot is taken once"))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<T> ExactSizeIterator for TakeIter<'_, T> {}

impl<T> DoubleEndedIterator for TakeIter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        self.0
            .next_back()
            .map(|slot| slot.take().expect("every slot is taken once"))
    }
}
