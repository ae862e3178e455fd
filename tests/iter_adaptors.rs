//! Behaviour of rayon's further adaptors and consumers beyond their results:
//! `panic_fuse` stops the other pieces, the `try_*` family and `while_some` short-circuit,
//! `take_any`/`skip_any` pass on or drop every item exactly once, `interleave`,
//! `intersperse` and `step_by` have the lengths of std's, `zip_eq` and zero steps panic,
//! and the new indexed adaptors keep the node cut.

use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use zonal::policy::{OriginRule, PolicyConfig};
use zonal::prelude::*;
use zonal::runtime::{ThreadPool, ThreadPoolBuilder};
use zonal::topology::NodeId;

fn one_worker() -> ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .worker_cpus([0])
        .build()
        .expect("a virtual pool")
}

fn pools() -> Vec<ThreadPool> {
    let s1 = || ThreadPoolBuilder::new().preset("s1").no_policy();
    vec![
        s1().worker_cpus([0]).build().expect("a virtual pool"),
        s1().worker_cpus([0, 1]).build().expect("a virtual pool"),
        s1().build().expect("a virtual pool"),
    ]
}

const N: usize = 4096;

/// How many items `for_each` reaches when item `N / 2` panics (the panic is caught).
fn reached(pool: &ThreadPool, fused: bool) -> usize {
    let count = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            let it = (0..N).into_par_iter().with_max_len(1);
            let body = |i: usize| {
                assert_ne!(i, N / 2, "boom");
                count.fetch_add(1, Ordering::Relaxed);
            };
            if fused {
                it.panic_fuse().for_each(body);
            } else {
                it.for_each(body);
            }
        })
    }));
    assert!(r.is_err(), "the panic reaches the caller");
    count.into_inner()
}

#[test]
fn panic_fuse_stops_the_other_pieces() {
    let pool = one_worker();
    assert_eq!(
        reached(&pool, false),
        N - 1,
        "without the fuse every other item runs"
    );
    let fused = reached(&pool, true);
    assert!(fused < N - 1, "with the fuse fewer items run: {fused}");
    // The pool survives.
    assert_eq!(
        pool.install(|| (0..100u32).into_par_iter().sum::<u32>()),
        4950
    );
}

#[test]
fn try_for_each_short_circuits() {
    let pool = one_worker();
    let calls = AtomicUsize::new(0);
    let r = pool.install(|| {
        (0..N).into_par_iter().with_max_len(1).try_for_each(|i| {
            calls.fetch_add(1, Ordering::Relaxed);
            if i == 10 {
                Err(i)
            } else {
                Ok(())
            }
        })
    });
    assert_eq!(r, Err(10));
    assert!(calls.into_inner() < N);

    // ControlFlow and Option too.
    let r = (0..N).into_par_iter().try_for_each(|i| {
        if i == 77 {
            ControlFlow::Break(i)
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!(r, ControlFlow::Break(77));
    let r = (0..N)
        .into_par_iter()
        .try_for_each(|i| (i != 5).then_some(()));
    assert_eq!(r, None);
    assert_eq!((0..N).into_par_iter().try_for_each(|_| Some(())), Some(()));
}

#[test]
fn try_reduce_and_try_fold_short_circuit() {
    let pool = one_worker();
    let calls = AtomicUsize::new(0);
    let r: Result<usize, usize> = pool.install(|| {
        (0..N)
            .into_par_iter()
            .with_max_len(1)
            .map(|i| {
                calls.fetch_add(1, Ordering::Relaxed);
                if i == 3 {
                    Err(i)
                } else {
                    Ok(i)
                }
            })
            .try_reduce(|| 0, |a, b| Ok(a + b))
    });
    assert_eq!(r, Err(3));
    assert!(calls.swap(0, Ordering::Relaxed) < N);

    // A failing fold stops its piece at the failure.
    let r: Vec<Option<usize>> = (0..100usize)
        .into_par_iter()
        .with_min_len(100)
        .try_fold(
            || 0,
            |a, i| {
                calls.fetch_add(1, Ordering::Relaxed);
                (i != 20).then_some(a + i)
            },
        )
        .collect();
    assert_eq!(r, [None]);
    assert_eq!(calls.into_inner(), 21);

    // try_reduce_with of nothing.
    let none = (0..0u32)
        .into_par_iter()
        .map(Some)
        .try_reduce_with(|a, b| Some(a + b));
    assert_eq!(none, None);
}

#[test]
fn while_some_stops_early() {
    let pool = one_worker();
    let calls = AtomicUsize::new(0);
    let v: Vec<usize> = pool.install(|| {
        (0..N)
            .into_par_iter()
            .with_max_len(1)
            .map(|i| {
                calls.fetch_add(1, Ordering::Relaxed);
                (i < 100).then_some(i)
            })
            .while_some()
            .collect()
    });
    // One worker, pieces in order: exactly the items before the first None.
    assert_eq!(v, (0..100).collect::<Vec<_>>());
    assert!(calls.into_inner() < N);
}

/// Counts its drops in the slot of its id.
struct Counted<'a> {
    id: usize,
    drops: &'a [AtomicUsize],
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::Relaxed);
    }
}

