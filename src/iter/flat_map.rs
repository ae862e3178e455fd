//! `flat_map` (inner parallel iterators) and `flat_map_iter` (inner sequential iterators).

use super::plumbing::{Consumer, Folder, Reducer, UnindexedConsumer};
use super::{IntoParallelIterator, ParallelIterator};

/// Items mapped to parallel iterators, flattened in order ([`ParallelIterator::flat_map`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct FlatMap<I, F> {
    base: I,
    op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, F> std::fmt::Debug for FlatMap<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatMap")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, F> FlatMap<I, F> {
    pub(super) fn new(base: I, op: F) -> Self {
        FlatMap { base, op }
    }
}

impl<I, F, PI> ParallelIterator for FlatMap<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> PI + Sync + Send,
    PI: IntoParallelIterator,
{
    type Item = PI::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let FlatMap { base, op } = self;
        base.drive_unindexed(FlatMapConsumer {
            base: consumer,
            op: &op,
        })
    }
}

struct FlatMapConsumer<'f, C, F> {
    base: C,
    op: &'f F,
}

impl<'f, T, C, F, PI> Consumer<T> for FlatMapConsumer<'f, C, F>
where
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
    C: UnindexedConsumer<PI::Item>,
{
    type Folder = FlatMapFolder<'f, C, F, C::Result>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = FlatMapConsumer {
            base: left_base,
            op: self.op,
        };
        let right = FlatMapConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FlatMapFolder {
            base: self.base,
            op: self.op,
            previous: None,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, C, F, PI> UnindexedConsumer<T> for FlatMapConsumer<'f, C, F>
where
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
    C: UnindexedConsumer<PI::Item>,
{
    fn split_off_left(&self) -> Self {
        FlatMapConsumer {
            base: self.base.split_off_left(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

/// Drives every inner iterator into a consumer split off the base (in order) and reduces
/// the results as they come.
struct FlatMapFolder<'f, C, F, R> {
    base: C,
    op: &'f F,
    previous: Option<R>,
}

impl<T, C, F, PI> Folder<T> for FlatMapFolder<'_, C, F, C::Result>
where
    F: Fn(T) -> PI + Sync,
    PI: IntoParallelIterator,
    C: UnindexedConsumer<PI::Item>,
{
    type Result = C::Result;

    fn consume(mut self, item: T) -> Self {
        let inner = (self.op)(item).into_par_iter();
        let reducer = self.base.to_reducer();
        let result = inner.drive_unindexed(self.base.split_off_left());
        self.previous = Some(match self.previous.take() {
            None => result,
            Some(prev) => reducer.reduce(prev, result),
        });
        self
    }
    fn complete(self) -> C::Result {
        match self.previous {
            Some(r) => r,
            None => self.base.into_folder().complete(),
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// Items mapped to sequential iterators, flattened in order
/// ([`ParallelIterator::flat_map_iter`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct FlatMapIter<I, F> {
    base: I,
    op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, F> std::fmt::Debug for FlatMapIter<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlatMapIter")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, F> FlatMapIter<I, F> {
    pub(super) fn new(base: I, op: F) -> Self {
        FlatMapIter { base, op }
    }
}

impl<I, F, SI> ParallelIterator for FlatMapIter<I, F>
where
    I: ParallelIterator,
    F: Fn(I::Item) -> SI + Sync + Send,
    SI: IntoIterator,
    SI::Item: Send,
{
    type Item = SI::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let FlatMapIter { base, op } = self;
        base.drive_unindexed(FlatMapIterConsumer {
            base: consumer,
            op: &op,
        })
    }
}

struct FlatMapIterConsumer<'f, C, F> {
    base: C,
    op: &'f F,
}

impl<'f, T, C, F, SI> Consumer<T> for FlatMapIterConsumer<'f, C, F>
where
    F: Fn(T) -> SI + Sync,
    SI: IntoIterator,
    C: Consumer<SI::Item>,
{
    type Folder = FlatMapIterFolder<'f, C::Folder, F>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = FlatMapIterConsumer {
            base: left_base,
            op: self.op,
        };
        let right = FlatMapIterConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FlatMapIterFolder {
            base: self.base.into_folder(),
            op: self.op,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, C, F, SI> UnindexedConsumer<T> for FlatMapIterConsumer<'f, C, F>
where
    F: Fn(T) -> SI + Sync,
    SI: IntoIterator,
    C: UnindexedConsumer<SI::Item>,
{
    fn split_off_left(&self) -> Self {
        FlatMapIterConsumer {
            base: self.base.split_off_left(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

struct FlatMapIterFolder<'f, G, F> {
    base: G,
    op: &'f F,
}

impl<T, G, F, SI> Folder<T> for FlatMapIterFolder<'_, G, F>
where
    F: Fn(T) -> SI,
    SI: IntoIterator,
    G: Folder<SI::Item>,
{
    type Result = G::Result;

    fn consume(self, item: T) -> Self {
        FlatMapIterFolder {
            base: self.base.consume_iter((self.op)(item)),
            op: self.op,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let op = self.op;
        FlatMapIterFolder {
            base: self.base.consume_iter(iter.into_iter().flat_map(op)),
            op,
        }
    }
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

/// Items that are parallel iterators, flattened in order ([`ParallelIterator::flatten`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct Flatten<I> {
    base: I,
}

impl<I> Flatten<I> {
    pub(super) fn new(base: I) -> Self {
        Flatten { base }
    }
}

impl<I> ParallelIterator for Flatten<I>
where
    I: ParallelIterator,
    I::Item: IntoParallelIterator,
{
    type Item = <I::Item as IntoParallelIterator>::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let id = |x: I::Item| x;
        self.base.drive_unindexed(FlatMapConsumer {
            base: consumer,
            op: &id,
        })
    }
}

/// Items that are sequential iterators, flattened in order
/// ([`ParallelIterator::flatten_iter`]).
#[derive(Clone, Debug)]
#[must_use = "iterator adaptors are lazy"]
pub struct FlattenIter<I> {
    base: I,
}

impl<I> FlattenIter<I> {
    pub(super) fn new(base: I) -> Self {
        FlattenIter { base }
    }
}

impl<I> ParallelIterator for FlattenIter<I>
where
    I: ParallelIterator,
    I::Item: IntoIterator,
    <I::Item as IntoIterator>::Item: Send,
{
    type Item = <I::Item as IntoIterator>::Item;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let id = |x: I::Item| x;
        self.base.drive_unindexed(FlatMapIterConsumer {
            base: consumer,
            op: &id,
        })
    }
}
