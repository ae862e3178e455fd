//! `par_rchunks`, `par_rchunks_mut` and their `_exact` forms: chunks of `size` items taken
//! from the *end* of the slice, as `slice::rchunks` yields them (indexed: item `i` is the
//! `i`-th chunk from the end, and the producers split there, so they get the node cut).

use crate::iter::plumbing::{bridge, Producer, ProducerCallback, UnindexedConsumer};
use crate::iter::{IndexedParallelIterator, ParallelIterator};

/// The index-space plumbing of a type that is its own producer (of `len(s) EXPR` items,
/// `s` being `&self`: a producer has no length of its own, as in rayon).
macro_rules! own_producer {
    ([$($g:tt)*] $ty:ty, $item:ty, len($s:ident) $len:expr) => {
        impl<$($g)*> ParallelIterator for $ty {
            type Item = $item;
            fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
                bridge(self, consumer)
            }
            fn opt_len(&self) -> Option<usize> {
                Some(IndexedParallelIterator::len(self))
            }
        }

        impl<$($g)*> IndexedParallelIterator for $ty {
            fn len(&self) -> usize {
                let $s = self;
                $len
            }
            fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
                callback.callback(self)
            }
        }
    };
}

/// Where to cut a slice of `len` items so that the right part holds the last `index`
/// chunks of `size`.
fn cut_from_end(len: usize, size: usize, index: usize) -> usize {
    len.saturating_sub(index.saturating_mul(size))
}

/// Chunks of `size` items from the end of the slice, the last one (the slice's start)
/// possibly shorter (indexed; [`ParallelSlice::par_rchunks`](super::ParallelSlice::par_rchunks)).
///
/// ```
/// use zonal::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let chunks: Vec<&[i32]> = v.par_rchunks(2).collect();
/// assert_eq!(chunks, [&[4, 5][..], &[2, 3], &[1]]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct RChunks<'data, T> {
    slice: &'data [T],
    size: usize,
}

impl<'data, T> RChunks<'data, T> {
    pub(super) fn new(slice: &'data [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        RChunks { slice, size }
    }
}

impl<T> Clone for RChunks<'_, T> {
    fn clone(&self) -> Self {
        RChunks { ..*self }
    }
}

impl<'data, T: Sync> Producer for RChunks<'data, T> {
    type Item = &'data [T];
    type IntoIter = std::slice::RChunks<'data, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.rchunks(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (front, back) = self
            .slice
            .split_at(cut_from_end(self.slice.len(), self.size, index));
        (
            RChunks {
                slice: back,
                ..self
            },
            RChunks {
                slice: front,
                ..self
            },
        )
    }
}
own_producer!(['data, T: Sync + 'data] RChunks<'data, T>, &'data [T], len(it) it.slice.len().div_ceil(it.size));

/// Mutable chunks of `size` items from the end of the slice, the last one (the slice's
/// start) possibly shorter (indexed;
/// [`ParallelSliceMut::par_rchunks_mut`](super::ParallelSliceMut::par_rchunks_mut)).
///
/// ```
/// use zonal::prelude::*;
/// let mut v = [0; 5];
/// v.par_rchunks_mut(2).enumerate().for_each(|(i, c)| c.fill(i));
/// assert_eq!(v, [2, 1, 1, 0, 0]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct RChunksMut<'data, T> {
    slice: &'data mut [T],
    size: usize,
}

impl<'data, T> RChunksMut<'data, T> {
    pub(super) fn new(slice: &'data mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        RChunksMut { slice, size }
    }
}

impl<'data, T: Send> Producer for RChunksMut<'data, T> {
    type Item = &'data mut [T];
    type IntoIter = std::slice::RChunksMut<'data, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.rchunks_mut(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let size = self.size;
        let at = cut_from_end(self.slice.len(), size, index);
        let (front, back) = self.slice.split_at_mut(at);
        (
            RChunksMut { slice: back, size },
            RChunksMut { slice: front, size },
        )
    }
}
own_producer!(['data, T: Send + 'data] RChunksMut<'data, T>, &'data mut [T], len(it) it.slice.len().div_ceil(it.size));

