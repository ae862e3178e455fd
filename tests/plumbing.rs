//! rayon's plumbing as a rayon user writes it, with `use zonal::iter::plumbing::*`: a custom
//! indexed source (its own `Producer`), a custom adaptor in the style of rayon's plumbing
//! README (`Map` through a `ProducerCallback`), a custom indexed `Consumer` whose result
//! depends on where it is split (writing into a slice, split with `split_at`), and a custom
//! `UnindexedConsumer` (a sum). Each runs off any pool and on a virtual pool of two nodes,
//! against std; and the node cut of `bridge_producer_consumer` applies to the custom
//! producer (each part runs with its node as the origin of its tasks).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use zonal::iter::plumbing::*;
use zonal::policy::{OriginRule, PolicyConfig};
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};
use zonal::topology::NodeId;

/// A virtual pool of four workers on two nodes of the `s1` preset; tasks never leave their
/// origin node (`origin = "strict"`), so the origin of the task running an item is the node
/// its part was spawned on.
fn two_nodes() -> &'static ThreadPool {
    static POOL: OnceLock<ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut cfg = PolicyConfig::named("conservative-hard").expect("a policy");
        cfg.origin = OriginRule::Strict;
        ThreadPoolBuilder::new()
            .preset("s1")
            .policy_config(cfg)
            .worker_cpus(0..4)
            .build()
            .expect("a virtual pool")
    })
}

// ---- a custom indexed source: the squares of `start..end` -----------------------------

struct Squares {
    start: u32,
    end: u32,
}

impl ParallelIterator for Squares {
    type Item = u64;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl IndexedParallelIterator for Squares {
    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(SquaresProducer {
            start: self.start,
            end: self.end,
        })
    }
}

struct SquaresProducer {
    start: u32,
    end: u32,
}

impl Producer for SquaresProducer {
    type Item = u64;
    type IntoIter = std::iter::Map<std::ops::Range<u32>, fn(u32) -> u64>;

    fn into_iter(self) -> Self::IntoIter {
        (self.start..self.end).map(|x| u64::from(x) * u64::from(x))
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.start + index as u32;
        (
            SquaresProducer {
                start: self.start,
                end: mid,
            },
            SquaresProducer {
                start: mid,
                end: self.end,
            },
        )
    }
}

fn squares(n: u64) -> Squares {
    Squares {
        start: 0,
        end: n as u32,
    }
}

// ---- a custom adaptor, as rayon's plumbing README writes `map` ------------------------

struct MyMap<I, F> {
    base: I,
    map_op: F,
}

impl<I, F, R> ParallelIterator for MyMap<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
    type Item = R;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.base.len())
    }
}

impl<I, F, R> IndexedParallelIterator for MyMap<I, F>
where
    I: IndexedParallelIterator,
    F: Fn(I::Item) -> R + Sync + Send,
    R: Send,
{
    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn len(&self) -> usize {
        self.base.len()
    }

    fn with_producer<CB>(self, callback: CB) -> CB::Output
    where
        CB: ProducerCallback<Self::Item>,
    {
        let map_op = &self.map_op;
        return self.base.with_producer(Callback { callback, map_op });

        struct Callback<'f, CB, F> {
            callback: CB,
            map_op: &'f F,
        }

        impl<'f, T, F, R, CB> ProducerCallback<T> for Callback<'f, CB, F>
        where
            CB: ProducerCallback<R>,
            F: Fn(T) -> R + Sync,
            R: Send,
        {
            type Output = CB::Output;

            fn callback<P>(self, base: P) -> CB::Output
            where
                P: Producer<Item = T>,
            {
                self.callback.callback(MapProducer {
                    base,
                    map_op: self.map_op,
                })
            }
        }
    }
}

struct MapProducer<'f, P, F> {
    base: P,
    map_op: &'f F,
}

impl<'f, P, F, R> Producer for MapProducer<'f, P, F>
where
    P: Producer,
    F: Fn(P::Item) -> R + Sync,
    R: Send,
{
    type Item = R;
    type IntoIter = std::iter::Map<P::IntoIter, &'f F>;

    fn into_iter(self) -> Self::IntoIter {
        self.base.into_iter().map(self.map_op)
    }

    fn min_len(&self) -> usize {
        self.base.min_len()
    }

    fn max_len(&self) -> usize {
        self.base.max_len()
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.base.split_at(index);
        (
            MapProducer {
                base: left,
                map_op: self.map_op,
            },
            MapProducer {
                base: right,
                map_op: self.map_op,
            },
        )
    }
}

