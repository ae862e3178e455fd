//! The machinery under the parallel iterators, with rayon's traits and names (rayon's
//! `iter::plumbing`: a custom iterator or consumer written against rayon's plumbing compiles
//! with `use zonal::iter::plumbing::*`): producers (splittable sources), consumers
//! (splittable sinks with a sequential [`Folder`] and a [`Reducer`] joining the results of
//! two halves), and the bridges that split them together.
//!
//! - An *indexed* iterator ([`IndexedParallelIterator`]) hands a [`Producer`] (exact length,
//!   `split_at(index)`) to a [`ProducerCallback`] (`with_producer`);
//!   [`bridge_producer_consumer`] splits the producer and a [`Consumer`] together, at the
//!   same indices ([`Consumer::split_at`]); [`bridge`] does it for an indexed iterator, with
//!   its length (an indexed iterator's `drive` and `drive_unindexed`).
//! - An unindexed source is an [`UnindexedProducer`] (`split` in two, roughly), run by
//!   [`bridge_unindexed`] into an [`UnindexedConsumer`], which splits without an index
//!   ([`UnindexedConsumer::split_off_left`]: the returned consumer takes the items before
//!   those of the one it was split from). Every
//!   [`drive_unindexed`](super::ParallelIterator::drive_unindexed) takes an unindexed
//!   consumer; [`drive`](IndexedParallelIterator::drive) takes any consumer.
//! - Either way, [`Reducer::reduce`] is called with the results of the left piece and the
//!   right piece in that order, so order-sensitive consumers (collect, `find_first`) see
//!   the items in sequence order. A consumer whose result does not depend on where it is
//!   split (Zonal's own: for_each, sum, reduce, collect's lists, find) implements
//!   `split_at` as `split_off_left`, ignoring the index.
//!
//! ## Splitting
//! Splitting is adaptive, as rayon's: a piece starts with about
//! [`zonal_runtime::current_num_threads`] splits, halves them at every
//! split, and gets them back when it was stolen (it runs on another worker than the one
//! that split it off). It never splits below [`Producer::min_len`] and always splits above
//! [`Producer::max_len`] (`with_min_len` / `with_max_len`) unless that would make a piece
//! shorter than `min_len`, as rayon's.
//!
//! Producers are driven as rayon's bridge drives them, which producers written for rayon
//! rely on: a producer is only ever split strictly inside, `split_at(index)` with
//! `0 < index < len` (`len` its own length), so never one of fewer than 2 items. The
//! bridge splits a piece at `len / 2`; the node cut's points fall strictly inside (every
//! part holds at least `min_len` items, or there is no cut); and Zonal's adaptors never
//! pass a cut at either end of one of their bases on to it: `zip` keeps both bases whole
//! (a split strictly inside the shorter is strictly inside both), `chain`, `skip`, `take`,
//! `interleave` and `intersperse` hand a base whole to one side instead, and `chunks`,
//! `fold_chunks` and the blocks of `by_*_blocks` leave the last chunk unsplit.
//!
//! ## NUMA: the node cut
//! At the top level of an indexed iterator run on a worker of a pool with several nodes, in
//! an *unplaced* computation (one entered from outside the pool without a named origin,
//! whose origin the pool chose), [`bridge_producer_consumer`] (and so [`bridge`], and every
//! indexed iterator, Zonal's or a user's) first cuts the index space with
//! [`zonal_runtime::current_node_partition`] (one contiguous part per
//! node, in proportion to its workers) and spawns each part with its node as the task's
//! origin ([`Scope::spawn_on`](zonal_runtime::Scope::spawn_on)), with the consumer split at
//! the same indices ([`Consumer::split_at`]): each part is the placed
//! root of a computation of its own, which the conservative policies keep in its node's
//! zone; each part is then split adaptively. Iterators started from inside another
//! iterator's closures (nested parallelism, `flat_map`) skip the cut, and so does an
//! iterator inside a *placed* computation ([`zonal_runtime::TaskInfo::placed`]: rooted with
//! `spawn_on`, an origin option or `spawn_pinned`, or a part of a cut): the user put that
//! computation on its node, and a cut would root parts on every node, out of its zone.
//! An iterator started on a thread that is no worker runs on the global pool
//! ([`zonal_runtime::in_worker`]), cut and all, as rayon's run on its global pool.