fn counted(drops: &[AtomicUsize]) -> Vec<Counted<'_>> {
    (0..drops.len()).map(|id| Counted { id, drops }).collect()
}

fn each_dropped_once(drops: &[AtomicUsize]) {
    for (i, d) in drops.iter().enumerate() {
        assert_eq!(d.swap(0, Ordering::Relaxed), 1, "item {i}");
    }
}

#[test]
fn take_any_and_skip_any_drop_every_item_once() {
    let drops: Vec<AtomicUsize> = (0..3000).map(|_| AtomicUsize::new(0)).collect();
    for pool in pools() {
        for n in [0, 1, 1500, 2999, 3000, 5000] {
            let taken: Vec<Counted<'_>> =
                pool.install(|| counted(&drops).into_par_iter().take_any(n).collect());
            assert_eq!(taken.len(), n.min(3000));
            assert!(taken.windows(2).all(|w| w[0].id < w[1].id));
            drop(taken);
            each_dropped_once(&drops);

            let kept: Vec<Counted<'_>> =
                pool.install(|| counted(&drops).into_par_iter().skip_any(n).collect());
            assert_eq!(kept.len(), 3000usize.saturating_sub(n));
            drop(kept);
            each_dropped_once(&drops);

            let kept: Vec<Counted<'_>> = pool.install(|| {
                counted(&drops)
                    .into_par_iter()
                    .skip_any_while(|c| c.id % 1000 != 999)
                    .collect()
            });
            assert!(kept.iter().any(|c| c.id % 1000 == 999));
            drop(kept);
            each_dropped_once(&drops);

            let taken: Vec<Counted<'_>> = pool.install(|| {
                counted(&drops)
                    .into_par_iter()
                    .take_any_while(|c| c.id != 1234)
                    .collect()
            });
            assert!(taken.iter().all(|c| c.id != 1234));
            drop(taken);
            each_dropped_once(&drops);
        }
    }
}

#[test]
fn step_by_and_interleave_drop_every_item_once() {
    let drops: Vec<AtomicUsize> = (0..3000).map(|_| AtomicUsize::new(0)).collect();
    let more: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(0)).collect();
    for pool in pools() {
        let got: Vec<Counted<'_>> =
            pool.install(|| counted(&drops).into_par_iter().step_by(7).collect());
        assert_eq!(got.len(), 3000usize.div_ceil(7));
        assert!(got.iter().enumerate().all(|(k, c)| c.id == 7 * k));
        drop(got);
        each_dropped_once(&drops);

        let got: Vec<Counted<'_>> = pool.install(|| {
            counted(&drops)
                .into_par_iter()
                .interleave_shortest(counted(&more))
                .rev()
                .collect()
        });
        assert_eq!(got.len(), 2001);
        drop(got);
        each_dropped_once(&drops);
        each_dropped_once(&more);
    }
}

