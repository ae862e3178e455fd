//! `par_chunks_exact` and `par_chunks_exact_mut`: chunks of exactly `size` items, the
//! leftover items kept aside as the remainder (indexed: their producer is the one of
//! `par_chunks` over the part of the slice that divides evenly, so they get the node cut).

use crate::iter::plumbing::{bridge, ProducerCallback, UnindexedConsumer};
use crate::iter::{ChunksIter, ChunksMutIter, IndexedParallelIterator, ParallelIterator};

/// Chunks of exactly `size` items; the last `len % size` items are left out, in
/// [`remainder`](Self::remainder) (indexed;
/// [`ParallelSlice::par_chunks_exact`](super::ParallelSlice::par_chunks_exact)).
///
/// ```
/// use zonal::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let chunks = v.par_chunks_exact(2);
/// assert_eq!(chunks.remainder(), &[5]);
/// let sums: Vec<i32> = chunks.map(|c| c.iter().sum()).collect();
/// assert_eq!(sums, [3, 7]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct ChunksExact<'data, T> {
    slice: &'data [T],
    rem: &'data [T],
    size: usize,
}

impl<'data, T> ChunksExact<'data, T> {
    pub(super) fn new(slice: &'data [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (slice, rem) = slice.split_at(slice.len() - slice.len() % size);
        ChunksExact { slice, rem, size }
    }

    /// The items left out: the last `len % size` of the slice.
    pub fn remainder(&self) -> &'data [T] {
        self.rem
    }
}

impl<T> Clone for ChunksExact<'_, T> {
    fn clone(&self) -> Self {
        ChunksExact { ..*self }
    }
}

impl<'data, T: Sync + 'data> ParallelIterator for ChunksExact<'data, T> {
    type Item = &'data [T];
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(ChunksIter::new(self.slice, self.size), consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<'data, T: Sync + 'data> IndexedParallelIterator for ChunksExact<'data, T> {
    fn len(&self) -> usize {
        self.slice.len() / self.size
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(ChunksIter::new(self.slice, self.size))
    }
}

/// Mutable chunks of exactly `size` items; the last `len % size` items are left out, in
/// [`into_remainder`](Self::into_remainder) (indexed;
/// [`ParallelSliceMut::par_chunks_exact_mut`](super::ParallelSliceMut::par_chunks_exact_mut)).
///
/// ```
/// use zonal::prelude::*;
/// let mut v = [1, 2, 3, 4, 5];
/// let mut chunks = v.par_chunks_exact_mut(2);
/// chunks.remainder()[0] = 0;
/// chunks.for_each(|c| c.swap(0, 1));
/// assert_eq!(v, [2, 1, 4, 3, 0]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct ChunksExactMut<'data, T> {
    slice: &'data mut [T],
    rem: &'data mut [T],
    size: usize,
}

impl<'data, T> ChunksExactMut<'data, T> {
    pub(super) fn new(slice: &'data mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let at = slice.len() - slice.len() % size;
        let (slice, rem) = slice.split_at_mut(at);
        ChunksExactMut { slice, rem, size }
    }

    /// The items left out (the last `len % size`), for the whole lifetime of the slice;
    /// consumes the iterator.
    pub fn into_remainder(self) -> &'data mut [T] {
        self.rem
    }

    /// The items left out (the last `len % size`), borrowed from the iterator.
    pub fn remainder(&mut self) -> &mut [T] {
        self.rem
    }

    /// Takes the items left out (the last `len % size`) out of the iterator, which keeps
    /// an empty remainder.
    pub fn take_remainder(&mut self) -> &'data mut [T] {
        std::mem::take(&mut self.rem)
    }
}

impl<'data, T: Send + 'data> ParallelIterator for ChunksExactMut<'data, T> {
    type Item = &'data mut [T];
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(ChunksMutIter::new(self.slice, self.size), consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<'data, T: Send + 'data> IndexedParallelIterator for ChunksExactMut<'data, T> {
    fn len(&self) -> usize {
        self.slice.len() / self.size
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(ChunksMutIter::new(self.slice, self.size))
    }
}
