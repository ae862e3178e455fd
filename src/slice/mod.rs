//! Parallel operations on slices, as rayon's `ParallelSlice` and `ParallelSliceMut` name
//! them. (`par_iter` and `par_iter_mut` come, as in rayon, from
//! [`IntoParallelRefIterator`](crate::iter::IntoParallelRefIterator) and
//! [`IntoParallelRefMutIterator`](crate::iter::IntoParallelRefMutIterator).)

//!
//! The iterator types carry rayon's names here ([`Iter`], [`Chunks`], [`ChunksExact`],
//! [`RChunks`], [`Windows`], [`ChunkBy`], [`Split`], ...). The indexed ones (every chunked
//! or windowed view) split by index and get the node cut of
//! [`bridge_producer_consumer`](crate::iter::plumbing::bridge_producer_consumer); the ones
//! split at separators or between runs (`par_split*`, `par_chunk_by*`) are unindexed.

mod array_windows;
mod cached_key;
mod chunk_by;
mod chunks_exact;
mod fission;
mod rchunks;
mod sort;
mod split;

use std::cmp::Ordering;

pub use self::array_windows::ArrayWindows;
pub use self::chunk_by::{ChunkBy, ChunkByMut};
pub use self::chunks_exact::{ChunksExact, ChunksExactMut};
pub(crate) use self::fission::{Fissile, FissionProducer};
pub use self::rchunks::{RChunks, RChunksExact, RChunksExactMut, RChunksMut};
pub use self::split::{Split, SplitInclusive, SplitInclusiveMut, SplitMut};
pub use crate::iter::{ChunksIter, ChunksMutIter, SliceIter, SliceIterMut, WindowsIter};

/// rayon's name for [`SliceIter`]: `&T` of a slice.
pub type Iter<'data, T> = SliceIter<'data, T>;
/// rayon's name for [`SliceIterMut`]: `&mut T` of a slice.
pub type IterMut<'data, T> = SliceIterMut<'data, T>;
/// rayon's name for [`ChunksIter`]: [`ParallelSlice::par_chunks`].
pub type Chunks<'data, T> = ChunksIter<'data, T>;
/// rayon's name for [`ChunksMutIter`]: [`ParallelSliceMut::par_chunks_mut`].
pub type ChunksMut<'data, T> = ChunksMutIter<'data, T>;
/// rayon's name for [`WindowsIter`]: [`ParallelSlice::par_windows`].
pub type Windows<'data, T> = WindowsIter<'data, T>;

/// Parallel views of a shared slice (rayon's names; `use zonal::prelude::*`).
///
/// ```
/// use zonal::prelude::*;
/// let v = [1, 2, 3, 4, 5];
/// let sums: Vec<i32> = v.par_chunks(2).map(|c| c.iter().sum()).collect();
/// assert_eq!(sums, [3, 7, 5]);
/// let pairs: Vec<i32> = v.par_windows(2).map(|w| w[0] * w[1]).collect();
/// assert_eq!(pairs, [2, 6, 12, 20]);
/// ```
pub trait ParallelSlice<T: Sync> {
    /// The slice itself.
    fn as_parallel_slice(&self) -> &[T];