use std::cell::Cell;
use std::ops::Range;
use std::sync::Mutex;

use zonal_runtime::{
    current_node_partition, current_num_threads, current_worker_index, in_worker, join,
    join_context,
};
use zonal_topology::NodeId;

use super::IndexedParallelIterator;

/// A sequential sink: consumes items one at a time, then yields its result.
pub trait Folder<T>: Sized {
    /// What [`complete`](Self::complete) returns.
    type Result;

    /// Consumes one item.
    #[must_use]
    fn consume(self, item: T) -> Self;

    /// Consumes items until the iterator ends or the folder is [`full`](Self::full).
    #[must_use]
    fn consume_iter<I: IntoIterator<Item = T>>(mut self, iter: I) -> Self {
        for item in iter {
            self = self.consume(item);
            if self.full() {
                break;
            }
        }
        self
    }

    /// The result.
    fn complete(self) -> Self::Result;

    /// Whether further items would be ignored (a short-circuiting consumer is done).
    fn full(&self) -> bool;
}

/// [`Consumer::split_at`] for a consumer whose halves do not depend on the index: its
/// unindexed split ([`UnindexedConsumer::split_off_left`], [`UnindexedConsumer::to_reducer`]).
pub(crate) fn split_ignoring_index<T, C: UnindexedConsumer<T>>(consumer: C) -> (C, C, C::Reducer) {
    let left = consumer.split_off_left();
    let reducer = consumer.to_reducer();
    (left, consumer, reducer)
}

/// Feeds `iter` to `folder`, checking [`full`](Folder::full) *before* each item (the default
/// `consume_iter` checks after): for folders that other pieces fill through shared state
/// (`take_any`, `take_any_while`, `while_some`, `panic_fuse`), which must not take an item
/// once another piece has made them full.
pub(crate) fn consume_until_full<T, F: Folder<T>>(
    mut folder: F,
    iter: impl IntoIterator<Item = T>,
) -> F {
    for item in iter {
        if folder.full() {
            break;
        }
        folder = folder.consume(item);
    }
    folder
}

/// Joins the results of two adjacent pieces: `left`'s items came before `right`'s.
pub trait Reducer<R> {
    /// The joined result.
    fn reduce(self, left: R, right: R) -> R;
}

/// A splittable sink for items of type `Item` (rayon's `Consumer`): what an indexed
/// iterator's producer is bridged to, split at the same indices as the producer.
pub trait Consumer<Item>: Send + Sized {
    /// The sequential sink of one piece.
    type Folder: Folder<Item, Result = Self::Result>;
    /// Joins the results of two pieces.
    type Reducer: Reducer<Self::Result>;
    /// The result.
    type Result: Send;

    /// Splits in two at `index` (relative to this consumer's first item): a consumer for
    /// the first `index` items, one for the rest, and the reducer that joins their results
    /// (left, then right).
    fn split_at(self, index: usize) -> (Self, Self, Self::Reducer);

    /// The sequential sink.
    fn into_folder(self) -> Self::Folder;

    /// Whether further items would be ignored (a short-circuiting consumer is done).
    fn full(&self) -> bool;
}

/// A consumer that can also be split without knowing where (rayon's `UnindexedConsumer`):
/// what every [`ParallelIterator::drive_unindexed`](super::ParallelIterator::drive_unindexed)
/// takes, for the pieces of unindexed producers.
pub trait UnindexedConsumer<I>: Consumer<I> {
    /// Splits off a consumer for the items *before* those that `self` will see (rayon
    /// splits at an unknown point: the left consumer takes the first part of the items).
    #[must_use]
    fn split_off_left(&self) -> Self;

