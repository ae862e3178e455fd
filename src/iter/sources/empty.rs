//! [`empty`](crate::iter::empty) and [`once`](crate::iter::once): no item, one item
//! (indexed).

use std::fmt;
use std::marker::PhantomData;

use super::option::OptionIter;
use crate::iter::plumbing::{Folder, ProducerCallback, UnindexedConsumer};
use crate::iter::{IndexedParallelIterator, ParallelIterator};

/// A parallel iterator with no items (rayon's `Empty`), made by
/// [`empty`](crate::iter::empty).
pub struct Empty<T> {
    marker: PhantomData<T>,
}

impl<T> Empty<T> {
    pub(crate) fn new() -> Self {
        Empty {
            marker: PhantomData,
        }
    }
}

impl<T> Clone for Empty<T> {
    fn clone(&self) -> Self {
        Empty::new()
    }
}

impl<T: Send> fmt::Debug for Empty<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Empty")
    }
}

impl<T: Send> ParallelIterator for Empty<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        consumer.into_folder().complete()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(0)
    }
}

impl<T: Send> IndexedParallelIterator for Empty<T> {
    fn len(&self) -> usize {
        0
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        callback.callback(OptionIter::from(None))
    }
}

/// A parallel iterator with exactly one item (rayon's `Once`), made by
/// [`once`](crate::iter::once).
#[derive(Clone, Debug)]
pub struct Once<T> {
    item: T,
}

impl<T> Once<T> {
    pub(crate) fn new(item: T) -> Self {
        Once { item }
    }
}

impl<T: Send> ParallelIterator for Once<T> {
    type Item = T;
    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        consumer.into_folder().consume(self.item).complete()
    }
    fn opt_len(&self) -> Option<usize> {
        Some(1)
    }
}

impl<T: Send> IndexedParallelIterator for Once<T> {
    fn len(&self) -> usize {
        1
    }
    fn with_producer<CB: ProducerCallback<T>>(self, callback: CB) -> CB::Output {
        callback.callback(OptionIter::from(Some(self.item)))
    }
}