/// Chunks of exactly `size` items from the end of the slice; the first `len % size` items
/// are left out, in [`remainder`](Self::remainder) (indexed;
/// [`ParallelSlice::par_rchunks_exact`](super::ParallelSlice::par_rchunks_exact)).
///
/// ```
/// use zonal::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let chunks = v.par_rchunks_exact(2);
/// assert_eq!(chunks.remainder(), &[1]);
/// let got: Vec<&[i32]> = chunks.collect();
/// assert_eq!(got, [&[4, 5][..], &[2, 3]]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct RChunksExact<'data, T> {
    chunks: RChunks<'data, T>,
    rem: &'data [T],
}

impl<'data, T> RChunksExact<'data, T> {
    pub(super) fn new(slice: &'data [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let (rem, slice) = slice.split_at(slice.len() % size);
        RChunksExact {
            chunks: RChunks::new(slice, size),
            rem,
        }
    }

    /// The items left out: the first `len % size` of the slice.
    pub fn remainder(&self) -> &'data [T] {
        self.rem
    }
}

impl<T> Clone for RChunksExact<'_, T> {
    fn clone(&self) -> Self {
        RChunksExact {
            chunks: self.chunks.clone(),
            rem: self.rem,
        }
    }
}

impl<'data, T: Sync + 'data> ParallelIterator for RChunksExact<'data, T> {
    type Item = &'data [T];
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self.chunks, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<'data, T: Sync + 'data> IndexedParallelIterator for RChunksExact<'data, T> {
    fn len(&self) -> usize {
        self.chunks.len()
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(self.chunks)
    }
}

/// Mutable chunks of exactly `size` items from the end of the slice; the first
/// `len % size` items are left out, in [`into_remainder`](Self::into_remainder) (indexed;
/// [`ParallelSliceMut::par_rchunks_exact_mut`](super::ParallelSliceMut::par_rchunks_exact_mut)).
///
/// ```
/// use zonal::prelude::*;
/// let mut v = [1, 2, 3, 4, 5];
/// let chunks = v.par_rchunks_exact_mut(2);
/// assert_eq!(chunks.into_remainder(), &mut [1]);
/// v.par_rchunks_exact_mut(2).for_each(|c| c.swap(0, 1));
/// assert_eq!(v, [1, 3, 2, 5, 4]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct RChunksExactMut<'data, T: Send> {
    chunks: RChunksMut<'data, T>,
    rem: &'data mut [T],
}

impl<'data, T: Send> RChunksExactMut<'data, T> {
    pub(super) fn new(slice: &'data mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        let at = slice.len() % size;
        let (rem, slice) = slice.split_at_mut(at);
        RChunksExactMut {
            chunks: RChunksMut::new(slice, size),
            rem,
        }
    }

    /// The items left out (the first `len % size`), for the whole lifetime of the slice;
    /// consumes the iterator.
    pub fn into_remainder(self) -> &'data mut [T] {
        self.rem
    }

    /// The items left out (the first `len % size`), borrowed from the iterator.
    pub fn remainder(&mut self) -> &mut [T] {
        self.rem
    }

    /// Takes the items left out (the first `len % size`) out of the iterator, which keeps
    /// an empty remainder.
    pub fn take_remainder(&mut self) -> &'data mut [T] {
        std::mem::take(&mut self.rem)
    }
}

impl<'data, T: Send + 'data> ParallelIterator for RChunksExactMut<'data, T> {
    type Item = &'data mut [T];
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self.chunks, consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<'data, T: Send + 'data> IndexedParallelIterator for RChunksExactMut<'data, T> {
    fn len(&self) -> usize {
        self.chunks.len()
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(self.chunks)
    }
}
