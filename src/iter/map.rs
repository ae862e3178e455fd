//! `map` and its special cases `cloned`, `copied`, `inspect`, `update`: one adaptor over a
//! [`MapOp`].

use super::plumbing::{Consumer, Folder, Producer, ProducerCallback, UnindexedConsumer};
use super::{IndexedParallelIterator, ParallelIterator};

/// A function applied to every item by [`Map`]: every `Fn(T) -> R + Sync + Send` closure,
/// and the operations of `cloned`, `copied`, `inspect`.
pub trait MapOp<T>: Sync + Send {
    /// The mapped item.
    type Output: Send;
    /// Maps one item.
    fn call(&self, item: T) -> Self::Output;
}

impl<T, R: Send, F: Fn(T) -> R + Sync + Send> MapOp<T> for F {
    type Output = R;
    #[inline]
    fn call(&self, item: T) -> R {
        self(item)
    }
}

/// [`MapOp`] of [`ParallelIterator::cloned`].
#[derive(Clone, Copy, Debug)]
pub struct ClonedOp;

impl<'a, T: Clone + Send + Sync + 'a> MapOp<&'a T> for ClonedOp {
    type Output = T;
    #[inline]
    fn call(&self, item: &'a T) -> T {
        item.clone()
    }
}

/// [`MapOp`] of [`ParallelIterator::copied`].
#[derive(Clone, Copy, Debug)]
pub struct CopiedOp;

impl<'a, T: Copy + Send + Sync + 'a> MapOp<&'a T> for CopiedOp {
    type Output = T;
    #[inline]
    fn call(&self, item: &'a T) -> T {
        *item
    }
}

/// [`MapOp`] of [`ParallelIterator::inspect`].
#[derive(Clone, Copy, Debug)]
pub struct InspectOp<F>(pub F);

impl<T: Send, F: Fn(&T) + Sync + Send> MapOp<T> for InspectOp<F> {
    type Output = T;
    #[inline]
    fn call(&self, item: T) -> T {
        (self.0)(&item);
        item
    }
}

/// [`MapOp`] of [`ParallelIterator::update`].
#[derive(Clone, Copy, Debug)]
pub struct UpdateOp<F>(pub F);

impl<T: Send, F: Fn(&mut T) + Sync + Send> MapOp<T> for UpdateOp<F> {
    type Output = T;
    #[inline]
    fn call(&self, mut item: T) -> T {
        (self.0)(&mut item);
        item
    }
}

/// Items mapped by a [`MapOp`] ([`ParallelIterator::map`]).
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Map<I, F> {
    base: I,
    op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, F> std::fmt::Debug for Map<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Map")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// [`ParallelIterator::cloned`].
pub type Cloned<I> = Map<I, ClonedOp>;
/// [`ParallelIterator::copied`].
pub type Copied<I> = Map<I, CopiedOp>;
/// [`ParallelIterator::inspect`].
pub type Inspect<I, F> = Map<I, InspectOp<F>>;
/// [`ParallelIterator::update`].
pub type Update<I, F> = Map<I, UpdateOp<F>>;

impl<I, F> Map<I, F> {
    pub(super) fn new(base: I, op: F) -> Self {
        Map { base, op }
    }
}

impl<I, F> ParallelIterator for Map<I, F>
where
    I: ParallelIterator,
    F: MapOp<I::Item>,
{
    type Item = F::Output;

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        let Map { base, op } = self;
        base.drive_unindexed(MapConsumer {
            base: consumer,
            op: &op,
        })
    }

    fn opt_len(&self) -> Option<usize> {
        self.base.opt_len()
    }
}

impl<I, F> IndexedParallelIterator for Map<I, F>
where
    I: IndexedParallelIterator,
    F: MapOp<I::Item>,
{
    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        let Map { base, op } = self;
        return base.with_producer(Callback { callback, op: &op });

        struct Callback<'f, CB, F> {
            callback: CB,
            op: &'f F,
        }
        impl<T, CB, F> ProducerCallback<T> for Callback<'_, CB, F>
        where
            F: MapOp<T>,
            CB: ProducerCallback<F::Output>,
        {
            type Output = CB::Output;
            fn callback<P: Producer<Item = T>>(self, base: P) -> CB::Output {
                self.callback.callback(MapProducer { base, op: self.op })
            }
        }
    }
}

struct MapProducer<'f, P, F> {
    base: P,
    op: &'f F,
}

impl<'f, P, F> Producer for MapProducer<'f, P, F>
where
    P: Producer,
    F: MapOp<P::Item>,
{
    type Item = F::Output;
    type IntoIter = MapIter<'f, P::IntoIter, F>;

    fn into_iter(self) -> Self::IntoIter {
        MapIter {
            iter: self.base.into_iter(),
            op: self.op,
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let (a, b) = self.base.split_at(index);
        (
            MapProducer {
                base: a,
                op: self.op,
            },
            MapProducer {
                base: b,
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
    fn fold_with<G: Folder<Self::Item>>(self, folder: G) -> G {
        self.base
            .fold_with(MapFolder {
                base: folder,
                op: self.op,
            })
            .base
    }
}

/// The sequential iterator of a mapped producer.
struct MapIter<'f, I, F> {
    iter: I,
    op: &'f F,
}

impl<I: Iterator, F: MapOp<I::Item>> Iterator for MapIter<'_, I, F> {
    type Item = F::Output;
    #[inline]
    fn next(&mut self) -> Option<F::Output> {
        self.iter.next().map(|x| self.op.call(x))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.iter.size_hint()
    }
}

impl<I: ExactSizeIterator, F: MapOp<I::Item>> ExactSizeIterator for MapIter<'_, I, F> {}

impl<I: DoubleEndedIterator, F: MapOp<I::Item>> DoubleEndedIterator for MapIter<'_, I, F> {
    #[inline]
    fn next_back(&mut self) -> Option<F::Output> {
        self.iter.next_back().map(|x| self.op.call(x))
    }
}

struct MapConsumer<'f, C, F> {
    base: C,
    op: &'f F,
}

impl<'f, T, C, F> Consumer<T> for MapConsumer<'f, C, F>
where
    F: MapOp<T>,
    C: Consumer<F::Output>,
{
    type Folder = MapFolder<'f, C::Folder, F>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = MapConsumer {
            base: left_base,
            op: self.op,
        };
        let right = MapConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        MapFolder {
            base: self.base.into_folder(),
            op: self.op,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, T, C, F> UnindexedConsumer<T> for MapConsumer<'f, C, F>
where
    F: MapOp<T>,
    C: UnindexedConsumer<F::Output>,
{
    fn split_off_left(&self) -> Self {
        MapConsumer {
            base: self.base.split_off_left(),
            op: self.op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

struct MapFolder<'f, G, F> {
    base: G,
    op: &'f F,
}

impl<T, G, F> Folder<T> for MapFolder<'_, G, F>
where
    F: MapOp<T>,
    G: Folder<F::Output>,
{
    type Result = G::Result;

    fn consume(self, item: T) -> Self {
        MapFolder {
            base: self.base.consume(self.op.call(item)),
            op: self.op,
        }
    }
    fn consume_iter<It: IntoIterator<Item = T>>(self, iter: It) -> Self {
        let op = self.op;
        MapFolder {
            base: self.base.consume_iter(iter.into_iter().map(|x| op.call(x))),
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
