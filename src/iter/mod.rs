//! Parallel iterators with rayon's traits and method names: port rayon code by changing
//! `use rayon::prelude::*` to `use zonal::prelude::*`.
//!
//! ```
//! use zonal::prelude::*;
//! let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
//! let v: Vec<u64> = (0..1000).collect();
//! let (sum, evens) = pool.install(|| {
//!     let sum: u64 = v.par_iter().map(|x| x * x).sum();
//!     let evens: Vec<u64> = v.par_iter().copied().filter(|x| x % 2 == 0).collect();
//!     (sum, evens)
//! });
//! assert_eq!(sum, 332_833_500);
//! assert_eq!(evens.len(), 500);
//! assert_eq!(evens[..3], [0, 2, 4]); // collect keeps the order
//! # Ok::<(), zonal::BuildError>(())
//! ```
//!
//! Iterators run on the pool of the worker that calls them (inside
//! [`ThreadPool::install`](crate::ThreadPool::install), or in a task); called from any other
//! thread they run on the global pool (built on first use, as rayon's; see
//! [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)).
//!
//! ```
//! use zonal::prelude::*;
//! use std::collections::HashMap;
//! let words = ["a", "bb", "cc", "ddd"];
//! let by_len: HashMap<usize, usize> = (1..4usize)
//!     .into_par_iter()
//!     .map(|n| (n, words.par_iter().filter(|w| w.len() == n).count()))
//!     .collect();
//! assert_eq!(by_len[&2], 2);
//! let s: String = words.par_iter().copied().collect();
//! assert_eq!(s, "abbccddd");
//! let first = (0..100u32).into_par_iter().find_first(|x| x % 7 == 6);
//! assert_eq!(first, Some(6));
//! ```
//!
//! ## NUMA awareness
//! Where rayon splits blindly, an indexed iterator (over a range, a slice, a `Vec`, and the
//! adaptors that keep indexes) run on a worker of a pool with several nodes first cuts its
//! index space into one contiguous part per node
//! ([`current_node_partition`](zonal_runtime::current_node_partition)) and spawns each part
//! with that node as its origin; under the conservative policies each part then stays on
//! its node while it splits further (see [`plumbing`]). Data already placed per node is
//! iterated with [`NodeVec`] (or [`par_iter_nodes`] over a slice of
//! [`NodeBuffer`](zonal_runtime::NodeBuffer)s): each buffer's items are processed by tasks
//! whose origin is the buffer's node.
//!
//! ## Differences from rayon
//! - `collect` into a `Vec` gathers the pieces' vectors and concatenates them (rayon writes
//!   in place for indexed iterators); the order is kept either way.
//! - Maps and sets are iterated by first collecting their items (or references) into a
//!   `Vec`.
//! - `min`/`min_by`/`min_by_key` return the first minimum and `max`/... the last maximum,
//!   as `std`.

mod chain;
mod chunks;
mod collect;
mod enumerate;
mod filter;
mod find;
mod flat_map;
mod fold;
mod len;
mod map;
mod map_with;
mod par_bridge;
mod piece;
pub mod plumbing;
mod reduce;
mod rev;
mod skip_take;
mod sources;
mod zip;

// rayon's adaptors and consumers beyond the first set (the rest of rayon's API).
mod any_while;
mod blocks;
mod fold_chunks;
mod interleave;
mod intersperse;
mod panic_fuse;
mod positions;
mod step_by;
mod take_any;
mod try_fold;
mod try_reduce;
mod while_some;

use std::cmp::Ordering;
use std::collections::LinkedList;
use std::iter::{Product, Sum};
use std::ops::ControlFlow;

pub use chain::Chain;
pub use chunks::Chunks;
pub use enumerate::Enumerate;
pub use filter::{Filter, FilterMap};
pub use flat_map::{FlatMap, FlatMapIter, Flatten, FlattenIter};
pub use fold::Fold;
pub use len::{MaxLen, MinLen};
pub use map::{Cloned, ClonedOp, Copied, CopiedOp, Inspect, InspectOp, Map, MapOp};
pub use map_with::{CloneSource, InitSource, MapInit, MapWith, StateSource};
pub use par_bridge::{IterBridge, ParallelBridge};
pub use rev::Rev;
pub use skip_take::{Skip, Take};
pub use sources::collections::IntoIter as CollectionIntoIter;
pub use sources::drain::{Drain, ParallelDrainFull, ParallelDrainRange};
pub use sources::empty::{Empty, Once};
pub use sources::multizip::MultiZip;
pub use sources::node::{par_iter_nodes, NodeIter, NodeVec};
pub use sources::option::OptionIter;
pub use sources::range::{
    IndexedInclusiveRangeKey, IndexedRangeKey, RangeInclusiveIter, RangeIter, RangeKey,
};
pub use sources::repeat::{Repeat, RepeatN};
pub use sources::slice::{ChunksIter, ChunksMutIter, SliceIter, SliceIterMut, WindowsIter};
pub use sources::split::Split;
pub use sources::vec::VecIntoIter;
pub use sources::walk_tree::{WalkTree, WalkTreePostfix, WalkTreePrefix};
pub use zip::Zip;

pub use any_while::{SkipAnyWhile, TakeAnyWhile};
pub use blocks::{ExponentialBlocks, UniformBlocks};
pub use either::Either;
pub use fold::FoldWith;
pub use fold_chunks::{FoldChunks, FoldChunksWith};
pub use interleave::{Interleave, InterleaveShortest};
pub use intersperse::Intersperse;
pub use map::{Update, UpdateOp};
pub use panic_fuse::PanicFuse;
pub use positions::Positions;
pub use step_by::StepBy;
pub use take_any::{SkipAny, TakeAny};
pub use try_fold::{TryFold, TryFoldWith};
pub use while_some::WhileSome;
pub use zip::ZipEq;