// ---- a custom indexed consumer: writes item i into slot i -----------------------------

struct SlotConsumer<'a, T> {
    slots: &'a mut [Option<T>],
}

struct SlotFolder<'a, T> {
    slots: std::slice::IterMut<'a, Option<T>>,
    written: usize,
}

/// Counts the items written; `reduce` adds the counts.
struct AddCounts;

impl Reducer<usize> for AddCounts {
    fn reduce(self, left: usize, right: usize) -> usize {
        left + right
    }
}

impl<'a, T: Send> Consumer<T> for SlotConsumer<'a, T> {
    type Folder = SlotFolder<'a, T>;
    type Reducer = AddCounts;
    type Result = usize;

    fn split_at(self, index: usize) -> (Self, Self, AddCounts) {
        let (left, right) = self.slots.split_at_mut(index);
        (
            SlotConsumer { slots: left },
            SlotConsumer { slots: right },
            AddCounts,
        )
    }

    fn into_folder(self) -> Self::Folder {
        SlotFolder {
            slots: self.slots.iter_mut(),
            written: 0,
        }
    }

    fn full(&self) -> bool {
        false
    }
}

impl<T> Folder<T> for SlotFolder<'_, T> {
    type Result = usize;

    fn consume(mut self, item: T) -> Self {
        let slot = self.slots.next().expect("a slot per item");
        assert!(slot.is_none(), "a slot written twice");
        *slot = Some(item);
        self.written += 1;
        self
    }

    fn complete(self) -> usize {
        assert_eq!(self.slots.len(), 0, "every slot written");
        self.written
    }

    fn full(&self) -> bool {
        false
    }
}

/// Collects an indexed iterator through [`SlotConsumer`] (`drive`).
fn collect_by_slots<I>(iter: I) -> Vec<I::Item>
where
    I: IndexedParallelIterator,
{
    let mut slots: Vec<Option<I::Item>> = (0..iter.len()).map(|_| None).collect();
    let written = iter.drive(SlotConsumer { slots: &mut slots });
    assert_eq!(written, slots.len());
    slots.into_iter().map(|s| s.expect("written")).collect()
}

// ---- a custom unindexed consumer: a sum that counts its splits -------------------------

struct SumConsumer<'a> {
    splits: &'a AtomicUsize,
}

struct SumFolder(u64);

struct AddSums;

impl Reducer<u64> for AddSums {
    fn reduce(self, left: u64, right: u64) -> u64 {
        left + right
    }
}

impl Consumer<u64> for SumConsumer<'_> {
    type Folder = SumFolder;
    type Reducer = AddSums;
    type Result = u64;

    fn split_at(self, _index: usize) -> (Self, Self, AddSums) {
        (self.split_off_left(), self, AddSums)
    }

    fn into_folder(self) -> SumFolder {
        SumFolder(0)
    }

    fn full(&self) -> bool {
        false
    }
}

impl UnindexedConsumer<u64> for SumConsumer<'_> {
    fn split_off_left(&self) -> Self {
        self.splits.fetch_add(1, Ordering::Relaxed);
        SumConsumer {
            splits: self.splits,
        }
    }

    fn to_reducer(&self) -> AddSums {
        AddSums
    }
}

impl Folder<u64> for SumFolder {
    type Result = u64;

    fn consume(self, item: u64) -> Self {
        SumFolder(self.0 + item)
    }

    fn complete(self) -> u64 {
        self.0
    }

    fn full(&self) -> bool {
        false
    }
}

fn custom_sum<I: ParallelIterator<Item = u64>>(iter: I) -> (u64, usize) {
    let splits = AtomicUsize::new(0);
    let sum = iter.drive_unindexed(SumConsumer { splits: &splits });
    (sum, splits.into_inner())
}

/// Runs `f` off any pool and on the two-node pool; both results must agree.
fn both<R: PartialEq + std::fmt::Debug + Send>(f: impl Fn() -> R + Sync) -> R {
    let here = f();
    let there = two_nodes().install(&f);
    assert_eq!(here, there, "off the pool vs on two nodes");
    there
}