#[test]
fn lengths_are_std_lengths() {
    for (a, b) in [(0usize, 0usize), (0, 5), (5, 0), (3, 3), (3, 10), (10, 3)] {
        let i = (0..a).into_par_iter();
        let j = (0..b).into_par_iter();
        assert_eq!(i.clone().interleave(j.clone()).len(), a + b);
        let shortest = if a <= b { 2 * a } else { 2 * b + 1 };
        assert_eq!(i.clone().interleave_shortest(j).len(), shortest);
        assert_eq!(i.clone().intersperse(0).len(), (2 * a).saturating_sub(1));
        for step in 1..5 {
            assert_eq!(i.clone().step_by(step).len(), (0..a).step_by(step).len());
        }
        assert_eq!(i.fold_chunks(4, || 0, |x, _| x).len(), a.div_ceil(4));
    }
    // Unindexed: separators between the items of the pieces.
    let s: String = (0..100u32)
        .into_par_iter()
        .map(|x| x.to_string())
        .intersperse(",".to_string())
        .collect();
    assert_eq!(
        s,
        (0..100)
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
}

#[test]
#[should_panic(expected = "lengths differ")]
fn zip_eq_panics_on_unequal_lengths() {
    let _ = (0..3u32).into_par_iter().zip_eq(0..4u32);
}

#[test]
#[should_panic(expected = "step")]
fn step_by_zero_panics() {
    let _ = (0..3u32).into_par_iter().step_by(0);
}

#[test]
fn blocks_stop_between_blocks() {
    let pool = one_worker();
    let calls = AtomicUsize::new(0);
    let first = pool.install(|| {
        (0..N)
            .into_par_iter()
            .by_exponential_blocks()
            .inspect(|_| {
                calls.fetch_add(1, Ordering::Relaxed);
            })
            .find_first(|&x| x == 5)
    });
    assert_eq!(first, Some(5));
    // Blocks of 1, 2, 4, 8: the one holding 5 ends at 15; no block after it runs.
    assert!(calls.swap(0, Ordering::Relaxed) <= 15);
    let first = pool.install(|| {
        (0..N)
            .into_par_iter()
            .by_uniform_blocks(100)
            .inspect(|_| {
                calls.fetch_add(1, Ordering::Relaxed);
            })
            .find_first(|&x| x == 150)
    });
    assert_eq!(first, Some(150));
    assert!(calls.into_inner() <= 200);
}

#[test]
fn find_last_and_friends() {
    for pool in pools() {
        pool.install(|| {
            let v: Vec<u32> = (0..10_000).collect();
            assert_eq!(v.par_iter().find_last(|&&x| x % 1000 == 7), Some(&9007));
            assert_eq!(v.par_iter().position_last(|&x| x < 5), Some(4));
            assert_eq!(
                v.par_iter().find_map_last(|&x| (x < 3).then_some(x * 2)),
                Some(4)
            );
            assert_eq!(v.par_iter().find_last(|_| false), None);
        });
    }
}

/// An s1 pool whose tasks never leave their origin node (as in `iter_behaviour.rs`).
fn strict_s1() -> ThreadPool {
    let mut cfg = PolicyConfig::named("conservative-hard").expect("a policy");
    cfg.origin = OriginRule::Strict;
    ThreadPoolBuilder::new()
        .preset("s1")
        .policy_config(cfg)
        .build()
        .expect("a virtual pool")
}

#[test]
fn new_indexed_adaptors_keep_the_node_cut() {
    let pool = strict_s1();
    let n = 64_000usize;
    let origins: Vec<Mutex<Option<NodeId>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let record = |i: usize| {
        let origin = zonal::runtime::current_task().expect("on a worker").origin;
        *origins[i].lock().unwrap() = Some(origin);
    };
    // Each adaptor's item `i` is recorded at output index `i`: the cut is over its output.
    let check = |what: &str| {
        let parts = pool.node_partition(0..n);
        assert!(parts.len() > 1);
        let mut seen = std::collections::BTreeSet::new();
        for (node, range) in parts {
            for i in range {
                let o = origins[i].lock().unwrap().take().expect("every index ran");
                assert_eq!(o, node, "{what}: index {i}");
                seen.insert(o);
            }
        }
        assert!(seen.len() > 1);
    };
    pool.install(|| {
        (0..n / 2)
            .into_par_iter()
            .interleave(n / 2..n)
            .enumerate()
            .for_each(|(i, _)| record(i));
    });
    check("interleave");
    pool.install(|| {
        (0..2 * n)
            .into_par_iter()
            .step_by(2)
            .for_each(|x| record(x / 2));
    });
    check("step_by");
    pool.install(|| {
        (0..n)
            .into_par_iter()
            .panic_fuse()
            .zip_eq(0..n)
            .for_each(|(x, _)| record(x));
    });
    check("panic_fuse, zip_eq");
    pool.install(|| {
        (0..n / 2 + 1)
            .into_par_iter()
            .intersperse(usize::MAX)
            .enumerate()
            .for_each(|(i, _)| {
                if i < n {
                    record(i);
                }
            });
    });
    // n + 1 positions: the partition of 0..n + 1 differs from that of 0..n at the last part
    // only; check the indexes the two share by recomputing over n + 1.
    let parts = pool.node_partition(0..n + 1);
    for (node, range) in parts {
        for i in range.filter(|&i| i < n) {
            let o = origins[i].lock().unwrap().take().expect("every index ran");
            assert_eq!(o, node, "intersperse: index {i}");
        }
    }
}

#[test]
fn panic_fuse_stops_the_other_pieces_through_producers() {
    // As rayon's `iter_panic_fuse`: the fuse under an adaptor, run through its producer.
    let pool = one_worker();
    let count = AtomicUsize::new(0);
    let r = catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            (0..N)
                .into_par_iter()
                .with_max_len(1)
                .panic_fuse()
                .inspect(|&i| assert_ne!(i, N / 2, "boom"))
                .rev()
                .for_each(|_| {
                    count.fetch_add(1, Ordering::Relaxed);
                });
        })
    }));
    assert!(r.is_err());
    assert!(count.into_inner() < N - 1);
}

