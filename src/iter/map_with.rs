//! `map_with` and `map_init`: maps with a mutable state per piece (a clone of a value, or
//! made by an init function), indexed when the base is.

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// Where the per-piece state of [`MapWith`] / [`MapInit`] comes from.
pub trait StateSource: Send + Sized {
    /// The state.
    type State;
    /// A source for a piece split off this one's.
    #[must_use]
    fn split(&self) -> Self;
    /// The state of a piece.
    fn into_state(self) -> Self::State;
}

/// `map_with`'s source: a value cloned at every split.
#[derive(Clone, Debug)]
pub struct CloneSource<T>(T);

impl<T> CloneSource<T> {
    pub(super) fn new(item: T) -> Self {
        CloneSource(item)
    }
}

impl<T: Clone + Send> StateSource for CloneSource<T> {
    type State = T;
    fn split(&self) -> Self {
        CloneSource(self.0.clone())
    }
    fn into_state(self) -> T {
        self.0
    }
}

/// `map_init`'s source: a function called once per piece.
#[derive(Debug)]
pub struct InitSource<'f, F>(&'f F);

impl<'f, F> InitSource<'f, F> {
    pub(super) fn new(init: &'f F) -> Self {
        InitSource(init)
    }
}

impl<T, F: Fn() -> T + Sync> StateSource for InitSource<'_, F> {
    type State = T;
    fn split(&self) -> Self {
        InitSource(self.0)
    }
    fn into_state(self) -> T {
        (self.0)()
    }
}

/// Items mapped with a per-piece state ([`ParallelIterator::map_with`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct MapWith<I, T, F> {
    base: I,
    item: T,
    op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for MapWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapWith")
            .field("base", &self.base)
            .field("item", &self.item)
            .finish_non_exhaustive()
    }
}

/// Items mapped with a per-piece state made by `init` ([`ParallelIterator::map_init`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct MapInit<I, INIT, F> {
    base: I,
    init: INIT,
    op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, INIT, F> std::fmt::Debug for MapInit<I, INIT, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapInit")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, T, F> MapWith<I, T, F> {
    pub(super) fn new(base: I, item: T, op: F) -> Self {
        MapWith { base, item, op }
    }
}

impl<I, INIT, F> MapInit<I, INIT, F> {
    pub(super) fn new(base: I, init: INIT, op: F) -> Self {
        MapInit { base, init, op }
    }
}

impl<I, T, F, R> ParallelIterator for MapWith<I, T, F>
where
    I: ParallelIterator,
    T: Clone + Send,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        let MapWith { base, item, op } = self;
        base.drive_unindexed(StateConsumer {
            base: consumer,
            source: CloneSource(item),
            op: &op,
        })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I, T, F, R> IndexedParallelIterator for MapWith<I, T, F>
where
    I: IndexedParallelIterator,
    T: Clone + Send,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<R>>(self, callback: CB) -> CB::Output {
        let MapWith { base, item, op } = self;
        base.with_producer(StateCallback {
            callback,
            source: CloneSource(item),
            op: &op,
        })
    }
}

impl<I, INIT, T, F, R> ParallelIterator for MapInit<I, INIT, F>
where
    I: ParallelIterator,
    INIT: Fn() -> T + Sync + Send,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;
    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        let MapInit { base, init, op } = self;
        base.drive_unindexed(StateConsumer {
            base: consumer,
            source: InitSource(&init),
            op: &op,
        })
    }
    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I, INIT, T, F, R> IndexedParallelIterator for MapInit<I, INIT, F>
where
    I: IndexedParallelIterator,
    INIT: Fn() -> T + Sync + Send,
    F: Fn(&mut T, I::Item) -> R + Sync + Send,
    R: Send,
{
    fn len(&self) -> usize {
        self.base.len()
    }
    fn with_producer<CB: ProducerCallback<R>>(self, callback: CB) -> CB::Output {
        let MapInit { base, init, op } = self;
        base.with_producer(StateCallback {
            callback,
            source: InitSource(&init),
            op: &op,
        })
    }
}

