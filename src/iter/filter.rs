//! `filter` and `filter_map`: unindexed adaptors (a consumer wrapper each).

use super::plumbing::{Consumer, Folder, UnindexedConsumer};
use super::ParallelIterator;

/// The items for which a predicate holds ([`ParallelIterator::filter`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Filter<I, P> {
    base: I,
    predicate: P,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, P> std::fmt::Debug for Filter<I, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, P> Filter<I, P> {
    pub(super) fn new(base: I, predicate: P) -> Self {
        Filter { base, predicate }
    }
}

impl<I, P> ParallelIterator for Filter<I, P>
where
    I: ParallelIterator,
    P: Fn(&I::Item) -> bool + Sync + Send,
{
    type Item = I::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let Filter { base, predicate } = self;
        let op = |x: I::Item| predicate(&x).then_some(x);
        base.drive_unindexed(FilterMapConsumer {
            base: consumer,
            op: &op,
        })
    }
}

/// The `Some` results of a function ([`ParallelIterator::filter_map`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct FilterMap<I, F> {
    base: I,
    op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, F> std::fmt::Debug for FilterMap<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterMap")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, F> FilterMap<I, F> {
    pub(super) fn new(base: I, op: F) -> Self {
        FilterMap { base, op }
    }
}

impl<I, F, R> ParallelIterator for FilterMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> Option<R> + Sync + Send,
    R: Send,
{
    type Item = R;

    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        let FilterMap { base, op } = self;
        base.drive_unindexed(FilterMapConsumer {
            base: consumer,
            op: &op,
        })
    }
}

struct FilterMapConsumer<'f, C, F> {
    base: C,
    op: &'f F,
}

impl<'f, T, R, C, F> Consumer<T> for FilterMapConsumer<'f, C, F>
where
    F: Fn(T) -> Option<R> + Sync,
    C: Consumer<R>,
{
    type Folder = FilterMapFolder<'f, C::Folder, F>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = FilterMapConsumer {
            base: left_base,
            op: self.op,
        };
        let right = FilterMapConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FilterMapFolder {
            base: self.base.into_folder(),
            op: self.op,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, R, C, F> UnindexedConsumer<T> for FilterMapConsumer<'f, C, F>
where
    F: Fn(T) -> Option<R> + Sync,
    C: UnindexedConsumer<R>,
{
    fn split_off_left(&self) -> Self {
        FilterMapConsumer {
            base: self.base.split_off_left(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

struct FilterMapFolder<'f, G, F> {
    base: G,
    op: &'f F,
}

impl<T, R, G, F> Folder<T> for FilterMapFolder<'_, G, F>
where
    F: Fn(T) -> Option<R>,
    G: Folder<R>,
{
    type Result = G::Result;

    fn consume(self, item: T) -> Self {
        match (self.op)(item) {
            Some(r) => FilterMapFolder {
                base: self.base.consume(r),
                op: self.op,
            },
            None => self,
        }
    }
    // No `consume_iter` of its own: the default checks `full` after *every* item, kept or
    // not, so a short-circuiting consumer (`find_any`) below a filter that rejects a long run
    // of items still stops when another piece has found its item (rayon's
    // `filter_find_any_octillion`). Handing `base.consume_iter` a `filter_map` iterator would
    // check only after the items kept.
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}