    /// Chunks of exactly `size` items, the last one possibly shorter, in parallel.
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_chunks(&self, size: usize) -> ChunksIter<'_, T> {
        ChunksIter::new(self.as_parallel_slice(), size)
    }

    /// Overlapping windows of `size` items, in parallel.
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_windows(&self, size: usize) -> WindowsIter<'_, T> {
        WindowsIter::new(self.as_parallel_slice(), size)
    }

    /// Overlapping windows of `N` items, as arrays, in parallel.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let windows: Vec<&[i32; 2]> = [1, 2, 3].par_array_windows().collect();
    /// assert_eq!(windows, [&[1, 2], &[2, 3]]);
    /// ```
    ///
    /// # Panics
    /// When driven, if `N` is 0.
    fn par_array_windows<const N: usize>(&self) -> ArrayWindows<'_, T, N> {
        ArrayWindows::new(self.as_parallel_slice())
    }

    /// Chunks of exactly `size` items, in parallel; the last `len % size` items are left
    /// out ([`ChunksExact::remainder`]).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let chunks: Vec<&[i32]> = [1, 2, 3, 4, 5].par_chunks_exact(2).collect();
    /// assert_eq!(chunks, [&[1, 2][..], &[3, 4]]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_chunks_exact(&self, size: usize) -> ChunksExact<'_, T> {
        ChunksExact::new(self.as_parallel_slice(), size)
    }

    /// Chunks of `size` items from the end, the last one possibly shorter, in parallel.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let chunks: Vec<&[i32]> = [1, 2, 3, 4, 5].par_rchunks(2).collect();
    /// assert_eq!(chunks, [&[4, 5][..], &[2, 3], &[1]]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_rchunks(&self, size: usize) -> RChunks<'_, T> {
        RChunks::new(self.as_parallel_slice(), size)
    }

    /// Chunks of exactly `size` items from the end, in parallel; the first `len % size`
    /// items are left out ([`RChunksExact::remainder`]).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let chunks: Vec<&[i32]> = [1, 2, 3, 4, 5].par_rchunks_exact(2).collect();
    /// assert_eq!(chunks, [&[4, 5][..], &[2, 3]]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_rchunks_exact(&self, size: usize) -> RChunksExact<'_, T> {
        RChunksExact::new(self.as_parallel_slice(), size)
    }

    /// The runs of consecutive elements for which `pred` holds pairwise, in parallel (as
    /// `slice::chunk_by`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let runs: Vec<&[i32]> = [1, 2, 2, 5, 6].par_chunk_by(|a, b| a <= b).collect();
    /// assert_eq!(runs, [&[1, 2, 2, 5, 6][..]]);
    /// let runs: Vec<&[i32]> = [3, 1, 2, 0].par_chunk_by(|a, b| a < b).collect();
    /// assert_eq!(runs, [&[3][..], &[1, 2], &[0]]);
    /// ```
    fn par_chunk_by<F>(&self, pred: F) -> ChunkBy<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkBy::new(self.as_parallel_slice(), pred)
    }

    /// The subslices between elements matching `separator`, in parallel (as
    /// `slice::split`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let parts: Vec<&[i32]> = [1, 0, 2, 3, 0].par_split(|x| *x == 0).collect();
    /// assert_eq!(parts, [&[1][..], &[2, 3], &[]]);
    /// ```
    fn par_split<P>(&self, separator: P) -> Split<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        Split::new(self.as_parallel_slice(), separator)
    }

    /// The subslices ending with an element matching `separator` (or with the slice's end),
    /// in parallel (as `slice::split_inclusive`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let parts: Vec<&[i32]> = [1, 0, 2, 3, 0].par_split_inclusive(|x| *x == 0).collect();
    /// assert_eq!(parts, [&[1, 0][..], &[2, 3, 0]]);
    /// ```
    fn par_split_inclusive<P>(&self, separator: P) -> SplitInclusive<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusive::new(self.as_parallel_slice(), separator)
    }
}

impl<T: Sync> ParallelSlice<T> for [T] {
    #[inline]
    fn as_parallel_slice(&self) -> &[T] {
        self
    }
}

/// Parallel sorts of a mutable slice (rayon's names; `use zonal::prelude::*`).
///
/// ```
/// use zonal::slice::ParallelSliceMut;
/// let mut v = vec![5, 3, 9, 1];
/// v.par_sort();
/// assert_eq!(v, [1, 3, 5, 9]);
/// let mut w = vec![(2, 'a'), (1, 'b'), (2, 'c')];
/// w.par_sort_by_key(|p| p.0); // stable: 'a' stays before 'c'
/// assert_eq!(w, [(1, 'b'), (2, 'a'), (2, 'c')]);
/// ```
pub trait ParallelSliceMut<T: Send> {
    /// The slice itself.
    fn as_parallel_slice_mut(&mut self) -> &mut [T];

