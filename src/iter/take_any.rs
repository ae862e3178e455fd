//! `take_any` and `skip_any`: `n` items taken (or skipped), whichever the pieces reach
//! first, counted through a shared counter; the others are skipped (or taken). Every item is
//! either passed on or dropped, exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::plumbing::{consume_until_full, Consumer, Folder, UnindexedConsumer};
use super::ParallelIterator;

/// `n` items, not necessarily the first ([`ParallelIterator::take_any`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..100u32).into_par_iter().take_any(10).collect();
/// assert_eq!(v.len(), 10);
/// assert!(v.windows(2).all(|w| w[0] < w[1])); // in order, though not the first ten
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct TakeAny<I> {
    base: I,
    count: usize,
}

/// All but `n` items, not necessarily the first ([`ParallelIterator::skip_any`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..100u32).into_par_iter().skip_any(10).collect();
/// assert_eq!(v.len(), 90);
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct SkipAny<I> {
    base: I,
    count: usize,
}

impl<I> TakeAny<I> {
    pub(super) fn new(base: I, count: usize) -> Self {
        TakeAny { base, count }
    }
}

impl<I> SkipAny<I> {
    pub(super) fn new(base: I, count: usize) -> Self {
        SkipAny { base, count }
    }
}

/// Claims one of the `n` slots; false when all are gone.
fn claim(taken: &AtomicUsize, n: usize) -> bool {
    taken
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
            (c < n).then_some(c + 1)
        })
        .is_ok()
}

impl<I: ParallelIterator> ParallelIterator for TakeAny<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let taken = AtomicUsize::new(0);
        self.base.drive_unindexed(AnyConsumer {
            base: consumer,
            n: self.count,
            taken: &taken,
            take: true,
        })
    }
}

impl<I: ParallelIterator> ParallelIterator for SkipAny<I> {
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let taken = AtomicUsize::new(0);
        self.base.drive_unindexed(AnyConsumer {
            base: consumer,
            n: self.count,
            taken: &taken,
            take: false,
        })
    }
}

/// `take`: claimed items are passed on (and the rest dropped); otherwise claimed items are
/// dropped (and the rest passed on).
struct AnyConsumer<'f, C> {
    base: C,
    n: usize,
    taken: &'f AtomicUsize,
    take: bool,
}

impl<'f, T, C: Consumer<T>> Consumer<T> for AnyConsumer<'f, C> {
    type Folder = AnyConsumer<'f, C::Folder>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = AnyConsumer {
            base: left_base,
            ..self
        };
        let right = AnyConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        AnyConsumer {
            base: self.base.into_folder(),
            n: self.n,
            taken: self.taken,
            take: self.take,
        }
    }
    fn full(&self) -> bool {
        (self.take && self.taken.load(Ordering::Relaxed) >= self.n) || self.base.full()
    }
}

impl<'f, T, C: UnindexedConsumer<T>> UnindexedConsumer<T> for AnyConsumer<'f, C> {
    fn split_off_left(&self) -> Self {
        AnyConsumer {
            base: self.base.split_off_left(),
            ..*self
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, G: Folder<T>> Folder<T> for AnyConsumer<'_, G> {
    type Result = G::Result;

    fn consume(mut self, item: T) -> Self {
        if claim(self.taken, self.n) == self.take {
            self.base = self.base.consume(item);
        }
        self
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        consume_until_full(self, iter)
    }
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        (self.take && self.taken.load(Ordering::Relaxed) >= self.n) || self.base.full()
    }
}