use plumbing::{BridgeCallback, Consumer, ProducerCallback, UnindexedConsumer};

// --- the free-function sources (rayon's `iter::empty`, `iter::once`, ...) ---

/// A parallel iterator with no items (indexed).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<u8> = zonal::iter::empty().collect();
/// assert!(v.is_empty());
/// assert_eq!(zonal::iter::empty::<u8>().chain([1, 2]).count(), 2);
/// ```
pub fn empty<T: Send>() -> Empty<T> {
    Empty::new()
}

/// A parallel iterator with exactly one item (indexed).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<i32> = (0..3).into_par_iter().chain(zonal::iter::once(-1)).collect();
/// assert_eq!(v, [0, 1, 2, -1]);
/// ```
pub fn once<T: Send>(item: T) -> Once<T> {
    Once::new(item)
}

/// An endless parallel iterator of clones of `element` (unindexed): bound it with
/// [`Repeat::take`], [`Repeat::zip`] or a short-circuiting consumer.
///
/// ```
/// use zonal::prelude::*;
/// let found = zonal::iter::repeat(5u32).map(|x| x * 2).find_any(|&x| x == 10);
/// assert_eq!(found, Some(10));
/// ```
pub fn repeat<T: Clone + Send>(element: T) -> Repeat<T> {
    Repeat::new(element)
}

/// A parallel iterator of `n` clones of `element` (indexed; the element itself is the last
/// item, and is dropped unused when `n` is 0).
///
/// ```
/// use zonal::prelude::*;
/// let v: Vec<String> = zonal::iter::repeat_n(String::from("ab"), 3).collect();
/// assert_eq!(v, ["ab", "ab", "ab"]);
/// assert_eq!(zonal::iter::repeat_n('x', 1000).len(), 1000);
/// ```
pub fn repeat_n<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    RepeatN::new(element, n)
}

/// The former name of [`repeat_n`].
#[deprecated(note = "use `repeat_n`")]
pub fn repeatn<T: Clone + Send>(element: T, n: usize) -> RepeatN<T> {
    repeat_n(element, n)
}

/// A parallel iterator over the pieces that `splitter` cuts `data` into (unindexed):
/// `splitter` returns the two halves of a piece, or the piece and `None` when it is too
/// small to split. The items are the pieces not split further, in order; how far the data
/// is split depends on the pool (as rayon's `split`).
///
/// ```
/// use zonal::prelude::*;
/// // Ranges cut in halves down to 100 numbers at most, then summed.
/// let sum: u64 = zonal::iter::split(0..10_000u64, |r| {
///     if r.end - r.start <= 100 {
///         (r, None)
///     } else {
///         let mid = r.start + (r.end - r.start) / 2;
///         (r.start..mid, Some(mid..r.end))
///     }
/// })
/// .map(|r| r.sum::<u64>())
/// .sum();
/// assert_eq!(sum, 49_995_000);
/// ```
pub fn split<D, S>(data: D, splitter: S) -> Split<D, S>
where
    D: Send,
    S: Fn(D) -> (D, Option<D>) + Sync,
{
    Split::new(data, splitter)
}

/// The nodes of the tree rooted at `root` in prefix order: each node before its children's
/// subtrees, first child first (`children_of` lists a node's children).
///
/// ```
/// use zonal::prelude::*;
/// //      1
/// //    2   3
/// //   4 5 6 7
/// let children = |&n: &u32| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] };
/// let v: Vec<u32> = zonal::iter::walk_tree_prefix(1, children).collect();
/// assert_eq!(v, [1, 2, 4, 5, 3, 6, 7]);
/// ```
pub fn walk_tree_prefix<S, B, I>(root: S, children_of: B) -> WalkTreePrefix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    WalkTreePrefix::new(root, children_of)
}

/// The nodes of the tree rooted at `root` in postfix order: each node after its children's
/// subtrees, first child first (`children_of` lists a node's children).
///
/// ```
/// use zonal::prelude::*;
/// let children = |&n: &u32| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] };
/// let v: Vec<u32> = zonal::iter::walk_tree_postfix(1, children).collect();
/// assert_eq!(v, [4, 5, 2, 6, 7, 3, 1]);
/// ```
pub fn walk_tree_postfix<S, B, I>(root: S, children_of: B) -> WalkTreePostfix<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
{
    WalkTreePostfix::new(root, children_of)
}

/// The nodes of the tree rooted at `root`, in no specified order (whichever walk is
/// believed fastest; `children_of` lists a node's children).
///
/// ```
/// use zonal::prelude::*;
/// let children = |&n: &u32| if n < 4 { vec![2 * n, 2 * n + 1] } else { vec![] };
/// assert_eq!(zonal::iter::walk_tree(1, children).sum::<u32>(), 28);
/// ```
pub fn walk_tree<S, B, I>(root: S, children_of: B) -> WalkTree<S, B>
where
    S: Send,
    B: Fn(&S) -> I + Send + Sync,
    I: IntoIterator<Item = S>,
    I::IntoIter: DoubleEndedIterator,
{
    WalkTree::new(root, children_of)
}

/// A parallel iterator (rayon's `ParallelIterator`): the adaptors and consumers every
/// parallel iterator has.
pub trait ParallelIterator: Sized + Send {
    /// The items.
    type Item: Send;