    /// Mutable chunks of exactly `size` items, the last one possibly shorter, in parallel.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = vec![0; 5];
    /// v.par_chunks_mut(2).enumerate().for_each(|(i, c)| c.fill(i));
    /// assert_eq!(v, [0, 0, 1, 1, 2]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_chunks_mut(&mut self, size: usize) -> ChunksMutIter<'_, T> {
        ChunksMutIter::new(self.as_parallel_slice_mut(), size)
    }

    /// Mutable chunks of exactly `size` items, in parallel; the last `len % size` items are
    /// left out ([`ChunksExactMut::into_remainder`]).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// v.par_chunks_exact_mut(2).for_each(|c| c.reverse());
    /// assert_eq!(v, [2, 1, 4, 3, 5]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_chunks_exact_mut(&mut self, size: usize) -> ChunksExactMut<'_, T> {
        ChunksExactMut::new(self.as_parallel_slice_mut(), size)
    }

    /// Mutable chunks of `size` items from the end, the last one possibly shorter, in
    /// parallel.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// v.par_rchunks_mut(2).for_each(|c| c.reverse());
    /// assert_eq!(v, [1, 3, 2, 5, 4]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_rchunks_mut(&mut self, size: usize) -> RChunksMut<'_, T> {
        RChunksMut::new(self.as_parallel_slice_mut(), size)
    }

    /// Mutable chunks of exactly `size` items from the end, in parallel; the first
    /// `len % size` items are left out ([`RChunksExactMut::into_remainder`]).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [1, 2, 3, 4, 5];
    /// v.par_rchunks_exact_mut(2).for_each(|c| c.fill(0));
    /// assert_eq!(v, [1, 0, 0, 0, 0]);
    /// ```
    ///
    /// # Panics
    /// If `size` is 0.
    fn par_rchunks_exact_mut(&mut self, size: usize) -> RChunksExactMut<'_, T> {
        RChunksExactMut::new(self.as_parallel_slice_mut(), size)
    }

    /// The mutable runs of consecutive elements for which `pred` holds pairwise, in
    /// parallel (as `slice::chunk_by_mut`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [1, 1, 2, 3, 3];
    /// v.par_chunk_by_mut(|a, b| a == b).for_each(|run| run[0] = 0);
    /// assert_eq!(v, [0, 1, 0, 0, 3]);
    /// ```
    fn par_chunk_by_mut<F>(&mut self, pred: F) -> ChunkByMut<'_, T, F>
    where
        F: Fn(&T, &T) -> bool + Send + Sync,
    {
        ChunkByMut::new(self.as_parallel_slice_mut(), pred)
    }

    /// The mutable subslices between elements matching `separator`, in parallel (as
    /// `slice::split_mut`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [3, 0, 2, 1, 0, 5];
    /// v.par_split_mut(|x| *x == 0).for_each(|part| part.sort());
    /// assert_eq!(v, [3, 0, 1, 2, 0, 5]);
    /// ```
    fn par_split_mut<P>(&mut self, separator: P) -> SplitMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// The mutable subslices ending with an element matching `separator` (or with the
    /// slice's end), in parallel (as `slice::split_inclusive_mut`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [3, 0, 2, 1, 0, 5];
    /// v.par_split_inclusive_mut(|x| *x == 0).for_each(|part| part.sort());
    /// assert_eq!(v, [0, 3, 0, 1, 2, 5]);
    /// ```
    fn par_split_inclusive_mut<P>(&mut self, separator: P) -> SplitInclusiveMut<'_, T, P>
    where
        P: Fn(&T) -> bool + Sync + Send,
    {
        SplitInclusiveMut::new(self.as_parallel_slice_mut(), separator)
    }

    /// Sorts stably, in parallel.
    fn par_sort(&mut self)
    where
        T: Ord,
    {
        sort::par_merge_sort(self.as_parallel_slice_mut(), &T::cmp);
    }

    /// Sorts stably by a comparison, in parallel.
    fn par_sort_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        sort::par_merge_sort(self.as_parallel_slice_mut(), &compare);
    }

    /// Sorts stably by a key, in parallel.
    fn par_sort_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        sort::par_merge_sort(self.as_parallel_slice_mut(), &|a: &T, b: &T| {
            f(a).cmp(&f(b))
        });
    }

    /// Sorts stably by a key, in parallel, calling `f` once per element (the keys are
    /// computed in parallel and cached: for expensive keys).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let mut v = [-5i32, 4, 32, -3, 2];
    /// v.par_sort_by_cached_key(|k| k.to_string());
    /// assert_eq!(v, [-3, -5, 2, 32, 4]);
    /// ```
    fn par_sort_by_cached_key<K, F>(&mut self, f: F)
    where
        F: Fn(&T) -> K + Sync,
        K: Ord + Send,
    {
        cached_key::par_sort_by_cached_key(self.as_parallel_slice_mut(), f);
    }

    /// Sorts without keeping the order of equal elements, in parallel.
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        sort::par_quicksort(self.as_parallel_slice_mut(), &T::cmp);
    }

    /// Sorts by a comparison without keeping the order of equal elements, in parallel.
    fn par_sort_unstable_by<F>(&mut self, compare: F)
    where
        F: Fn(&T, &T) -> Ordering + Sync,
    {
        sort::par_quicksort(self.as_parallel_slice_mut(), &compare);
    }

    /// Sorts by a key without keeping the order of equal elements, in parallel.
    fn par_sort_unstable_by_key<K, F>(&mut self, f: F)
    where
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        sort::par_quicksort(self.as_parallel_slice_mut(), &|a: &T, b: &T| {
            f(a).cmp(&f(b))
        });
    }
}

impl<T: Send> ParallelSliceMut<T> for [T] {
    #[inline]
    fn as_parallel_slice_mut(&mut self) -> &mut [T] {
        self
    }
}
