//! `try_reduce` and `try_reduce_with` (and through them the `try_for_each` family):
//! reductions with a fallible operation over fallible items. The first failure seen stops
//! the whole computation early, through a shared flag.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use super::plumbing::{split_ignoring_index, Consumer, Folder, Reducer, UnindexedConsumer};
use super::{ParallelIterator, Try};

pub(super) fn try_reduce<I, R, T, ID, OP>(iter: I, identity: &ID, op: &OP) -> R
where
    I: ParallelIterator<Item = R>,
    R: Try<Output = T> + Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> R + Sync,
{
    let full = AtomicBool::new(false);
    iter.drive_unindexed(TryReduce {
        identity,
        op,
        full: &full,
    })
}

pub(super) fn try_reduce_with<I, R, T, OP>(iter: I, op: &OP) -> Option<R>
where
    I: ParallelIterator<Item = R>,
    R: Try<Output = T> + Send,
    OP: Fn(T, T) -> R + Sync,
{
    let full = AtomicBool::new(false);
    iter.drive_unindexed(TryReduceWith { op, full: &full })
}

/// Joins two branched results with `op`; a failure wins (the left one if both failed).
fn join<R: Try, OP: Fn(R::Output, R::Output) -> R>(op: &OP, left: R, right: R) -> R {
    match (left.branch(), right.branch()) {
        (ControlFlow::Continue(a), ControlFlow::Continue(b)) => op(a, b),
        (ControlFlow::Break(r), _) | (_, ControlFlow::Break(r)) => R::from_residual(r),
    }
}

struct TryReduce<'f, ID, OP> {
    identity: &'f ID,
    op: &'f OP,
    full: &'f AtomicBool,
}

impl<'f, R, T, ID, OP> Consumer<R> for TryReduce<'f, ID, OP>
where
    R: Try<Output = T> + Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> R + Sync,
{
    type Folder = TryReduceFolder<'f, OP, R>;
    type Reducer = Self;
    type Result = R;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<R, _>(self)
    }

    fn into_folder(self) -> Self::Folder {
        TryReduceFolder {
            op: self.op,
            control: ControlFlow::Continue((self.identity)()),
            full: self.full,
        }
    }
    fn full(&self) -> bool {
        // Relaxed: a hint to stop early; the failure travels through the reductions.
        self.full.load(Ordering::Relaxed)
    }
}

impl<'f, R, T, ID, OP> UnindexedConsumer<R> for TryReduce<'f, ID, OP>
where
    R: Try<Output = T> + Send,
    ID: Fn() -> T + Sync,
    OP: Fn(T, T) -> R + Sync,
{
    fn split_off_left(&self) -> Self {
        TryReduce { ..*self }
    }
    fn to_reducer(&self) -> Self {
        TryReduce { ..*self }
    }
}

impl<R, T, ID, OP> Reducer<R> for TryReduce<'_, ID, OP>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    fn reduce(self, left: R, right: R) -> R {
        join(self.op, left, right)
    }
}

struct TryReduceFolder<'f, OP, R: Try> {
    op: &'f OP,
    control: ControlFlow<R::Residual, R::Output>,
    full: &'f AtomicBool,
}

impl<R, T, OP> Folder<R> for TryReduceFolder<'_, OP, R>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    type Result = R;

    fn consume(mut self, item: R) -> Self {
        if let ControlFlow::Continue(acc) = self.control {
            self.control = match item.branch() {
                ControlFlow::Continue(x) => (self.op)(acc, x).branch(),
                ControlFlow::Break(r) => ControlFlow::Break(r),
            };
            if self.control.is_break() {
                self.full.store(true, Ordering::Relaxed);
            }
        }
        self
    }
    fn complete(self) -> R {
        match self.control {
            ControlFlow::Continue(acc) => R::from_output(acc),
            ControlFlow::Break(r) => R::from_residual(r),
        }
    }
    fn full(&self) -> bool {
        self.control.is_break() || self.full.load(Ordering::Relaxed)
    }
}

struct TryReduceWith<'f, OP> {
    op: &'f OP,
    full: &'f AtomicBool,
}

impl<'f, R, T, OP> Consumer<R> for TryReduceWith<'f, OP>
where
    R: Try<Output = T> + Send,
    OP: Fn(T, T) -> R + Sync,
{
    type Folder = TryReduceWithFolder<'f, OP, R>;
    type Reducer = Self;
    type Result = Option<R>;

    fn split_at(self, _index: usize) -> (Self, Self, Self::Reducer) {
        split_ignoring_index::<R, _>(self)
    }

    fn into_folder(self) -> Self::Folder {
        TryReduceWithFolder {
            op: self.op,
            control: None,
            full: self.full,
        }
    }
    fn full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }
}

impl<'f, R, T, OP> UnindexedConsumer<R> for TryReduceWith<'f, OP>
where
    R: Try<Output = T> + Send,
    OP: Fn(T, T) -> R + Sync,
{
    fn split_off_left(&self) -> Self {
        TryReduceWith { ..*self }
    }
    fn to_reducer(&self) -> Self {
        TryReduceWith { ..*self }
    }
}

impl<R, T, OP> Reducer<Option<R>> for TryReduceWith<'_, OP>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    fn reduce(self, left: Option<R>, right: Option<R>) -> Option<R> {
        match (left, right) {
            (Some(a), Some(b)) => Some(join(self.op, a, b)),
            (a, None) => a,
            (None, b) => b,
        }
    }
}

struct TryReduceWithFolder<'f, OP, R: Try> {
    op: &'f OP,
    control: Option<ControlFlow<R::Residual, R::Output>>,
    full: &'f AtomicBool,
}

impl<R, T, OP> Folder<R> for TryReduceWithFolder<'_, OP, R>
where
    R: Try<Output = T>,
    OP: Fn(T, T) -> R,
{
    type Result = Option<R>;

    fn consume(mut self, item: R) -> Self {
        self.control = Some(match self.control {
            None => item.branch(),
            Some(ControlFlow::Continue(acc)) => match item.branch() {
                ControlFlow::Continue(x) => (self.op)(acc, x).branch(),
                ControlFlow::Break(r) => ControlFlow::Break(r),
            },
            Some(done @ ControlFlow::Break(_)) => done,
        });
        if self.full() {
            self.full.store(true, Ordering::Relaxed);
        }
        self
    }
    fn complete(self) -> Option<R> {
        self.control.map(|c| match c {
            ControlFlow::Continue(acc) => R::from_output(acc),
            ControlFlow::Break(r) => R::from_residual(r),
        })
    }
    fn full(&self) -> bool {
        matches!(self.control, Some(ControlFlow::Break(_))) || self.full.load(Ordering::Relaxed)
    }
}