    /// Runs the iterator into `consumer`, an [`UnindexedConsumer`] (the plumbing; see
    /// [`plumbing`]; an indexed iterator usually calls [`plumbing::bridge`]).
    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result;

    /// The exact length, if known.
    fn opt_len(&self) -> Option<usize> {
        None
    }

    /// Calls `op` on every item, in parallel.
    fn for_each<F>(self, op: F)
    where
        F: Fn(Self::Item) + Sync + Send,
    {
        self.drive_unindexed(reduce::ForEachConsumer { op: &op });
    }

    /// Calls `op` on every item with a per-piece clone of `init`.
    fn for_each_with<T, F>(self, init: T, op: F)
    where
        T: Send + Clone,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_with(init, op).for_each(drop);
    }

    /// Calls `op` on every item with a per-piece state made by `init`.
    fn for_each_init<T, INIT, F>(self, init: INIT, op: F)
    where
        INIT: Fn() -> T + Sync + Send,
        F: Fn(&mut T, Self::Item) + Sync + Send,
    {
        self.map_init(init, op).for_each(drop);
    }

    /// Calls `op` on every item until one returns an error (or `None`, or `Break`), which is
    /// returned (some failure, not necessarily the first); stops early.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let r = (0..100u32).into_par_iter().try_for_each(|x| if x < 50 { Ok(()) } else { Err(x) });
    /// assert!(matches!(r, Err(x) if x >= 50));
    /// ```
    fn try_for_each<F, R>(self, op: F) -> R
    where
        F: Fn(Self::Item) -> R + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map(op)
            .try_reduce(<()>::default, |(), ()| R::from_output(()))
    }

    /// [`try_for_each`](Self::try_for_each) with a per-piece clone of `init` (passed mutably
    /// to `op`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// use std::sync::mpsc::channel;
    /// let (tx, rx) = channel();
    /// let r: Result<(), _> = (0..10u32).into_par_iter().try_for_each_with(tx, |tx, x| tx.send(x));
    /// assert!(r.is_ok());
    /// let mut got: Vec<u32> = rx.iter().collect();
    /// got.sort();
    /// assert_eq!(got, (0..10).collect::<Vec<_>>());
    /// ```
    fn try_for_each_with<F, T, R>(self, init: T, op: F) -> R
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        T: Send + Clone,
        R: Try<Output = ()> + Send,
    {
        self.map_with(init, op)
            .try_reduce(<()>::default, |(), ()| R::from_output(()))
    }

    /// [`try_for_each`](Self::try_for_each) with a per-piece state made by `init` (passed
    /// mutably to `op`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let r = (0..10u32)
    ///     .into_par_iter()
    ///     .try_for_each_init(Vec::new, |buf, x| {
    ///         buf.push(x);
    ///         if x == 7 { None } else { Some(()) }
    ///     });
    /// assert_eq!(r, None);
    /// ```
    fn try_for_each_init<F, INIT, T, R>(self, init: INIT, op: F) -> R
    where
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
        INIT: Fn() -> T + Sync + Send,
        R: Try<Output = ()> + Send,
    {
        self.map_init(init, op)
            .try_reduce(<()>::default, |(), ()| R::from_output(()))
    }

    /// Maps every item with `f`.
    fn map<R, F>(self, f: F) -> Map<Self, F>
    where
        R: Send,
        F: Fn(Self::Item) -> R + Sync + Send,
    {
        Map::new(self, f)
    }

    /// Maps every item with a per-piece clone of `init` (passed mutably to `op`).
    fn map_with<T, R, F>(self, init: T, op: F) -> MapWith<Self, T, F>
    where
        T: Send + Clone,
        R: Send,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
    {
        MapWith::new(self, init, op)
    }

    /// Maps every item with a per-piece state made by `init` (passed mutably to `op`).
    fn map_init<T, INIT, R, F>(self, init: INIT, op: F) -> MapInit<Self, INIT, F>
    where
        INIT: Fn() -> T + Sync + Send,
        R: Send,
        F: Fn(&mut T, Self::Item) -> R + Sync + Send,
    {
        MapInit::new(self, init, op)
    }

    /// Clones the items of an iterator over references.
    fn cloned<'a, T>(self) -> Cloned<Self>
    where
        T: 'a + Clone + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Map::new(self, ClonedOp)
    }

    /// Copies the items of an iterator over references.
    fn copied<'a, T>(self) -> Copied<Self>
    where
        T: 'a + Copy + Send + Sync,
        Self: ParallelIterator<Item = &'a T>,
    {
        Map::new(self, CopiedOp)
    }

    /// Calls `f` on a reference to every item as it passes.
    fn inspect<F>(self, f: F) -> Inspect<Self, F>
    where
        F: Fn(&Self::Item) + Sync + Send,
    {
        Map::new(self, InspectOp(f))
    }

    /// Calls `op` on a mutable reference to every item as it passes.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let v: Vec<u32> = (0..4u32).into_par_iter().update(|x| *x *= 10).collect();
    /// assert_eq!(v, [0, 10, 20, 30]);
    /// ```
    fn update<F>(self, f: F) -> Update<Self, F>
    where
        F: Fn(&mut Self::Item) + Sync + Send,
    {
        Map::new(self, UpdateOp(f))
    }

    /// Keeps the items for which `predicate` holds.
    fn filter<P>(self, predicate: P) -> Filter<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        Filter::new(self, predicate)
    }

    /// Maps and keeps the `Some` results.
    fn filter_map<R, F>(self, f: F) -> FilterMap<Self, F>
    where
        R: Send,
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
    {
        FilterMap::new(self, f)
    }

    /// Maps every item to a parallel iterator and flattens them (in order).
    fn flat_map<PI, F>(self, f: F) -> FlatMap<Self, F>
    where
        PI: IntoParallelIterator,
        F: Fn(Self::Item) -> PI + Sync + Send,
    {
        FlatMap::new(self, f)
    }

    /// Maps every item to a sequential iterator and flattens them (in order).
    fn flat_map_iter<SI, F>(self, f: F) -> FlatMapIter<Self, F>
    where
        SI: IntoIterator,
        SI::Item: Send,
        F: Fn(Self::Item) -> SI + Sync + Send,
    {
        FlatMapIter::new(self, f)
    }

    /// Flattens items that are parallel iterators (in order).
    fn flatten(self) -> Flatten<Self>
    where
        Self::Item: IntoParallelIterator,
    {
        Flatten::new(self)
    }

    /// Flattens items that are sequential iterators (in order).
    fn flatten_iter(self) -> FlattenIter<Self>
    where
        Self::Item: IntoIterator,
        <Self::Item as IntoIterator>::Item: Send,
    {
        FlattenIter::new(self)
    }

    /// This iterator's items, then `other`'s.
    fn chain<C>(self, other: C) -> Chain<Self, C::Iter>
    where
        C: IntoParallelIterator<Item = Self::Item>,
    {
        Chain::new(self, other.into_par_iter())
    }

    /// Reduces the items with `op`, `identity()` being its neutral element (called for every
    /// piece and for an empty iterator).
    fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        ID: Fn() -> Self::Item + Sync + Send,
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.drive_unindexed(reduce::ReduceConsumer {
            identity: &identity,
            op: &op,
        })
    }

    /// Reduces the items with `op`; `None` for an empty iterator.
    fn reduce_with<OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(Self::Item, Self::Item) -> Self::Item + Sync + Send,
    {
        self.map(Some).reduce(
            || None,
            |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(op(a, b)),
                (a, None) => a,
                (None, b) => b,
            },
        )
    }

    /// Folds the items of every piece (sequentially, starting from `identity()`): a parallel
    /// iterator of the pieces' results, in order (reduce or sum them next).
    fn fold<T, ID, F>(self, identity: ID, fold_op: F) -> Fold<Self, ID, F>
    where
        T: Send,
        ID: Fn() -> T + Sync + Send,
        F: Fn(T, Self::Item) -> T + Sync + Send,
    {
        Fold::new(self, identity, fold_op)
    }

    /// Folds the items of every piece (sequentially, starting from a clone of `init`): a
    /// parallel iterator of the pieces' results, in order.
    fn fold_with<F, T>(self, init: T, fold_op: F) -> FoldWith<Self, T, F>
    where
        F: Fn(T, Self::Item) -> T + Sync + Send,
        T: Send + Clone,
    {
        FoldWith::new(self, init, fold_op)
    }

    /// Folds the items of every piece with a fallible `fold_op` (starting from
    /// `identity()`; a piece stops at its first failure): a parallel iterator of the pieces'
    /// results.
    fn try_fold<T, R, ID, F>(self, identity: ID, fold_op: F) -> TryFold<Self, R, ID, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        R: Try<Output = T> + Send,
    {
        TryFold::new(self, identity, fold_op)
    }

    /// [`try_fold`](Self::try_fold) starting from a clone of `init`.
    fn try_fold_with<F, T, R>(self, init: T, fold_op: F) -> TryFoldWith<Self, R, F>
    where
        F: Fn(T, Self::Item) -> R + Sync + Send,
        R: Try<Output = T> + Send,
        T: Clone + Send,
    {
        TryFoldWith::new(self, init, fold_op)
    }

    /// Reduces fallible items with a fallible `op`, `identity()` being its neutral element;
    /// the first failure seen (not necessarily the first in order) stops the computation and
    /// is returned.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let sum = (1..=100u32).into_par_iter().map(Some).try_reduce(|| 0, |a, b| a.checked_add(b));
    /// assert_eq!(sum, Some(5050));
    /// let r: Result<u8, &str> =
    ///     (1..=100u8).into_par_iter().map(Ok).try_reduce(|| 0, |a, b| a.checked_add(b).ok_or("big"));
    /// assert_eq!(r, Err("big"));
    /// ```
    fn try_reduce<T, OP, ID>(self, identity: ID, op: OP) -> Self::Item
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        ID: Fn() -> T + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        try_reduce::try_reduce(self, &identity, &op)
    }

    /// [`try_reduce`](Self::try_reduce) without an identity: `None` for an empty iterator.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let r = (1..=4u32).into_par_iter().map(Ok::<u32, ()>).try_reduce_with(|a, b| Ok(a * b));
    /// assert_eq!(r, Some(Ok(24)));
    /// ```
    fn try_reduce_with<T, OP>(self, op: OP) -> Option<Self::Item>
    where
        OP: Fn(T, T) -> Self::Item + Sync + Send,
        Self::Item: Try<Output = T>,
    {
        try_reduce::try_reduce_with(self, &op)
    }

    /// The sum of the items.
    fn sum<S>(self) -> S
    where
        S: Send + Sum<Self::Item> + Sum<S>,
    {
        self.drive_unindexed(reduce::SumConsumer::<S>::new())
    }

    /// The product of the items.
    fn product<P>(self) -> P
    where
        P: Send + Product<Self::Item> + Product<P>,
    {
        self.drive_unindexed(reduce::ProductConsumer::<P>::new())
    }

    /// The number of items.
    fn count(self) -> usize {
        self.map(|_| 1usize).sum()
    }

    /// The minimum (the first one of equal minima), `None` if empty.
    fn min(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.reduce_with(|a, b| if b < a { b } else { a })
    }

    /// The maximum (the last one of equal maxima), `None` if empty.
    fn max(self) -> Option<Self::Item>
    where
        Self::Item: Ord,
    {
        self.reduce_with(|a, b| if b >= a { b } else { a })
    }

    /// The minimum by a comparison (the first one of equal minima).
    fn min_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> Ordering + Sync + Send,
    {
        self.reduce_with(|a, b| if f(&b, &a) == Ordering::Less { b } else { a })
    }

    /// The maximum by a comparison (the last one of equal maxima).
    fn max_by<F>(self, f: F) -> Option<Self::Item>
    where
        F: Fn(&Self::Item, &Self::Item) -> Ordering + Sync + Send,
    {
        self.reduce_with(|a, b| if f(&b, &a) == Ordering::Less { a } else { b })
    }

    /// The item with the minimum key (the first one of equal minima).
    fn min_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.map(|x| (f(&x), x))
            .reduce_with(|a, b| if b.0 < a.0 { b } else { a })
            .map(|p| p.1)
    }

    /// The item with the maximum key (the last one of equal maxima).
    fn max_by_key<K, F>(self, f: F) -> Option<Self::Item>
    where
        K: Ord + Send,
        F: Fn(&Self::Item) -> K + Sync + Send,
    {
        self.map(|x| (f(&x), x))
            .reduce_with(|a, b| if b.0 >= a.0 { b } else { a })
            .map(|p| p.1)
    }

    /// Whether `predicate` holds for some item; stops early once one is found.
    fn any<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&b| b).is_some()
    }

    /// Whether `predicate` holds for every item; stops early at the first counterexample.
    fn all<P>(self, predicate: P) -> bool
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate).find_any(|&b| !b).is_none()
    }

    /// Some item for which `predicate` holds (not necessarily the first); stops early.
    fn find_any<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find_any(self, &predicate)
    }

    /// The first item (in sequence order) for which `predicate` holds; pieces after an item
    /// already found stop early.
    fn find_first<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find_first(self, &predicate)
    }

    /// The last item (in sequence order) for which `predicate` holds; pieces before an item
    /// already found stop early.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// assert_eq!((0..100u32).into_par_iter().find_last(|x| x % 7 == 0), Some(98));
    /// ```
    fn find_last<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        find::find_last(self, &predicate)
    }

    /// Some item for which `predicate` holds: [`find_any`](Self::find_any) (deprecated, as
    /// rayon's).
    #[deprecated(note = "parallel `find` does not search in order -- use `find_any`, \
                         `find_first`, or `find_last`")]
    fn find<P>(self, predicate: P) -> Option<Self::Item>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        self.find_any(predicate)
    }

    /// The last `Some` result of `f` in sequence order.
    fn find_map_last<R, F>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
    {
        self.filter_map(f).find_last(|_| true)
    }

    /// The `Some` values of an iterator over options, until a `None` is seen (in any piece;
    /// the items after it in sequence order may or may not be seen).
    fn while_some<T>(self) -> WhileSome<Self>
    where
        Self: ParallelIterator<Item = Option<T>>,
        T: Send,
    {
        WhileSome::new(self)
    }

    /// After a panic in some piece, the other pieces stop consuming items early.
    fn panic_fuse(self) -> PanicFuse<Self> {
        PanicFuse::new(self)
    }

    /// A clone of `element` between every two items.
    fn intersperse(self, element: Self::Item) -> Intersperse<Self>
    where
        Self::Item: Clone,
    {
        Intersperse::new(self, element)
    }

    /// `n` items (all of them if fewer), not necessarily the first ones; their order is kept.
    fn take_any(self, n: usize) -> TakeAny<Self> {
        TakeAny::new(self, n)
    }

    /// All but `n` items (none if fewer), not necessarily the first ones skipped; the order
    /// of the others is kept.
    fn skip_any(self, n: usize) -> SkipAny<Self> {
        SkipAny::new(self, n)
    }

    /// Items while `predicate` holds; once it fails for some item (in any piece), no more
    /// items are taken.
    fn take_any_while<P>(self, predicate: P) -> TakeAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        TakeAnyWhile::new(self, predicate)
    }

    /// Items skipped while `predicate` holds; once it fails for some item (in any piece),
    /// every item from then on is kept.
    fn skip_any_while<P>(self, predicate: P) -> SkipAnyWhile<Self, P>
    where
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        SkipAnyWhile::new(self, predicate)
    }

    /// The items as the pieces' vectors, in order (no concatenation).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let list = (0..100u32).into_par_iter().collect_vec_list();
    /// let all: Vec<u32> = list.into_iter().flatten().collect();
    /// assert_eq!(all, (0..100).collect::<Vec<_>>());
    /// ```
    fn collect_vec_list(self) -> LinkedList<Vec<Self::Item>> {
        collect::collect_list(self)
    }

    /// Some `Some` result of `f` (not necessarily the first); stops early.
    fn find_map_any<R, F>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
    {
        self.filter_map(f).find_any(|_| true)
    }

    /// The first `Some` result of `f` in sequence order.
    fn find_map_first<R, F>(self, f: F) -> Option<R>
    where
        R: Send,
        F: Fn(Self::Item) -> Option<R> + Sync + Send,
    {
        self.filter_map(f).find_first(|_| true)
    }

    /// Collects into a collection (a `Vec` keeps the order).
    fn collect<C>(self) -> C
    where
        C: FromParallelIterator<Self::Item>,
    {
        C::from_par_iter(self)
    }

    /// Splits the items into those for which `predicate` holds and the others (order
    /// kept).
    fn partition<A, B, P>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<Self::Item>,
        B: Default + Send + ParallelExtend<Self::Item>,
        P: Fn(&Self::Item) -> bool + Sync + Send,
    {
        let tagged: Vec<(bool, Self::Item)> = self.map(|x| (predicate(&x), x)).collect();
        let (mut yes, mut no) = (Vec::new(), Vec::new());
        for (p, x) in tagged {
            if p {
                yes.push(x);
            } else {
                no.push(x);
            }
        }
        let (mut a, mut b) = (A::default(), B::default());
        a.par_extend(yes);
        b.par_extend(no);
        (a, b)
    }

    /// Maps every item to `Either::Left` or `Either::Right`, collecting each side into its
    /// collection (order kept).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// use zonal::iter::Either;
    /// let (evens, odds): (Vec<u32>, Vec<String>) = (0..6u32)
    ///     .into_par_iter()
    ///     .partition_map(|x| if x % 2 == 0 { Either::Left(x) } else { Either::Right(x.to_string()) });
    /// assert_eq!(evens, [0, 2, 4]);
    /// assert_eq!(odds, ["1", "3", "5"]);
    /// ```
    fn partition_map<A, B, P, L, R>(self, predicate: P) -> (A, B)
    where
        A: Default + Send + ParallelExtend<L>,
        B: Default + Send + ParallelExtend<R>,
        P: Fn(Self::Item) -> Either<L, R> + Sync + Send,
        L: Send,
        R: Send,
    {
        collect::partition_map(self, predicate)
    }

    /// Splits pairs into two collections (order kept).
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: ParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
        FromA: Default + Send + ParallelExtend<A>,
        FromB: Default + Send + ParallelExtend<B>,
    {
        collect::unzip(self)
    }
}

