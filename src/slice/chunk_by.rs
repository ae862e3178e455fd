//! `par_chunk_by` and `par_chunk_by_mut`: the runs of consecutive elements for which a
//! predicate holds pairwise, as `slice::chunk_by` yields them (unindexed; split between two
//! runs near the middle by the [fission](super::fission) engine).

use std::fmt;

use super::fission::{Fissile, FissionProducer};
use crate::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer};
use crate::iter::ParallelIterator;

/// A pairwise predicate, seen as a separator "between" two elements: position `i` separates
/// when the predicate is false for elements `i - 1` and `i`.
#[derive(Clone)]
pub(crate) struct Breaks<F>(F);

/// Whether `i` (`1..len`) starts a new run.
fn breaks_at<T, F: Fn(&T, &T) -> bool>(s: &[T], pred: &Breaks<F>, i: usize) -> bool {
    !(pred.0)(&s[i - 1], &s[i])
}

fn find_break<T, F: Fn(&T, &T) -> bool>(
    s: &[T],
    pred: &Breaks<F>,
    start: usize,
    end: usize,
) -> Option<usize> {
    (start.max(1)..end).find(|&i| breaks_at(s, pred, i))
}

fn rfind_break<T, F: Fn(&T, &T) -> bool>(s: &[T], pred: &Breaks<F>, end: usize) -> Option<usize> {
    (1..end).rev().find(|&i| breaks_at(s, pred, i))
}

impl<T: Sync, F: Fn(&T, &T) -> bool> Fissile<Breaks<F>> for &[T] {
    fn length(&self) -> usize {
        self.len()
    }

    fn midpoint(&self, end: usize) -> usize {
        end / 2
    }

    fn find(&self, sep: &Breaks<F>, start: usize, end: usize) -> Option<usize> {
        find_break(self, sep, start, end)
    }

    fn rfind(&self, sep: &Breaks<F>, end: usize) -> Option<usize> {
        rfind_break(self, sep, end)
    }

    fn cut(self, _: &Breaks<F>, pos: usize, _: bool) -> (Self, Self) {
        self.split_at(pos)
    }

    fn fold_pieces<Fo: Folder<Self>>(self, sep: &Breaks<F>, folder: Fo, _: bool, _: bool) -> Fo {
        folder.consume_iter(self.chunk_by(&sep.0))
    }
}

impl<T: Send, F: Fn(&T, &T) -> bool> Fissile<Breaks<F>> for &mut [T] {
    fn length(&self) -> usize {
        self.len()
    }

    fn midpoint(&self, end: usize) -> usize {
        end / 2
    }

    fn find(&self, sep: &Breaks<F>, start: usize, end: usize) -> Option<usize> {
        find_break(self, sep, start, end)
    }

    fn rfind(&self, sep: &Breaks<F>, end: usize) -> Option<usize> {
        rfind_break(self, sep, end)
    }

    fn cut(self, _: &Breaks<F>, pos: usize, _: bool) -> (Self, Self) {
        self.split_at_mut(pos)
    }

    fn fold_pieces<Fo: Folder<Self>>(self, sep: &Breaks<F>, folder: Fo, _: bool, _: bool) -> Fo {
        folder.consume_iter(self.chunk_by_mut(&sep.0))
    }
}

/// The runs of consecutive elements for which a predicate holds pairwise (unindexed;
/// [`ParallelSlice::par_chunk_by`](super::ParallelSlice::par_chunk_by)).
///
/// ```
/// use zonal::prelude::*;
/// let v = [1, 1, 2, 3, 3, 3];
/// let runs: Vec<&[i32]> = v.par_chunk_by(|a, b| a == b).collect();
/// assert_eq!(runs, [&[1, 1][..], &[2], &[3, 3, 3]]);
/// ```
#[must_use = "iterator adaptors are lazy"]
pub struct ChunkBy<'data, T, P> {
    slice: &'data [T],
    pred: Breaks<P>,
}

impl<'data, T, P> ChunkBy<'data, T, P> {
    pub(super) fn new(slice: &'data [T], pred: P) -> Self {
        ChunkBy {
            slice,
            pred: Breaks(pred),
        }
    }
}

impl<T, P: Clone> Clone for ChunkBy<'_, T, P> {
    fn clone(&self) -> Self {
        ChunkBy {
            slice: self.slice,
            pred: self.pred.clone(),
        }
    }
}

impl<T: fmt::Debug, P> fmt::Debug for ChunkBy<'_, T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkBy")
            .field("slice", &self.slice)
            .finish()
    }
}

impl<'data, T, P> ParallelIterator for ChunkBy<'data, T, P>
where
    T: Sync,
    P: Fn(&T, &T) -> bool + Send + Sync,
{
    type Item = &'data [T];

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge_unindexed(
            FissionProducer::new(self.slice, &self.pred, false, false),
            consumer,
        )
    }
}

/// The mutable runs of consecutive elements for which a predicate holds pairwise
/// (unindexed; [`ParallelSliceMut::par_chunk_by_mut`](super::ParallelSliceMut::par_chunk_by_mut)).
///
/// ```
/// use zonal::prelude::*;
/// let mut v = [1, 1, 2, 3, 3, 3];
/// v.par_chunk_by_mut(|a, b| a == b).for_each(|run| {
///     let n = run.len() as i32;
///     run.iter_mut().for_each(|x| *x *= n);
/// });
/// assert_eq!(v, [2, 2, 2, 9, 9, 9]);
/// ```
#[must_use = "iterator adaptors are lazy"]
pub struct ChunkByMut<'data, T, P> {
    slice: &'data mut [T],
    pred: Breaks<P>,
}

impl<'data, T, P> ChunkByMut<'data, T, P> {
    pub(super) fn new(slice: &'data mut [T], pred: P) -> Self {
        ChunkByMut {
            slice,
            pred: Breaks(pred),
        }
    }
}

impl<T: fmt::Debug, P> fmt::Debug for ChunkByMut<'_, T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkByMut")
            .field("slice", &self.slice)
            .finish()
    }
}

impl<'data, T, P> ParallelIterator for ChunkByMut<'data, T, P>
where
    T: Send,
    P: Fn(&T, &T) -> bool + Send + Sync,
{
    type Item = &'data mut [T];

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge_unindexed(
            FissionProducer::new(self.slice, &self.pred, false, false),
            consumer,
        )
    }
}