/// Every adaptor is `Debug` without its closures being so, and `Clone` when its parts are
/// (rayon's tests/debug.rs and tests/clones.rs, for the adaptors).
fn check<I>(iter: I)
where
    I: ParallelIterator + Clone + std::fmt::Debug,
    I::Item: PartialEq + std::fmt::Debug,
{
    assert!(!format!("{iter:?}").is_empty());
    let a: Vec<_> = iter.clone().collect();
    let b: Vec<_> = iter.collect();
    assert_eq!(a, b);
}

#[test]
fn adaptors_are_debug_and_clone() {
    let v: Vec<u32> = (0..1000).collect();
    let o: Vec<Option<u32>> = v.iter().map(|&x| Some(x)).collect();
    check(v.par_iter().by_exponential_blocks());
    check(v.par_iter().by_uniform_blocks(100));
    check(v.par_iter().chain(&v));
    check(v.par_iter().cloned());
    check(v.par_iter().copied());
    check(v.par_iter().enumerate());
    check(v.par_iter().filter(|_| true));
    check(v.par_iter().filter_map(Some));
    check(o.par_iter().flat_map(|x| *x));
    check(o.par_iter().flat_map_iter(|x| *x));
    check(o.par_iter().cloned().flatten());
    check(o.par_iter().cloned().flatten_iter());
    check(v.par_iter().with_max_len(1).fold(|| 0, |x, _| x));
    check(v.par_iter().with_max_len(1).fold_with(0, |x, _| x));
    check(v.par_iter().fold_chunks(3, || 0, |x, _| x));
    check(v.par_iter().fold_chunks_with(3, 0, |x, _| x));
    check(v.par_iter().with_max_len(1).try_fold(|| 0, |_, &x| Some(x)));
    check(
        v.par_iter()
            .with_max_len(1)
            .try_fold_with(0, |_, &x| Some(x)),
    );
    check(v.par_iter().inspect(|_| ()));
    check(v.par_iter().copied().update(|_| ()));
    check(v.par_iter().interleave(&v));
    check(v.par_iter().interleave_shortest(&v));
    check(v.par_iter().intersperse(&0));
    check(v.par_iter().chunks(3));
    check(v.par_iter().map(|x| x));
    check(v.par_iter().map_with(0, |_, x| x));
    check(v.par_iter().map_init(|| 0, |_, x| x));
    check(v.par_iter().panic_fuse());
    check(v.par_iter().positions(|_| true));
    check(v.par_iter().rev());
    check(v.par_iter().skip(42));
    check(v.par_iter().skip_any_while(|_| false));
    check(v.par_iter().take(42));
    check(v.par_iter().take_any_while(|_| true));
    check(o.par_iter().cloned().while_some());
    check(v.par_iter().with_max_len(1));
    check(v.par_iter().with_min_len(1));
    check(v.par_iter().zip(&v));
    check(v.par_iter().zip_eq(&v));
    check(v.par_iter().step_by(2));
    // Counted: which items they keep may differ between runs.
    let it = v.par_iter().skip_any(42);
    assert!(format!("{it:?}").starts_with("SkipAny"));
    assert_eq!(it.clone().count(), it.count());
    let it = v.par_iter().take_any(42);
    assert_eq!(it.clone().count(), it.count());
}

#[test]
fn rayon_collections() {
    use std::borrow::Cow;
    use std::collections::{BinaryHeap, HashSet, LinkedList};
    use std::ffi::{OsStr, OsString};
    use std::rc::Rc;
    use std::sync::Arc;
    let v: Vec<u32> = (0..1000).collect();
    let mut w = vec![7u32];
    w.par_extend(v.par_iter());
    assert_eq!(w.len(), 1001);
    let mut set: HashSet<u32> = HashSet::new();
    set.par_extend(&v);
    assert_eq!(set.len(), 1000);
    let heap: BinaryHeap<u32> = v.par_iter().copied().collect();
    assert_eq!(heap.into_sorted_vec(), v);
    let mut list = LinkedList::new();
    list.par_extend(v.par_iter().copied());
    assert!(list.iter().eq(v.iter()));
    let b: Box<[u32]> = v.par_iter().copied().collect();
    let r: Rc<[u32]> = v.par_iter().copied().collect();
    let a: Arc<[u32]> = v.par_iter().copied().collect();
    assert!(b[..] == v[..] && r[..] == v[..] && a[..] == v[..]);
    let c: Cow<'_, [u32]> = v.par_iter().copied().collect();
    assert_eq!(&*c, &v[..]);
    let s: String = ["a", "b"]
        .par_iter()
        .map(|&x| Box::<str>::from(x))
        .collect();
    assert_eq!(s, "ab");
    let o: OsString = ["x", "y"].par_iter().map(OsStr::new).collect();
    assert_eq!(o, "xy");
    let mut unit = ();
    unit.par_extend((0..10u32).into_par_iter().map(|_| ()));
}