    /// The reducer for joining the result of a consumer split off `self` (left) with that
    /// of `self` (right).
    fn to_reducer(&self) -> Self::Reducer;
}

/// A splittable source with an exact length (the source of an indexed iterator), with
/// rayon's items and defaults: a producer written for rayon compiles here unchanged.
///
/// A producer does not know its length: whoever holds it does (rayon's design). The
/// iterator that hands it out reports it ([`IndexedParallelIterator::len`], read by
/// [`bridge`] before [`with_producer`](IndexedParallelIterator::with_producer)), the caller
/// of [`bridge_producer_consumer`] passes it, and an adaptor whose producer needs its base's
/// length (to split from the end, or across two bases) stores it when it is created. Where
/// a count is needed at run time, [`into_iter`](Self::into_iter) is exact-sized.
///
/// A producer as written for rayon (the numbers `start..end`, doubled), handed out by an
/// indexed iterator that knows its length:
///
/// ```
/// use zonal::iter::plumbing::{bridge, Producer, ProducerCallback, UnindexedConsumer};
/// use zonal::prelude::*;
///
/// struct Doubles {
///     start: usize,
///     end: usize,
/// }
///
/// impl Producer for Doubles {
///     type Item = usize;
///     type IntoIter = std::iter::Map<std::ops::Range<usize>, fn(usize) -> usize>;
///
///     fn into_iter(self) -> Self::IntoIter {
///         (self.start..self.end).map(|x| 2 * x)
///     }
///
///     fn split_at(self, index: usize) -> (Self, Self) {
///         let mid = self.start + index;
///         (
///             Doubles { start: self.start, end: mid },
///             Doubles { start: mid, end: self.end },
///         )
///     }
/// }
///
/// struct ParDoubles(usize);
///
/// impl ParallelIterator for ParDoubles {
///     type Item = usize;
///     fn drive_unindexed<C: UnindexedConsumer<usize>>(self, consumer: C) -> C::Result {
///         bridge(self, consumer)
///     }
///     fn opt_len(&self) -> Option<usize> {
///         Some(self.0)
///     }
/// }
///
/// impl IndexedParallelIterator for ParDoubles {
///     fn len(&self) -> usize {
///         self.0
///     }
///     fn with_producer<CB: ProducerCallback<usize>>(self, callback: CB) -> CB::Output {
///         callback.callback(Doubles { start: 0, end: self.0 })
///     }
/// }
///
/// let v: Vec<usize> = ParDoubles(1000).rev().collect();
/// assert_eq!(v, (0..1000).rev().map(|x| 2 * x).collect::<Vec<_>>());
/// assert_eq!(ParDoubles(1000).sum::<usize>(), 999 * 1000);
/// ```
pub trait Producer: Send + Sized {
    /// The items.
    type Item;
    /// The sequential iterator over the items: double-ended (for `rev`) and exact-sized, as
    /// rayon's.
    type IntoIter: Iterator<Item = Self::Item> + DoubleEndedIterator + ExactSizeIterator;

    /// The sequential iterator.
    fn into_iter(self) -> Self::IntoIter;

    /// Never split into pieces shorter than this (`with_min_len`).
    fn min_len(&self) -> usize {
        1
    }

    /// Always split pieces longer than this (`with_max_len`).
    fn max_len(&self) -> usize {
        usize::MAX
    }

    /// Splits at `index` (`0 ..= N`, `N` the number of items): the first `index` items,
    /// and the rest. Zonal's bridge and adaptors only ask for `0 < index < N` (module
    /// docs, "Splitting"), as rayon's bridge; a producer handed to other adaptors should
    /// take the ends too.
    fn split_at(self, index: usize) -> (Self, Self);