struct StateCallback<'f, CB, S, F> {
    callback: CB,
    source: S,
    op: &'f F,
}

impl<T, R, CB, S, F> ProducerCallback<T> for StateCallback<'_, CB, S, F>
where
    S: StateSource,
    F: Fn(&mut S::State, T) -> R + Sync,
    CB: ProducerCallback<R>,
{
    type Output = CB::Output;
    fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
        self.callback.callback(StateProducer {
            base,
            source: self.source,
            op: self.op,
        })
    }
}

struct StateProducer<'f, P, S, F> {
    base: P,
    source: S,
    op: &'f F,
}

impl<'f, P, S, F, R> Producer for StateProducer<'f, P, S, F>
where
    P: Producer,
    S: StateSource,
    F: Fn(&mut S::State, P::Item) -> R + Sync,
{
    type Item = R;
    type IntoIter = StateIter<'f, P::IntoIter, S::State, F>;
    fn into_iter(self) -> Self::IntoIter {
        StateIter {
            iter: self.base.into_iter(),
            state: self.source.into_state(),
            op: self.op,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let left_source = self.source.split();
        let (a, b) = self.base.split_at(index);
        (
            StateProducer {
                base: a,
                source: left_source,
                op: self.op,
            },
            StateProducer {
                base: b,
                source: self.source,
                op: self.op,
            },
        )
    }
    fn min_len(&self) -> usize {
        self.base.min_len()
    }
    fn max_len(&self) -> usize {
        self.base.max_len()
    }
}

/// The sequential iterator of a [`StateProducer`].
struct StateIter<'f, I, T, F> {
    iter: I,
    state: T,
    op: &'f F,
}

impl<I: Iterator, T, F: Fn(&mut T, I::Item) -> R, R> Iterator for StateIter<'_, I, T, F> {
    type Item = R;
    fn next(&mut self) -> Option<R> {
        let x = self.iter.next()?;
        Some((self.op)(&mut self.state, x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<I: ExactSizeIterator, T, F: Fn(&mut T, I::Item) -> R, R> ExactSizeIterator
    for StateIter<'_, I, T, F>
{
}

impl<I: DoubleEndedIterator, T, F: Fn(&mut T, I::Item) -> R, R> DoubleEndedIterator
    for StateIter<'_, I, T, F>
{
    fn next_back(&mut self) -> Option<R> {
        let x = self.iter.next_back()?;
        Some((self.op)(&mut self.state, x))
    }
}

struct StateConsumer<'f, C, S, F> {
    base: C,
    source: S,
    op: &'f F,
}

impl<'f, T, R, C, S, F> Consumer<T> for StateConsumer<'f, C, S, F>
where
    S: StateSource,
    F: Fn(&mut S::State, T) -> R + Sync,
    C: Consumer<R>,
{
    type Folder = StateFolder<'f, C::Folder, S::State, F>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = StateConsumer {
            base: left_base,
            source: self.source.split(),
            op: self.op,
        };
        let right = StateConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        StateFolder {
            base: self.base.into_folder(),
            state: self.source.into_state(),
            op: self.op,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, R, C, S, F> UnindexedConsumer<T> for StateConsumer<'f, C, S, F>
where
    S: StateSource,
    F: Fn(&mut S::State, T) -> R + Sync,
    C: UnindexedConsumer<R>,
{
    fn split_off_left(&self) -> Self {
        StateConsumer {
            base: self.base.split_off_left(),
            source: self.source.split(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

struct StateFolder<'f, G, T, F> {
    base: G,
    state: T,
    op: &'f F,
}

impl<U, R, G, T, F> Folder<U> for StateFolder<'_, G, T, F>
where
    F: Fn(&mut T, U) -> R,
    G: Folder<R>,
{
    type Result = G::Result;
    fn consume(mut self, item: U) -> Self {
        let r = (self.op)(&mut self.state, item);
        self.base = self.base.consume(r);
        self
    }
    fn complete(self) -> G::Result {
        self.base.complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}
