//! `fold` and `fold_with`: every piece folded sequentially; a parallel iterator of the
//! pieces' results.

use super::map_with::{CloneSource, InitSource, StateSource};
use super::plumbing::{Consumer, Folder, UnindexedConsumer};
use super::ParallelIterator;

/// The results of folding every piece from `identity()` ([`ParallelIterator::fold`]).
///
/// ```
/// use zonal::prelude::*;
/// let s: u32 = (1..=10u32).into_par_iter().fold(|| 0, |a, x| a + x).sum();
/// assert_eq!(s, 55);
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct Fold<I, ID, F> {
    base: I,
    identity: ID,
    fold_op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, ID, F> std::fmt::Debug for Fold<I, ID, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fold")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl<I, ID, F> Fold<I, ID, F> {
    pub(super) fn new(base: I, identity: ID, fold_op: F) -> Self {
        Fold {
            base,
            identity,
            fold_op,
        }
    }
}

impl<I, ID, F, T> ParallelIterator for Fold<I, ID, F>
where
    I: ParallelIterator,
    ID: Fn() -> T + Sync + Send,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send,
{
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let Fold {
            base,
            identity,
            fold_op,
        } = self;
        base.drive_unindexed(FoldConsumer {
            base: consumer,
            source: InitSource::new(&identity),
            fold_op: &fold_op,
        })
    }
}

/// The results of folding every piece from a clone of `init`
/// ([`ParallelIterator::fold_with`]).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<String> = vec!["a", "b", "c"]
///     .into_par_iter()
///     .fold_with(String::new(), |mut s, x| {
///         s.push_str(x);
///         s
///     })
///     .collect();
/// assert_eq!(v.concat(), "abc");
/// ```
#[derive(Clone)]
#[must_use = "iterator adaptors are lazy"]
pub struct FoldWith<I, T, F> {
    base: I,
    item: T,
    fold_op: F,
}

/// Shows the base iterator (and the state), not the closures, as rayon's.
impl<I: std::fmt::Debug, T: std::fmt::Debug, F> std::fmt::Debug for FoldWith<I, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoldWith")
            .field("base", &self.base)
            .field("item", &self.item)
            .finish_non_exhaustive()
    }
}

impl<I, T, F> FoldWith<I, T, F> {
    pub(super) fn new(base: I, item: T, fold_op: F) -> Self {
        FoldWith {
            base,
            item,
            fold_op,
        }
    }
}

impl<I, T, F> ParallelIterator for FoldWith<I, T, F>
where
    I: ParallelIterator,
    F: Fn(T, I::Item) -> T + Sync + Send,
    T: Send + Clone,
{
    type Item = T;

    fn drive_unindexed<C: UnindexedConsumer<T>>(self, consumer: C) -> C::Result {
        let FoldWith {
            base,
            item,
            fold_op,
        } = self;
        base.drive_unindexed(FoldConsumer {
            base: consumer,
            source: CloneSource::new(item),
            fold_op: &fold_op,
        })
    }
}

struct FoldConsumer<'f, C, S, F> {
    base: C,
    source: S,
    fold_op: &'f F,
}

impl<'f, U, T, C, S, F> Consumer<U> for FoldConsumer<'f, C, S, F>
where
    C: Consumer<T>,
    S: StateSource<State = T>,
    F: Fn(T, U) -> T + Sync,
    T: Send,
{
    type Folder = FoldFolder<'f, C::Folder, F, T>;
    type Reducer = C::Reducer;
    type Result = C::Result;

    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer) {
        let (left_base, right_base, reducer) = self.base.split_at(index);
        let left = FoldConsumer {
            base: left_base,
            source: self.source.split(),
            fold_op: self.fold_op,
        };
        let right = FoldConsumer {
            base: right_base,
            ..self
        };
        (left, right, reducer)
    }

    fn into_folder(self) -> Self::Folder {
        FoldFolder {
            base: self.base.into_folder(),
            acc: self.source.into_state(),
            fold_op: self.fold_op,
        }
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}

impl<'f, U, T, C, S, F> UnindexedConsumer<U> for FoldConsumer<'f, C, S, F>
where
    C: UnindexedConsumer<T>,
    S: StateSource<State = T>,
    F: Fn(T, U) -> T + Sync,
    T: Send,
{
    fn split_off_left(&self) -> Self {
        FoldConsumer {
            base: self.base.split_off_left(),
            source: self.source.split(),
            fold_op: self.fold_op,
        }
    }
    fn to_reducer(&self) -> C::Reducer {
        self.base.to_reducer()
    }
}

struct FoldFolder<'f, G, F, T> {
    base: G,
    acc: T,
    fold_op: &'f F,
}

impl<U, T, G, F> Folder<U> for FoldFolder<'_, G, F, T>
where
    G: Folder<T>,
    F: Fn(T, U) -> T,
{
    type Result = G::Result;

    fn consume(self, item: U) -> Self {
        FoldFolder {
            acc: (self.fold_op)(self.acc, item),
            ..self
        }
    }
    fn consume_iter<It: IntoIterator<Item = U>>(self, iter: It) -> Self {
        let f = self.fold_op;
        FoldFolder {
            acc: iter.into_iter().fold(self.acc, f),
            ..self
        }
    }
    fn complete(self) -> G::Result {
        self.base.consume(self.acc).complete()
    }
    fn full(&self) -> bool {
        self.base.full()
    }
}