    /// Feeds every item to `folder` (until it is full).
    fn fold_with<F: Folder<Self::Item>>(self, folder: F) -> F {
        folder.consume_iter(self.into_iter())
    }
}

/// A splittable source without an exact length.
pub trait UnindexedProducer: Send + Sized {
    /// The items.
    type Item;

    /// Splits in two, roughly halves; `None` when too small to split.
    fn split(self) -> (Self, Option<Self>);

    /// Feeds every item to `folder` (until it is full).
    fn fold_with<F: Folder<Self::Item>>(self, folder: F) -> F;
}

/// What an indexed iterator hands its [`Producer`] to (a callback, because the producer's
/// type may borrow from the iterator).
pub trait ProducerCallback<T> {
    /// The callback's result.
    type Output;
    /// Runs with the producer.
    fn callback<P: Producer<Item = T>>(self, producer: P) -> Self::Output;
}

thread_local! {
    /// Set while this thread runs an iterator's closures: iterators started from there are
    /// nested and skip the node cut.
    static IN_ITER: Cell<bool> = const { Cell::new(false) };
}

/// Marks the current thread as running an iterator's closures until dropped.
struct NestGuard(bool);

impl NestGuard {
    fn enter() -> Self {
        NestGuard(IN_ITER.with(|c| c.replace(true)))
    }
}

impl Drop for NestGuard {
    fn drop(&mut self) {
        let prev = self.0;
        IN_ITER.with(|c| c.set(prev));
    }
}

/// The adaptive splitter (module docs).
#[derive(Clone, Copy, Debug)]
struct Splitter {
    splits: usize,
    min: usize,
    max: usize,
}

impl Splitter {
    fn new(splits: usize, min: usize, max: usize) -> Self {
        Splitter {
            splits,
            min: min.max(1),
            max: max.max(1),
        }
    }

    /// Whether to split a piece of `len` items; `stolen`: it runs on another worker than
    /// the one that split it off.
    fn try_split(&mut self, len: usize, stolen: bool) -> bool {
        // Never a piece under `min` (so never one of fewer than 2 items), even above `max`
        // (rayon's `with_max_len`: "unless that would put it below `with_min_len`").
        if len < 2 || len / 2 < self.min {
            return false;
        }
        if len > self.max {
            self.splits /= 2;
            return true;
        }
        self.try_split_unindexed(stolen)
    }

    fn try_split_unindexed(&mut self, stolen: bool) -> bool {
        if stolen {
            self.splits = current_num_threads().max(self.splits / 2);
            true
        } else if self.splits > 0 {
            self.splits /= 2;
            true
        } else {
            false
        }
    }
}

/// Whether the task running here belongs to a placed computation (its origin named with
/// `spawn_on`, an origin option, `spawn_pinned`, or a node part of an iterator): the node
/// cut would root new computations on other nodes, out of its origin's zone.
fn in_placed_computation() -> bool {
    zonal_runtime::current_task().is_some_and(|t| t.placed)
}

/// Runs an indexed iterator into `consumer` (rayon's `bridge`): hands `par_iter`'s producer
/// to [`bridge_producer_consumer`], with `par_iter`'s length. An indexed iterator's
/// `drive_unindexed` and `drive` are usually this.
pub fn bridge<I, C>(par_iter: I, consumer: C) -> C::Result
where
    I: IndexedParallelIterator,
    C: Consumer<I::Item>,
{
    let len = par_iter.len();
    par_iter.with_producer(BridgeCallback { len, consumer })
}