/// A parallel iterator with an exact length whose pieces know their positions (rayon's
/// `IndexedParallelIterator`).
#[allow(clippy::len_without_is_empty)]
pub trait IndexedParallelIterator: ParallelIterator {
    /// The number of items.
    fn len(&self) -> usize;

    /// Hands this iterator's producer to `callback` (the plumbing; see [`plumbing`]).
    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output;

    /// Runs the iterator into `consumer`, any [`Consumer`], split at the same indices as its
    /// producer (the plumbing; see [`plumbing`]). Provided here (through
    /// [`with_producer`](Self::with_producer) and [`plumbing::bridge_producer_consumer`]);
    /// rayon's users implement it, usually as [`plumbing::bridge`]`(self, consumer)`.
    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        let len = self.len();
        self.with_producer(BridgeCallback { len, consumer })
    }

    /// Pairs every item with its index.
    fn enumerate(self) -> Enumerate<Self> {
        Enumerate::new(self)
    }

    /// Pairs the items of both iterators, up to the shorter one's length.
    fn zip<Z>(self, other: Z) -> Zip<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        Zip::new(self, other.into_par_iter())
    }

    /// Pairs the items of both iterators, which must have the same length.
    ///
    /// # Panics
    /// If the lengths differ.
    fn zip_eq<Z>(self, other: Z) -> ZipEq<Self, Z::Iter>
    where
        Z: IntoParallelIterator,
        Z::Iter: IndexedParallelIterator,
    {
        ZipEq::new(self, other.into_par_iter())
    }

    /// This iterator's and `other`'s items in turns, then the rest of the longer one.
    fn interleave<I>(self, other: I) -> Interleave<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
    {
        Interleave::new(self, other.into_par_iter())
    }

    /// This iterator's and `other`'s items in turns, up to the end of the shorter one.
    fn interleave_shortest<I>(self, other: I) -> InterleaveShortest<Self, I::Iter>
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
    {
        InterleaveShortest::new(self, other.into_par_iter())
    }

    /// Every `step`-th item, starting with the first.
    ///
    /// # Panics
    /// If `step` is 0.
    fn step_by(self, step: usize) -> StepBy<Self> {
        StepBy::new(self, step)
    }

    /// Runs as a sequence of blocks, each in parallel: the first as large as the pool, then
    /// each twice the one before; a short-circuiting consumer stops between blocks.
    fn by_exponential_blocks(self) -> ExponentialBlocks<Self> {
        ExponentialBlocks::new(self)
    }

    /// Runs as a sequence of blocks of `block_size` items, each in parallel.
    ///
    /// # Panics
    /// If `block_size` is 0.
    fn by_uniform_blocks(self, block_size: usize) -> UniformBlocks<Self> {
        UniformBlocks::new(self, block_size)
    }

    /// Every chunk of `chunk_size` items (the last one may be shorter) folded from
    /// `identity()`.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn fold_chunks<T, ID, F>(
        self,
        chunk_size: usize,
        identity: ID,
        fold_op: F,
    ) -> FoldChunks<Self, ID, F>
    where
        ID: Fn() -> T + Send + Sync,
        F: Fn(T, Self::Item) -> T + Send + Sync,
        T: Send,
    {
        FoldChunks::new(self, chunk_size, identity, fold_op)
    }

    /// Every chunk of `chunk_size` items folded from a clone of `init`.
    ///
    /// # Panics
    /// If `chunk_size` is 0.
    fn fold_chunks_with<T, F>(
        self,
        chunk_size: usize,
        init: T,
        fold_op: F,
    ) -> FoldChunksWith<Self, T, F>
    where
        T: Send + Clone,
        F: Fn(T, Self::Item) -> T + Send + Sync,
    {
        FoldChunksWith::new(self, chunk_size, init, fold_op)
    }

    /// Compares lexicographically with `other`'s items (as `Iterator::cmp`).
    ///
    /// ```
    /// use zonal::prelude::*;
    /// use std::cmp::Ordering;
    /// assert_eq!((0..3u32).into_par_iter().cmp(0..4u32), Ordering::Less);
    /// assert_eq!((0..3u32).into_par_iter().cmp(vec![0, 2, 0]), Ordering::Less);
    /// ```
    fn cmp<I>(self, other: I) -> Ordering
    where
        I: IntoParallelIterator<Item = Self::Item>,
        I::Iter: IndexedParallelIterator,
        Self::Item: Ord,
    {
        let other = other.into_par_iter();
        let by_len = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(x, y)| Ord::cmp(&x, &y))
            .find_first(|&o| o != Ordering::Equal)
            .unwrap_or(by_len)
    }

    /// Compares lexicographically with `other`'s items (as `Iterator::partial_cmp`).
    fn partial_cmp<I>(self, other: I) -> Option<Ordering>
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        let other = other.into_par_iter();
        let by_len = self.len().cmp(&other.len());
        self.zip(other)
            .map(|(x, y)| PartialOrd::partial_cmp(&x, &y))
            .find_first(|&o| o != Some(Ordering::Equal))
            .unwrap_or(Some(by_len))
    }

    /// Whether the items equal `other`'s (as `Iterator::eq`).
    fn eq<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        let other = other.into_par_iter();
        self.len() == other.len() && self.zip(other).all(|(x, y)| x.eq(&y))
    }

    /// Whether the items differ from `other`'s (as `Iterator::ne`).
    fn ne<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialEq<I::Item>,
    {
        !self.eq(other)
    }

    /// Whether the items are lexicographically less than `other`'s.
    fn lt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Less)
    }

    /// Whether the items are lexicographically less than or equal to `other`'s.
    fn le<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(Ordering::Less | Ordering::Equal)
        )
    }

    /// Whether the items are lexicographically greater than `other`'s.
    fn gt<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        self.partial_cmp(other) == Some(Ordering::Greater)
    }

    /// Whether the items are lexicographically greater than or equal to `other`'s.
    fn ge<I>(self, other: I) -> bool
    where
        I: IntoParallelIterator,
        I::Iter: IndexedParallelIterator,
        Self::Item: PartialOrd<I::Item>,
    {
        matches!(
            self.partial_cmp(other),
            Some(Ordering::Greater | Ordering::Equal)
        )
    }

    /// The index of some item for which `predicate` holds:
    /// [`position_any`](Self::position_any) (deprecated, as rayon's).
    #[deprecated(
        note = "parallel `position` does not search in order -- use `position_any`, \
                `position_first`, or `position_last`"
    )]
    fn position<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.position_any(predicate)
    }

    /// The index of the last item for which `predicate` holds.
    fn position_last<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_last(|p| p.1)
            .map(|p| p.0)
    }

    /// The indexes of the items for which `predicate` holds, in order.
    fn positions<P>(self, predicate: P) -> Positions<Self, P>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        Positions::new(self, predicate)
    }

    /// Unzips pairs into `left` and `right` (both cleared first), in order.
    ///
    /// ```
    /// use zonal::prelude::*;
    /// let (mut a, mut b) = (vec![9], Vec::new());
    /// (0..3u32).into_par_iter().map(|x| (x, x * 10)).unzip_into_vecs(&mut a, &mut b);
    /// assert_eq!((a, b), (vec![0, 1, 2], vec![0, 10, 20]));
    /// ```
    fn unzip_into_vecs<A, B>(self, left: &mut Vec<A>, right: &mut Vec<B>)
    where
        Self: IndexedParallelIterator<Item = (A, B)>,
        A: Send,
        B: Send,
    {
        left.clear();
        right.clear();
        let (mut a, mut b): (Vec<A>, Vec<B>) = self.unzip();
        left.append(&mut a);
        right.append(&mut b);
    }

    /// The items in reverse order.
    fn rev(self) -> Rev<Self> {
        Rev::new(self)
    }

    /// All but the first `n` items.
    fn skip(self, n: usize) -> Skip<Self> {
        Skip::new(self, n)
    }

    /// The first `n` items.
    fn take(self, n: usize) -> Take<Self> {
        Take::new(self, n)
    }

    /// Never splits into pieces shorter than `min`.
    fn with_min_len(self, min: usize) -> MinLen<Self> {
        MinLen::new(self, min)
    }

    /// Always splits pieces longer than `max`.
    fn with_max_len(self, max: usize) -> MaxLen<Self> {
        MaxLen::new(self, max)
    }

    /// The items in `Vec`s of `size` (the last one may be shorter).
    ///
    /// # Panics
    /// If `size` is 0.
    fn chunks(self, size: usize) -> Chunks<Self> {
        Chunks::new(self, size)
    }

    /// The index of some item for which `predicate` holds; stops early.
    fn position_any<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_any(|p| p.1)
            .map(|p| p.0)
    }

    /// The index of the first item for which `predicate` holds.
    fn position_first<P>(self, predicate: P) -> Option<usize>
    where
        P: Fn(Self::Item) -> bool + Sync + Send,
    {
        self.map(predicate)
            .enumerate()
            .find_first(|p| p.1)
            .map(|p| p.0)
    }

    /// Collects into `target` (cleared first), in order.
    fn collect_into_vec(self, target: &mut Vec<Self::Item>) {
        target.clear();
        target.par_extend(self);
    }
}

