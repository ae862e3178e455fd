//! Slices: `&[T]`, `&mut [T]` (and `&Vec<T>`, `&mut Vec<T>`, `&Box<[T]>`, arrays), and the
//! chunked and windowed views of [`ParallelSlice`](crate::slice::ParallelSlice) and
//! [`ParallelSliceMut`](crate::slice::ParallelSliceMut).

use crate::iter::plumbing::{Producer, ProducerCallback};
use crate::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

/// Every indexed source here: the iterator is its own producer; `len(s) EXPR` is its
/// length (`s` is `&self`; a producer has no length of its own, as in rayon).
macro_rules! self_producer {
    ([$($g:tt)*] $ty:ty, $item:ty, len($s:ident) $len:expr) => {
        impl<$($g)*> ParallelIterator for $ty {
            type Item = $item;
            fn drive_unindexed<C>(self, consumer: C) -> C::Result
            where
                C: $crate::iter::plumbing::UnindexedConsumer<Self::Item>,
            {
                let len = IndexedParallelIterator::len(&self);
                $crate::iter::plumbing::bridge_producer_consumer(len, self, consumer)
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
pub(super) use self_producer;

/// A parallel iterator over `&T` of a slice (indexed).
#[derive(Debug)]
pub struct SliceIter<'a, T> {
    slice: &'a [T],
}

impl<T> Clone for SliceIter<'_, T> {
    fn clone(&self) -> Self {
        SliceIter { slice: self.slice }
    }
}

impl<'a, T: Sync> Producer for SliceIter<'a, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.slice.split_at(index);
        (SliceIter { slice: a }, SliceIter { slice: b })
    }
}
self_producer!(['a, T: Sync + 'a] SliceIter<'a, T>, &'a T, len(it) it.slice.len());

/// A parallel iterator over `&mut T` of a slice (indexed).
#[derive(Debug)]
pub struct SliceIterMut<'a, T> {
    slice: &'a mut [T],
}

impl<'a, T: Send> Producer for SliceIterMut<'a, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.iter_mut()
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.slice.split_at_mut(index);
        (SliceIterMut { slice: a }, SliceIterMut { slice: b })
    }
}
self_producer!(['a, T: Send + 'a] SliceIterMut<'a, T>, &'a mut T, len(it) it.slice.len());

impl<'a, T> From<&'a [T]> for SliceIter<'a, T> {
    fn from(slice: &'a [T]) -> Self {
        SliceIter { slice }
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a [T] {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter { slice: self }
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a Vec<T> {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter { slice: self }
    }
}

impl<'a, T: Sync + 'a, const N: usize> IntoParallelIterator for &'a [T; N] {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter { slice: self }
    }
}

impl<'a, T: Sync + 'a> IntoParallelIterator for &'a Box<[T]> {
    type Iter = SliceIter<'a, T>;
    type Item = &'a T;
    fn into_par_iter(self) -> SliceIter<'a, T> {
        SliceIter { slice: self }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut Box<[T]> {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut { slice: self }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut [T] {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut { slice: self }
    }
}

impl<'a, T: Send + 'a> IntoParallelIterator for &'a mut Vec<T> {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut { slice: self }
    }
}

impl<'a, T: Send + 'a, const N: usize> IntoParallelIterator for &'a mut [T; N] {
    type Iter = SliceIterMut<'a, T>;
    type Item = &'a mut T;
    fn into_par_iter(self) -> SliceIterMut<'a, T> {
        SliceIterMut { slice: self }
    }
}

/// Chunks of exactly `size` items of a slice, the last one possibly shorter (indexed;
/// [`ParallelSlice::par_chunks`](crate::slice::ParallelSlice::par_chunks)).
#[derive(Debug)]
pub struct ChunksIter<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T> ChunksIter<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        ChunksIter { slice, size }
    }
}

impl<T> Clone for ChunksIter<'_, T> {
    fn clone(&self) -> Self {
        ChunksIter { ..*self }
    }
}

impl<'a, T: Sync> Producer for ChunksIter<'a, T> {
    type Item = &'a [T];
    type IntoIter = std::slice::Chunks<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.slice.len());
        let (a, b) = self.slice.split_at(at);
        (
            ChunksIter { slice: a, ..self },
            ChunksIter { slice: b, ..self },
        )
    }
}
self_producer!(['a, T: Sync + 'a] ChunksIter<'a, T>, &'a [T], len(it) it.slice.len().div_ceil(it.size));

/// Mutable chunks of exactly `size` items, the last one possibly shorter (indexed;
/// [`ParallelSliceMut::par_chunks_mut`](crate::slice::ParallelSliceMut::par_chunks_mut)).
#[derive(Debug)]
pub struct ChunksMutIter<'a, T> {
    slice: &'a mut [T],
    size: usize,
}

impl<'a, T> ChunksMutIter<'a, T> {
    pub(crate) fn new(slice: &'a mut [T], size: usize) -> Self {
        assert!(size != 0, "chunk size must be non-zero");
        ChunksMutIter { slice, size }
    }
}

impl<'a, T: Send> Producer for ChunksMutIter<'a, T> {
    type Item = &'a mut [T];
    type IntoIter = std::slice::ChunksMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.chunks_mut(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let at = index.saturating_mul(self.size).min(self.slice.len());
        let (a, b) = self.slice.split_at_mut(at);
        let size = self.size;
        (
            ChunksMutIter { slice: a, size },
            ChunksMutIter { slice: b, size },
        )
    }
}
self_producer!(['a, T: Send + 'a] ChunksMutIter<'a, T>, &'a mut [T], len(it) it.slice.len().div_ceil(it.size));

/// Overlapping windows of `size` items (indexed;
/// [`ParallelSlice::par_windows`](crate::slice::ParallelSlice::par_windows)).
#[derive(Debug)]
pub struct WindowsIter<'a, T> {
    slice: &'a [T],
    size: usize,
}

impl<'a, T> WindowsIter<'a, T> {
    pub(crate) fn new(slice: &'a [T], size: usize) -> Self {
        assert!(size != 0, "window size must be non-zero");
        WindowsIter { slice, size }
    }
}

impl<T> Clone for WindowsIter<'_, T> {
    fn clone(&self) -> Self {
        WindowsIter { ..*self }
    }
}

impl<'a, T: Sync> Producer for WindowsIter<'a, T> {
    type Item = &'a [T];
    type IntoIter = std::slice::Windows<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.slice.windows(self.size)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        // Window `i` covers `i .. i + size`: the left part needs `..index + size - 1`.
        let end = (index + self.size - 1).min(self.slice.len());
        let start = index.min(self.slice.len());
        (
            WindowsIter {
                slice: &self.slice[..end],
                size: self.size,
            },
            WindowsIter {
                slice: &self.slice[start..],
                size: self.size,
            },
        )
    }
}
self_producer!(['a, T: Sync + 'a] WindowsIter<'a, T>, &'a [T], len(it) (it.slice.len() + 1).saturating_sub(it.size));
