//! `take_any_while` and `skip_any_while`: items taken (or skipped) while a predicate holds;
//! once it fails for some item, in any piece, the pieces stop taking (or skipping), through
//! a shared flag.

use std::sync::atomic::{AtomicBool, Ordering};

use super::plumbing::{consume_until_full, Consumer, Folder, UnindexedConsumer};
use super::ParallelIterator;

/// Items until `predicate` fails for some item ([`ParallelIterator::take_any_while`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..100u32).into_par_iter().take_any_while(|&x| x < 50).collect();
/// assert!(v.iter().all(|&x| x < 50));
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct TakeAnyWhile<I, P> {
    base: I,
    predicate: P,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, P> std::fmt::Debug for TakeAnyWhile<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TakeAnyWhile")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// Items after `predicate` failed for some item ([`ParallelIterator::skip_any_while`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..100u32).into_par_iter().skip_any_while(|&x| x < 50).collect();
/// assert!(v.iter().filter(|&&x| x >= 50).count() == 50); // those are never skipped
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct SkipAnyWhile<I, P> {
    base: I,
    predicate: P,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, P> std::fmt::Debug for SkipAnyWhile<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkipAnyWhile")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, P> TakeAnyWhile<I, P> {
    pub(super) fn new(base: I, predicate: P) -> Self {
        TakeAnyWhile { base, predicate }
    }
}

impl<I, P> SkipAnyWhile<I, P> {
    pub(super) fn new(base: I, predicate: P) -> Self {
        SkipAnyWhile { base, predicate }
    }
}

impl<I, P> ParallelIterator for TakeAnyWhile<I, P>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let on = AtomicBool::new(true);
        self.base.drive_unindexed(WhileConsumer {
            base: consumer,
            predicate: &self.predicate,
            on: &on,
            take: true,
        })
    }
}

impl<I, P> ParallelIterator for SkipAnyWhile<I, P>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<I::Item>>(self, consumer: C) -> C::Result {
        let on = AtomicBool::new(true);
        self.base.drive_unindexed(WhileConsumer {
            base: consumer,
            predicate: &self.predicate,
            on: &on,
            take: false,
        })
    }
}

/// `on`: still taking (`take`) or skipping (otherwise).
struct WhileConsumer<'f, C, P> {
    base: C,
    predicate: &'f P,
    on: &'f AtomicBool,
    take: bool,
}

impl<'f, T, C: Consumer<T>, P: Fn(&T) -> bool + Sync> Consumer<T> for WhileConsumer<'f, C, P> {
    type Folder = WhileConsumer<'f, C::Folder, P>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = WhileConsumer {
            base: left_base,
            ..self
        };
        let right = WhileConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        WhileConsumer {
            base: self.base.into_folder(),
            predicate: self.predicate,
            on: self.on,
            take: self.take,
        }
    }
    fn full(&self) -> bool {
        (self.take && !self.on.load(Ordering::Relaxed)) || self.base.full()
    }
}

impl<'f, T, C: UnindexedConsumer<T>, P: Fn(&T) -> bool + Sync> UnindexedConsumer<T>
    for WhileConsumer<'f, C, P>
{
    fn split_off_left(&self) -> Self {
        WhileConsumer {
            base: self.base.split_off_left(),
            ..*self
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, G: Folder<T>, P: Fn(&T) -> bool> Folder<T> for WhileConsumer<'_, G, P> {
    type Result = G::Result;

    fn consume(mut self, item: T) -> Self {
        let on = self.on.load(Ordering::Relaxed) && (self.predicate)(&item);
        if !on {
            self.on.store(false, Ordering::Relaxed);
        }
        if on == self.take {
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
        (self.take && !self.on.load(Ordering::Relaxed)) || self.base.full()
    }
}
