//! Parallel operations on slices, as rayon's `ParallelSlice` and `ParallelSliceMut` name
//! them. (`par_iter` and `par_iter_mut` come, as in rayon, from
//! [`IntoParallelRefIterator`](crate::iter::IntoParallelRefIterator) and
//! [`IntoParallelRefMutIterator`](crate::iter::IntoParallelRefMutIterator).)

mod sort;

use std::cmp::Ordering;

pub use crate::iter::{ChunksIter, ChunksMutIter, SliceIter, SliceIterMut, WindowsIter};

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
