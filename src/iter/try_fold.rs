//! `try_fold` and `try_fold_with`: every piece folded sequentially with a fallible
//! operation, stopping at its first failure; a parallel iterator of the pieces' results.

use std::marker::PhantomData;
use std::ops::ControlFlow;

use super::map_with::{CloneSource, InitSource, StateSource};
use super::plumbing::{Consumer, Folder, UnindexedConsumer};
use super::{ParallelIterator, Try};

/// The results of fallibly folding every piece from `identity()`
/// ([`ParallelIterator::try_fold`]).
///
/// ```
/// use zonal::prelude::*;
/// let r: Result<u32, &str> = (1..=10u32)
///     .into_par_iter()
///     .try_fold(|| 0u32, |a, x| a.checked_add(x).ok_or("overflow"))
///     .try_reduce(|| 0, |a, b| a.checked_add(b).ok_or("overflow"));
/// assert_eq!(r, Ok(55));
/// ```
#[must_use = "iterator adaptors are lazy"]
pub struct TryFold<I, R, ID, F> {
    base: I,
    identity: ID,
    fold_op: F,
    marker: PhantomData<fn() -> R>,
}

/// The results of fallibly folding every piece from a clone of `init`
/// ([`ParallelIterator::try_fold_with`]).
///
/// ```
/// use zonal::prelude::*;
/// let r: Option<u8> = (1..=100u8)
///     .into_par_iter()
///     .try_fold_with(0u8, |a, x| a.checked_add(x))
///     .try_reduce(|| 0, |a, b| a.checked_add(b));
/// assert_eq!(r, None); // 5050 does not fit a u8
/// ```
#[must_use = "iterator adaptors are lazy"]
pub struct TryFoldWith<I, R: Try, F> {
    base: I,
    item: R::Output,
    fold_op: F,
}

impl<I, R, ID, F> TryFold<I, R, ID, F> {
    pub(super) fn new(base: I, identity: ID, fold_op: F) -> Self {
        TryFold {
            base,
            identity,
            fold_op,
            marker: PhantomData,
        }
    }
}

impl<I, R: Try, F> TryFoldWith<I, R, F> {
    pub(super) fn new(base: I, item: R::Output, fold_op: F) -> Self {
        TryFoldWith {
            base,
            item,
            fold_op,
        }
    }
}

impl<I: Clone, R, ID: Clone, F: Clone> Clone for TryFold<I, R, ID, F> {
    fn clone(&self) -> Self {
        TryFold::new(
            self.base.clone(),
            self.identity.clone(),
            self.fold_op.clone(),
        )
    }
}

impl<I: std::fmt::Debug, R, ID, F> std::fmt::Debug for TryFold<I, R, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFold").field("base", &self.base).finish()
    }
}

impl<I: Clone, R: Try, F: Clone> Clone for TryFoldWith<I, R, F>
where
    R::Output: Clone,
{
    fn clone(&self) -> Self {
        TryFoldWith::new(self.base.clone(), self.item.clone(), self.fold_op.clone())
    }
}

impl<I: std::fmt::Debug, R: Try, F> std::fmt::Debug for TryFoldWith<I, R, F>
where
    R::Output: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TryFoldWith")
            .field("base", &self.base)
            .field("item", &self.item)
            .finish()
    }
}

impl<I, R, ID, F, T> ParallelIterator for TryFold<I, R, ID, F>
where
    I: ParallelIterator,
    ID: Fn() -> T + Sync + Send,
    F: Fn(T, I::Item) -> R + Sync + Send,
    R: Try<Output = T> + Send,
{
    type Item = R;

    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        let TryFold {
            base,
            identity,
            fold_op,
            ..
        } = self;
        base.drive_unindexed(TryFoldConsumer {
            base: consumer,
            source: InitSource::new(&identity),
            fold_op: &fold_op,
            marker: PhantomData,
        })
    }
}

impl<I, R, F, T> ParallelIterator for TryFoldWith<I, R, F>
where
    I: ParallelIterator,
    F: Fn(T, I::Item) -> R + Sync + Send,
    R: Try<Output = T> + Send,
    T: Clone + Send,
{
    type Item = R;

    fn drive_unindexed<C: UnindexedConsumer<R>>(self, consumer: C) -> C::Result {
        let TryFoldWith {
            base,
            item,
            fold_op,
        } = self;
        base.drive_unindexed(TryFoldConsumer {
            base: consumer,
            source: CloneSource::new(item),
            fold_op: &fold_op,
            marker: PhantomData,
        })
    }
}

struct TryFoldConsumer<'f, C, S, F, R> {
    base: C,
    source: S,
    fold_op: &'f F,
    marker: PhantomData<fn() -> R>,
}

impl<'f, U, T, C, S, F, R> Consumer<U> for TryFoldConsumer<'f, C, S, F, R>
where
    C: Consumer<R>,
    S: StateSource<State = T>,
    F: Fn(T, U) -> R + Sync,
    R: Try<Output = T> + Send,
{
    type Folder = TryFoldFolder<'f, C::Folder, F, R>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = TryFoldConsumer {
            base: left_base,
            source: self.source.split(),
            fold_op: self.fold_op,
            marker: PhantomData,
        };
        let right = TryFoldConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        TryFoldFolder {
            base: self.base.into_folder(),
            control: ControlFlow::Continue(self.source.into_state()),
            fold_op: self.fold_op,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, U, T, C, S, F, R> UnindexedConsumer<U> for TryFoldConsumer<'f, C, S, F, R>
where
    C: UnindexedConsumer<R>,
    S: StateSource<State = T>,
    F: Fn(T, U) -> R + Sync,
    R: Try<Output = T> + Send,
{
    fn split_off_left(&self) -> Self {
        TryFoldConsumer {
            base: self.base.split_off_left(),
            source: self.source.split(),
            fold_op: self.fold_op,
            marker: PhantomData,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

struct TryFoldFolder<'f, G, F, R: Try> {
    base: G,
    control: ControlFlow<R::Residual, R::Output>,
    fold_op: &'f F,
}

impl<U, G, F, R> Folder<U> for TryFoldFolder<'_, G, F, R>
where
    G: Folder<R>,
    F: Fn(R::Output, U) -> R,
    R: Try,
{
    type Result = G::Result;

    fn consume(self, item: U) -> Self {
        let control = match self.control {
            ControlFlow::Continue(acc) => (self.fold_op)(acc, item).branch(),
            done @ ControlFlow::Break(_) => done,
        };
        TryFoldFolder { control, ..self }
    }
    fn complete(self) -> G::Result {
        let r = match self.control {
            ControlFlow::Continue(acc) => R::from_output(acc),
            ControlFlow::Break(residual) => R::from_residual(residual),
        };
        self.base.consume(r).complete()
    }
    fn full(&self) -> bool {
        self.control.is_break() || self.base.full()
    }
}