#[test]
fn the_pool_has_two_nodes() {
    let parts = two_nodes().install(|| zonal::runtime::current_node_partition(0..100));
    assert_eq!(parts.len(), 2, "{parts:?}");
}

#[test]
fn custom_source_and_adaptor_agree_with_std() {
    for n in [0u64, 1, 2, 3, 10, 1000, 10_007] {
        let want: Vec<u64> = (0..n).map(|x| x * x + 1).collect();
        both(|| {
            let got: Vec<u64> = MyMap {
                base: squares(n),
                map_op: |x: u64| x + 1,
            }
            .collect();
            assert_eq!(got, want);
            // Zonal's adaptors over the custom source, and the custom adaptor over Zonal's.
            let evens: Vec<u64> = squares(n).filter(|x| x % 2 == 0).collect();
            let want_evens: Vec<u64> = (0..n).map(|x| x * x).filter(|x| x % 2 == 0).collect();
            assert_eq!(evens, want_evens);
            let rev: Vec<(usize, u64)> = squares(n).rev().enumerate().collect();
            let want_rev: Vec<(usize, u64)> = (0..n).rev().map(|x| x * x).enumerate().collect();
            assert_eq!(rev, want_rev);
            let mapped: Vec<u64> = MyMap {
                base: (0..n as usize).into_par_iter().with_min_len(3),
                map_op: |x: usize| (x as u64) * (x as u64),
            }
            .collect();
            assert_eq!(mapped, (0..n).map(|x| x * x).collect::<Vec<_>>());
            assert_eq!(
                squares(n).find_first(|x| *x > 50),
                (0..n).map(|x| x * x).find(|x| *x > 50)
            );
            squares(n).sum::<u64>()
        });
    }
}

#[test]
fn custom_indexed_consumer_is_split_at_the_producers_indices() {
    for n in [0u64, 1, 5, 1000, 10_007] {
        let want: Vec<u64> = (0..n).map(|x| x * x).collect();
        both(|| {
            assert_eq!(collect_by_slots(squares(n)), want);
            // Through Zonal's indexed adaptors (their consumers forward `split_at`).
            let zipped = collect_by_slots(squares(n).zip(0..n as usize));
            assert!(zipped
                .iter()
                .enumerate()
                .all(|(i, &(s, j))| i == j && s == want[i]));
            let chained = collect_by_slots(squares(n).chain(squares(3)));
            assert_eq!(chained[..n as usize], want[..]);
            let mut w = Vec::new();
            bridge_producer_consumer(
                n as usize,
                SquaresProducer {
                    start: 0,
                    end: n as u32,
                },
                SlotConsumer {
                    slots: {
                        w.resize(n as usize, None);
                        &mut w
                    },
                },
            );
            assert_eq!(w.into_iter().map(Option::unwrap).collect::<Vec<_>>(), want);
        });
    }
}

#[test]
fn custom_unindexed_consumer_agrees_with_std() {
    for n in [0u64, 1, 7, 1000, 100_003] {
        let want: u64 = (0..n).map(|x| x * x).sum();
        let want_odd: u64 = (0..n).map(|x| x * x).filter(|x| x % 2 == 1).sum();
        both(|| {
            let (sum, _) = custom_sum(squares(n));
            assert_eq!(sum, want);
            let (odd, _) = custom_sum(squares(n).filter(|x| x % 2 == 1));
            assert_eq!(odd, want_odd);
            let (flat, _) = custom_sum((0..n).into_par_iter().flat_map(|x| vec![x * x]));
            assert_eq!(flat, want);
            sum
        });
    }
    // On the pool, a long enough iterator is split (each split a `split_at` or a
    // `split_off_left` of the custom consumer).
    let (_, splits) = two_nodes().install(|| custom_sum(squares(100_000)));
    assert!(splits > 0);
}