/// Runs `producer` (of `len` items) into `consumer` (rayon's `bridge_producer_consumer`):
/// splits them together with [`Consumer::split_at`], first by node (at the top level of an
/// unplaced computation on a worker, module docs), then adaptively; the results are reduced
/// left to right.
pub fn bridge_producer_consumer<P, C>(len: usize, producer: P, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if current_worker_index().is_none() {
        // A plain thread: run on the global pool, node cut included (as rayon does).
        return in_worker(move || bridge_producer_consumer(len, producer, consumer));
    }
    let min = producer.min_len().max(1);
    // The node cut, cheapest test first: the placed-computation test reads the current
    // task, and a pool of one node never cuts.
    if len / 2 >= min && !IN_ITER.with(Cell::get) {
        let parts = current_node_partition(0..len);
        if parts.len() > 1 && parts.iter().all(|(_, r)| r.len() >= min) && !in_placed_computation()
        {
            return bridge_by_node(producer, consumer, parts);
        }
    }
    let splitter = Splitter::new(current_num_threads(), min, producer.max_len());
    helper(len, false, splitter, producer, consumer)
}

/// One part per node (module docs): the producer cut at the partition's boundaries.
fn bridge_by_node<P, C>(producer: P, consumer: C, parts: Vec<(NodeId, Range<usize>)>) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let count = parts.len();
    let mut pieces = Vec::with_capacity(count);
    let mut rest = producer;
    for (k, (node, range)) in parts.into_iter().enumerate() {
        let len = range.len();
        // Every part holds at least `min_len >= 1` items (`bridge_producer_consumer`): the
        // cuts fall strictly inside the producer.
        debug_assert!(len > 0);
        if k + 1 == count {
            pieces.push((node, len, rest));
            break;
        }
        let (left, right) = rest.split_at(len);
        rest = right;
        pieces.push((node, len, left));
    }
    bridge_parts(pieces, consumer)
}

/// Runs consecutive parts (node, length, producer), each with its node as the origin of its
/// task (on a worker: one [`Scope::spawn_on`](zonal_runtime::Scope::spawn_on) each;
/// elsewhere one after the other), each split adaptively; the consumer is split at the
/// parts' boundaries ([`Consumer::split_at`]) and the results are reduced in order.
///
/// # Panics
/// On a worker, if a part's node is not a node of the pool's topology.
pub(crate) fn bridge_parts<P, C>(parts: Vec<(NodeId, usize, P)>, consumer: C) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    let count = parts.len();
    if count == 0 {
        return consumer.into_folder().complete();
    }
    let splits = current_num_threads().div_ceil(count).max(1);
    // `reducers[k]` joins part k (left) with everything after it (right).
    let mut reducers = Vec::with_capacity(count);
    let mut consumers: Vec<C> = Vec::with_capacity(count);
    let mut rest = consumer;
    for (_, len, _) in &parts[..count - 1] {
        let (left, right, reducer) = rest.split_at(*len);
        reducers.push(reducer);
        consumers.push(left);
        rest = right;
    }
    consumers.push(rest);
    let run = move |len: usize, p: P, c: C| {
        let splitter = Splitter::new(splits, p.min_len(), p.max_len());
        helper(len, false, splitter, p, c)
    };
    let mut results: Vec<C::Result> = if current_worker_index().is_some() {
        let slots: Vec<Mutex<Option<C::Result>>> = (0..count).map(|_| Mutex::new(None)).collect();
        zonal_runtime::scope(|s| {
            for (((node, len, p), c), slot) in parts.into_iter().zip(consumers).zip(&slots) {
                let run = &run;
                s.spawn_on(node, move |_| {
                    let r = run(len, p, c);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                });
            }
        });
        slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every part ran")
            })
            .collect()
    } else {
        parts
            .into_iter()
            .zip(consumers)
            .map(|((_, len, p), c)| run(len, p, c))
            .collect()
    };
    let mut acc = results.pop().expect("at least one part");
    let _g = NestGuard::enter();
    while let (Some(left), Some(reducer)) = (results.pop(), reducers.pop()) {
        acc = reducer.reduce(left, acc);
    }
    acc
}