/// Conversion into a parallel iterator (rayon's `IntoParallelIterator`): `into_par_iter`.
pub trait IntoParallelIterator {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items.
    type Item: Send;

    /// Converts `self` into a parallel iterator.
    fn into_par_iter(self) -> Self::Iter;
}

impl<T: ParallelIterator> IntoParallelIterator for T {
    type Iter = T;
    type Item = T::Item;
    fn into_par_iter(self) -> T {
        self
    }
}

/// `par_iter()`: a parallel iterator over references, for every `C` with
/// `&C: IntoParallelIterator` (rayon's `IntoParallelRefIterator`).
pub trait IntoParallelRefIterator<'data> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (references).
    type Item: Send + 'data;

    /// A parallel iterator over references to the items.
    fn par_iter(&'data self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefIterator<'data> for I
where
    &'data I: IntoParallelIterator,
{
    type Iter = <&'data I as IntoParallelIterator>::Iter;
    type Item = <&'data I as IntoParallelIterator>::Item;
    fn par_iter(&'data self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// `par_iter_mut()`: a parallel iterator over mutable references, for every `C` with
/// `&mut C: IntoParallelIterator` (rayon's `IntoParallelRefMutIterator`).
pub trait IntoParallelRefMutIterator<'data> {
    /// The iterator.
    type Iter: ParallelIterator<Item = Self::Item>;
    /// Its items (mutable references).
    type Item: Send + 'data;

    /// A parallel iterator over mutable references to the items.
    fn par_iter_mut(&'data mut self) -> Self::Iter;
}

impl<'data, I: 'data + ?Sized> IntoParallelRefMutIterator<'data> for I
where
    &'data mut I: IntoParallelIterator,
{
    type Iter = <&'data mut I as IntoParallelIterator>::Iter;
    type Item = <&'data mut I as IntoParallelIterator>::Item;
    fn par_iter_mut(&'data mut self) -> Self::Iter {
        self.into_par_iter()
    }
}

/// Building a collection from a parallel iterator ([`ParallelIterator::collect`]).
pub trait FromParallelIterator<T: Send> {
    /// Builds `Self` from the items.
    fn from_par_iter<I>(par_iter: I) -> Self
    where
        I: IntoParallelIterator<Item = T>;
}

/// Extending a collection from a parallel iterator.
pub trait ParallelExtend<T: Send> {
    /// Adds the items (in order, for sequences).
    fn par_extend<I>(&mut self, par_iter: I)
    where
        I: IntoParallelIterator<Item = T>;
}

/// The fallible values the `try_*` methods accept (rayon's `Try`, a stable stand-in for
/// `std::ops::Try`): `Option<T>`, `Result<T, E>` and `ControlFlow<B, C>`.
pub trait Try: Sized {
    /// The success value (`T`, `T`, `C`).
    type Output;
    /// The failure, without a success value (`Option<Infallible>`, `Result<Infallible, E>`,
    /// `ControlFlow<B, Infallible>`).
    type Residual;

    /// A success.
    fn from_output(output: Self::Output) -> Self;
    /// A failure.
    fn from_residual(residual: Self::Residual) -> Self;
    /// `Continue` with the success value, or `Break` with the failure.
    fn branch(self) -> ControlFlow<Self::Residual, Self::Output>;
}

/// The former name of [`Try`].
pub use self::Try as TryResult;

impl<T> Try for Option<T> {
    type Output = T;
    type Residual = Option<std::convert::Infallible>;
    fn from_output(output: T) -> Self {
        Some(output)
    }
    fn from_residual(_: Self::Residual) -> Self {
        None
    }
    fn branch(self) -> ControlFlow<Self::Residual, T> {
        match self {
            Some(t) => ControlFlow::Continue(t),
            None => ControlFlow::Break(None),
        }
    }
}

impl<T, E> Try for Result<T, E> {
    type Output = T;
    type Residual = Result<std::convert::Infallible, E>;
    fn from_output(output: T) -> Self {
        Ok(output)
    }
    fn from_residual(residual: Self::Residual) -> Self {
        match residual {
            Err(e) => Err(e),
            Ok(never) => match never {},
        }
    }
    fn branch(self) -> ControlFlow<Self::Residual, T> {
        match self {
            Ok(t) => ControlFlow::Continue(t),
            Err(e) => ControlFlow::Break(Err(e)),
        }
    }
}

impl<B, C> Try for ControlFlow<B, C> {
    type Output = C;
    type Residual = ControlFlow<B, std::convert::Infallible>;
    fn from_output(output: C) -> Self {
        ControlFlow::Continue(output)
    }
    fn from_residual(residual: Self::Residual) -> Self {
        match residual {
            ControlFlow::Break(b) => ControlFlow::Break(b),
            ControlFlow::Continue(never) => match never {},
        }
    }
    fn branch(self) -> ControlFlow<Self::Residual, C> {
        match self {
            ControlFlow::Continue(c) => ControlFlow::Continue(c),
            ControlFlow::Break(b) => ControlFlow::Break(ControlFlow::Break(b)),
        }
    }
}
