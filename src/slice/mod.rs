//! Parallel operations on slices, as rayon's `ParallelSliceMut` names them.

mod sort;

use std::cmp::Ordering;

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