/// `join` of the two halves of a split; the right half is told whether it was stolen (runs
/// on another worker than the one that split it), which resets its splitter.
fn join_split<RA, RB>(
    left: impl FnOnce() -> RA + Send,
    right: impl FnOnce(bool) -> RB + Send,
) -> (RA, RB)
where
    RA: Send,
    RB: Send,
{
    join_context(|_| left(), move |ctx| right(ctx.migrated()))
}

fn helper<P, C>(
    len: usize,
    stolen: bool,
    mut splitter: Splitter,
    producer: P,
    consumer: C,
) -> C::Result
where
    P: Producer,
    C: Consumer<P::Item>,
{
    if consumer.full() {
        return consumer.into_folder().complete();
    }
    if splitter.try_split(len, stolen) {
        let mid = len / 2;
        let (lp, rp) = producer.split_at(mid);
        let (lc, rc, reducer) = consumer.split_at(mid);
        let (a, b) = join_split(
            || helper(mid, false, splitter, lp, lc),
            move |stolen| helper(len - mid, stolen, splitter, rp, rc),
        );
        let _g = NestGuard::enter();
        reducer.reduce(a, b)
    } else {
        let _g = NestGuard::enter();
        producer.fold_with(consumer.into_folder()).complete()
    }
}

/// Runs an unindexed source (rayon's `bridge_unindexed`): splits `producer` and `consumer`
/// adaptively ([`UnindexedProducer::split`], [`UnindexedConsumer::split_off_left`]).
pub fn bridge_unindexed<P, C>(producer: P, consumer: C) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    if current_worker_index().is_none() {
        return in_worker(move || bridge_unindexed(producer, consumer));
    }
    let splitter = Splitter::new(current_num_threads(), 1, usize::MAX);
    unindexed_helper(false, splitter, producer, consumer)
}

fn unindexed_helper<P, C>(
    stolen: bool,
    mut splitter: Splitter,
    producer: P,
    consumer: C,
) -> C::Result
where
    P: UnindexedProducer,
    C: UnindexedConsumer<P::Item>,
{
    if consumer.full() {
        return consumer.into_folder().complete();
    }
    if splitter.try_split_unindexed(stolen) {
        match producer.split() {
            (lp, Some(rp)) => {
                let lc = consumer.split_off_left();
                let reducer = consumer.to_reducer();
                let (a, b) = join_split(
                    || unindexed_helper(false, splitter, lp, lc),
                    move |stolen| unindexed_helper(stolen, splitter, rp, consumer),
                );
                let _g = NestGuard::enter();
                return reducer.reduce(a, b);
            }
            (p, None) => {
                let _g = NestGuard::enter();
                return p.fold_with(consumer.into_folder()).complete();
            }
        }
    }
    let _g = NestGuard::enter();
    producer.fold_with(consumer.into_folder()).complete()
}

/// Runs `a` and `b` (the parts of two consumers split off one another) potentially in
/// parallel, and reduces their results in order (for adaptors made of two iterators).
pub fn join_reduce<T, R, A, B>(reducer: R, a: A, b: B) -> T
where
    T: Send,
    R: Reducer<T>,
    A: FnOnce() -> T + Send,
    B: FnOnce() -> T + Send,
{
    let (x, y) = join(a, b);
    let _g = NestGuard::enter();
    reducer.reduce(x, y)
}

/// The callback that bridges an indexed iterator's producer of `len` items to `consumer`:
/// the `drive_unindexed` and `drive` of Zonal's indexed iterators, which read their length
/// before handing out the producer (`BridgeCallback { len: self.len(), consumer }`).
pub(crate) struct BridgeCallback<C> {
    pub(crate) len: usize,
    pub(crate) consumer: C,
}

impl<T, C: Consumer<T>> ProducerCallback<T> for BridgeCallback<C> {
    type Output = C::Result;
    fn callback<P: Producer<Item = T>>(self, producer: P) -> C::Result {
        bridge_producer_consumer(self.len, producer, self.consumer)
    }
}
