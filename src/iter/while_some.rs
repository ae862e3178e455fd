//! `while_some`: the `Some` values of an iterator over options, until a `None` is seen (in
//! any piece: the pieces stop through a shared flag).

use std::sync::atomic::{AtomicBool, Ordering};

use super::plumbing::{consume_until_full, Consumer, Folder, UnindexedConsumer};
use super::ParallelIterator;

/// The `Some` values until a `None` ([`ParallelIterator::while_some`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u32> = (0..100u32)
///     .into_par_iter()
///     .map(|x| (x != 50).then_some(x))
///     .while_some()
///     .collect();
/// assert!(!v.contains(&50));
/// assert!(v.windows(2).all(|w| w[0] < w[1]));
/// ```
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct WhileSome<I> {
    base: I,
}

impl<I> WhileSome<I> {
    pub(super) fn new(base: I) -> Self {
        WhileSome { base }
    }
}

impl<I, T> ParallelIterator for WhileSome<I>
where
    I: ParallelIterator<Item = Option<T>>,
    T: Send,
{
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let done = AtomicBool::new(false);
        self.base.drive_unindexed(WhileSomeConsumer {
            base: consumer,
            done: &done,
        })
    }
}

struct WhileSomeConsumer<'f, C> {
    base: C,
    done: &'f AtomicBool,
}

impl<'f, T, C: Consumer<T>> Consumer<Option<T>> for WhileSomeConsumer<'f, C> {
    type Folder = WhileSomeConsumer<'f, C::Folder>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = WhileSomeConsumer {
            base: left_base,
            done: self.done,
        };
        let right = WhileSomeConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        WhileSomeConsumer {
            base: self.base.into_folder(),
            done: self.done,
        }
    }
    fn full(&self) -> bool {
        self.done.load(Ordering::Relaxed) || self.base.full()
    }
}

impl<'f, T, C: UnindexedConsumer<T>> UnindexedConsumer<Option<T>> for WhileSomeConsumer<'f, C> {
    fn split_off_left(&self) -> Self {
        WhileSomeConsumer {
            base: self.base.split_off_left(),
            done: self.done,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

impl<T, G: Folder<T>> Folder<Option<T>> for WhileSomeConsumer<'_, G> {
    type Result = G::Result;

    fn consume(mut self, item: Option<T>) -> Self {
        match item {
            Some(x) => self.base = self.base.consume(x),
            None => self.done.store(true, Ordering::Relaxed),
        }
        self
    }
    fn consume_iter<It: IntoIterator<Item = Option<T>>>(self, iter: It) -> Self {
        consume_until_full(self, iter)
    }
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.done.load(Ordering::Relaxed) || self.base.full()
    }
}