#[test]
fn the_node_cut_applies_to_a_custom_producer() {
    let pool = two_nodes();
    let n = 64_000usize;
    let origins: Vec<Mutex<Option<NodeId>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let want: Vec<u64> = (0..n as u64).map(|x| x * x).collect();
    let got: Vec<u64> = pool.install(|| {
        MyMap {
            base: squares(n as u64).enumerate(),
            map_op: |(i, sq): (usize, u64)| {
                let origin = zonal::runtime::current_task().expect("on a worker").origin;
                *origins[i].lock().unwrap() = Some(origin);
                sq
            },
        }
        .collect()
    });
    assert_eq!(got, want);
    let parts = pool.node_partition(0..n);
    assert_eq!(parts.len(), 2, "{parts:?}");
    let mut bad = Vec::new();
    for (node, range) in parts {
        for i in range {
            let o = origins[i].lock().unwrap().expect("every index ran");
            if o != node {
                bad.push((i, node, o));
            }
        }
    }
    assert!(bad.is_empty(), "{} {:?}", bad.len(), bad.first());
    // The same through `drive` and the custom indexed consumer.
    let origins2: Vec<Mutex<Option<NodeId>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let got = pool.install(|| {
        collect_by_slots(MyMap {
            base: squares(n as u64).enumerate(),
            map_op: |(i, sq): (usize, u64)| {
                let origin = zonal::runtime::current_task().expect("on a worker").origin;
                *origins2[i].lock().unwrap() = Some(origin);
                sq
            },
        })
    });
    assert_eq!(got, want);
    let first = origins2[0].lock().unwrap().expect("ran");
    let last = origins2[n - 1].lock().unwrap().expect("ran");
    assert_ne!(first, last, "the two halves ran with different origins");
}

// ---- a producer written exactly as for rayon: no `len` --------------------------------
//
// rayon's `Producer` has `Item`, `IntoIter`, `into_iter`, `min_len`, `max_len`, `split_at`
// and `fold_with`, and no length: whoever holds a producer knows its length. This one
// implements every item with rayon's signatures (where clauses included), so a rayon user's
// producer ports by changing the import. Its items are the counters of a slice; each run
// adds one to every counter it yields, so "every counter is k after k runs" means every
// item was produced exactly once.

struct CounterProducer<'a> {
    counters: &'a [AtomicUsize],
    min: usize,
}

impl<'a> Producer for CounterProducer<'a> {
    type Item = &'a AtomicUsize;
    type IntoIter = std::slice::Iter<'a, AtomicUsize>;

    fn into_iter(self) -> Self::IntoIter {
        self.counters.iter()
    }

    fn min_len(&self) -> usize {
        self.min
    }

    fn max_len(&self) -> usize {
        usize::MAX
    }

    fn split_at(self, index: usize) -> (Self, Self) {
        let (left, right) = self.counters.split_at(index);
        (
            CounterProducer {
                counters: left,
                min: self.min,
            },
            CounterProducer {
                counters: right,
                min: self.min,
            },
        )
    }

    fn fold_with<F>(self, folder: F) -> F
    where
        F: Folder<Self::Item>,
    {
        folder.consume_iter(self.into_iter())
    }
}

/// The indexed iterator that hands out a [`CounterProducer`] (the length lives here).
struct Counters<'a> {
    counters: &'a [AtomicUsize],
    min: usize,
}

impl<'a> ParallelIterator for Counters<'a> {
    type Item = &'a AtomicUsize;

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge(self, consumer)
    }

    fn opt_len(&self) -> Option<usize> {
        Some(self.len())
    }
}

impl IndexedParallelIterator for Counters<'_> {
    fn drive<C: Consumer<Self::Item>>(self, consumer: C) -> C::Result {
        bridge(self, consumer)
    }

    fn len(&self) -> usize {
        self.counters.len()
    }

    fn with_producer<CB: ProducerCallback<Self::Item>>(self, callback: CB) -> CB::Output {
        callback.callback(CounterProducer {
            counters: self.counters,
            min: self.min,
        })
    }
}

/// A user's callback: knows the length (as rayon's callbacks do), splits the producer in
/// three by hand, and counts the pieces' items (sequentially, through `into_iter` and
/// `fold_with`); returns the number of items seen.
struct CountByHand {
    len: usize,
}

/// Adds one to each counter it consumes; its result is the number of items.
struct Bump(usize);

impl<'a> Folder<&'a AtomicUsize> for Bump {
    type Result = usize;
    fn consume(self, counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        Bump(self.0 + 1)
    }
    fn complete(self) -> usize {
        self.0
    }
    fn full(&self) -> bool {
        false
    }
}

