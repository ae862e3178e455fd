//! `par_array_windows`: overlapping windows of `N` items as arrays `&[T; N]` (indexed: the
//! producer of `par_windows`, each window seen as an array, so they get the node cut).

use crate::iter::plumbing::{Producer, ProducerCallback, UnindexedConsumer};
use crate::iter::{IndexedParallelIterator, ParallelIterator, WindowsIter};

/// Overlapping windows of `N` items, as `&[T; N]` (indexed;
/// [`ParallelSlice::par_array_windows`](super::ParallelSlice::par_array_windows)).
/// Driving it panics if `N` is 0.
///
/// ```
/// use zonal::prelude::*;
/// let v = [1, 2, 3, 4];
/// let sums: Vec<i32> = v.par_array_windows().map(|[a, b]| a + b).collect();
/// assert_eq!(sums, [3, 5, 7]);
/// ```
#[derive(Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct ArrayWindows<'data, T: Sync, const N: usize> {
    slice: &'data [T],
}

impl<'data, T: Sync, const N: usize> ArrayWindows<'data, T, N> {
    pub(super) fn new(slice: &'data [T]) -> Self {
        ArrayWindows { slice }
    }
}

impl<T: Sync, const N: usize> Clone for ArrayWindows<'_, T, N> {
    fn clone(&self) -> Self {
        ArrayWindows { slice: self.slice }
    }
}

/// The producer: windows of `N` items, each converted to an array.
struct ArrayWindowsProducer<'data, T, const N: usize> {
    windows: WindowsIter<'data, T>,
}

/// A window of exactly `N` items as an array.
fn as_array<T, const N: usize>(window: &[T]) -> &[T; N] {
    window.try_into().expect("a window has N items")
}

impl<'data, T: Sync, const N: usize> Producer for ArrayWindowsProducer<'data, T, N> {
    type Item = &'data [T; N];
    type IntoIter = std::iter::Map<std::slice::Windows<'data, T>, fn(&'data [T]) -> &'data [T; N]>;
    fn into_iter(self) -> Self::IntoIter {
        Producer::into_iter(self.windows).map(as_array::<T, N>)
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.windows.split_at(index);
        (
            ArrayWindowsProducer { windows: a },
            ArrayWindowsProducer { windows: b },
        )
    }
}

impl<'data, T: Sync, const N: usize> ArrayWindows<'data, T, N> {
    fn producer(self) -> ArrayWindowsProducer<'data, T, N> {
        ArrayWindowsProducer {
            windows: WindowsIter::new(self.slice, N),
        }
    }
}

impl<'data, T: Sync + 'data, const N: usize> ParallelIterator for ArrayWindows<'data, T, N> {
    type Item = &'data [T; N];
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        crate::iter::plumbing::bridge_producer_consumer(len, self.producer(), consumer)
    }
    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl<'data, T: Sync + 'data, const N: usize> IndexedParallelIterator for ArrayWindows<'data, T, N> {
    fn len(&self) -> usize {
        (self.slice.len() + 1).saturating_sub(N.max(1))
    }
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(self.producer())
    }
}