impl<'a> ProducerCallback<&'a AtomicUsize> for CountByHand {
    type Output = usize;

    fn callback<P>(self, producer: P) -> usize
    where
        P: Producer<Item = &'a AtomicUsize>,
    {
        let (a, rest) = producer.split_at(self.len / 3);
        let (b, c) = rest.split_at(self.len - self.len / 3 - self.len / 2);
        let a = a.into_iter();
        assert_eq!(a.len(), self.len / 3);
        let mut seen = 0;
        for counter in a.rev() {
            counter.fetch_add(1, Ordering::Relaxed);
            seen += 1;
        }
        seen += b.fold_with(Bump(0)).complete();
        seen + c.fold_with(Bump(0)).complete()
    }
}

/// Whether every counter is `k`.
fn all_are(counters: &[AtomicUsize], k: usize) -> bool {
    counters.iter().all(|c| c.load(Ordering::Relaxed) == k)
}

#[test]
fn a_rayon_style_producer_without_len_yields_each_item_once() {
    for n in [0usize, 1, 2, 3, 10, 1000, 10_007] {
        for min in [1, 7] {
            both(|| {
                let counters: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                let it = || Counters {
                    counters: &counters,
                    min,
                };
                let mut runs = 0;
                let mut check = |what: &str| {
                    runs += 1;
                    assert!(all_are(&counters, runs), "n={n} min={min}: {what}");
                };

                // `bridge_producer_consumer`, the length passed alongside the producer.
                let mut slots: Vec<Option<&AtomicUsize>> = vec![None; n];
                let written = bridge_producer_consumer(
                    n,
                    CounterProducer {
                        counters: &counters,
                        min,
                    },
                    SlotConsumer { slots: &mut slots },
                );
                assert_eq!(written, n);
                for (i, slot) in slots.iter().enumerate() {
                    let c = slot.expect("written");
                    assert!(std::ptr::eq(c, &counters[i]), "item {i} in slot {i}");
                    c.fetch_add(1, Ordering::Relaxed);
                }
                check("bridge_producer_consumer");

                // `bridge` (through `drive_unindexed` and `drive`: the length from `len`).
                it().for_each(|c| {
                    c.fetch_add(1, Ordering::Relaxed);
                });
                check("bridge, drive_unindexed");
                let got = collect_by_slots(it());
                got.iter().for_each(|c| {
                    c.fetch_add(1, Ordering::Relaxed);
                });
                check("bridge, drive");

                // `with_producer`, to a user's callback.
                assert_eq!(it().with_producer(CountByHand { len: n }), n);
                check("with_producer, by hand");

                // `with_producer` through Zonal's adaptors, whose producers carry the lengths
                // they split with.
                let bump = |c: &AtomicUsize| {
                    c.fetch_add(1, Ordering::Relaxed);
                };
                let order: Vec<usize> = it()
                    .rev()
                    .map(|c| c as *const AtomicUsize as usize)
                    .collect();
                let mut want: Vec<usize> = counters
                    .iter()
                    .map(|c| c as *const AtomicUsize as usize)
                    .collect();
                want.reverse();
                assert_eq!(order, want, "rev");
                it().rev().for_each(bump);
                check("rev");
                it().chain(Counters {
                    counters: &[],
                    min: 1,
                })
                .for_each(bump);
                check("chain");
                it().step_by(1)
                    .enumerate()
                    .skip(0)
                    .take(n)
                    .for_each(|(_, c)| bump(c));
                check("step_by, enumerate, skip, take");
                it().chunks(3)
                    .for_each(|chunk| chunk.into_iter().for_each(bump));
                check("chunks");
                it().interleave(Counters {
                    counters: &[],
                    min: 1,
                })
                .for_each(bump);
                check("interleave");
                it().zip(0..n).with_max_len(5).for_each(|(c, _)| bump(c));
                check("zip, with_max_len");
                it().rev()
                    .chunks(4)
                    .rev()
                    .for_each(|chunk| chunk.into_iter().for_each(bump));
                check("rev, chunks, rev");
                assert_eq!(it().rev().with_producer(CountByHand { len: n }), n);
                check("rev, with_producer by hand");
                runs
            });
        }
    }
}
