//! Behaviour of the parallel iterators beyond their results: panics reach the caller,
//! `Vec` items are dropped exactly once, and the top-level node cut gives every part its
//! node as origin.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use zonal::policy::{OriginRule, PolicyConfig};
use zonal::prelude::*;
use zonal::runtime::{NodeBuffer, ThreadPool, ThreadPoolBuilder};
use zonal::topology::NodeId;

fn pools() -> Vec<ThreadPool> {
    let s1 = || ThreadPoolBuilder::new().preset("s1").no_policy();
    vec![
        s1().worker_cpus([0]).build().expect("a virtual pool"),
        s1().worker_cpus([0, 1]).build().expect("a virtual pool"),
        s1().build().expect("a virtual pool"),
    ]
}

#[test]
fn panics_reach_the_caller_and_the_pool_survives() {
    for pool in pools() {
        let v: Vec<u32> = (0..10_000).collect();
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                v.par_iter()
                    .map(|&x| {
                        assert!(x != 7777, "boom in map");
                        x
                    })
                    .sum::<u32>()
            })
        }));
        let msg = r.expect_err("the panic reaches the caller");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"boom in map"));
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.install(|| {
                (0..10_000usize).into_par_iter().for_each(|x| {
                    assert!(x != 3, "boom in for_each");
                });
            })
        }));
        assert!(r.is_err());
        // Off any pool too.
        assert!(catch_unwind(|| (0..10u8).into_par_iter().for_each(|x| assert!(x < 9))).is_err());
        // The pool still works.
        let s: u64 = pool.install(|| (0..1000u64).into_par_iter().sum());
        assert_eq!(s, 499_500);
    }
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
fn vec_items_are_dropped_exactly_once() {
    let drops: Vec<AtomicUsize> = (0..5000).map(|_| AtomicUsize::new(0)).collect();
    for pool in pools() {
        for k in 0..2 {
            let run = |f: &(dyn Fn() + Sync)| if k == 0 { pool.install(f) } else { f() };
            // Consumed entirely.
            run(&|| counted(&drops).into_par_iter().for_each(drop));
            each_dropped_once(&drops);
            // Collected and dropped later.
            run(&|| {
                drop(
                    counted(&drops)
                        .into_par_iter()
                        .filter(|c| c.id % 3 == 0)
                        .collect::<Vec<_>>(),
                )
            });
            each_dropped_once(&drops);
            // An early stop: the items not taken are dropped with the iterator.
            run(&|| {
                let found = counted(&drops).into_par_iter().find_any(|c| c.id == 1234);
                assert_eq!(found.map(|c| c.id), Some(1234));
            });
            each_dropped_once(&drops);
            run(&|| assert!(counted(&drops).into_par_iter().any(|c| c.id == 17)));
            each_dropped_once(&drops);
            // A panic midway.
            let r = catch_unwind(AssertUnwindSafe(|| {
                run(&|| {
                    counted(&drops)
                        .into_par_iter()
                        .for_each(|c| assert!(c.id != 2500, "boom"));
                });
            }));
            assert!(r.is_err());
            each_dropped_once(&drops);
            // Zipped, chunked, early-stopped by position.
            run(&|| {
                let p = counted(&drops)
                    .into_par_iter()
                    .zip(0..5000usize)
                    .position_first(|(c, i)| c.id == i && i == 4000);
                assert_eq!(p, Some(4000));
            });
            each_dropped_once(&drops);
        }
    }
}

/// An s1 pool whose tasks never leave their origin node (`origin = "strict"`): the origin
/// of the task running an item is then the node its part was spawned on (joins inside a
/// part are born on the worker's node).
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
fn the_node_cut_gives_each_part_its_node_as_origin() {
    let pool = strict_s1();
    let v: Vec<u32> = (0..64_000).collect();
    let origins: Vec<Mutex<Option<NodeId>>> = v.iter().map(|_| Mutex::new(None)).collect();
    pool.install(|| {
        v.par_iter().for_each(|&x| {
            let origin = zonal::runtime::current_task().expect("on a worker").origin;
            *origins[x as usize].lock().unwrap() = Some(origin);
        });
    });
    let parts = pool.node_partition(0..v.len());
    assert!(parts.len() > 1);
    let mut seen = std::collections::BTreeSet::new();
    let mut bad = Vec::new();
    for (node, range) in parts {
        for i in range {
            let o = origins[i].lock().unwrap().expect("every index ran");
            if o != node {
                bad.push((i, node, o));
            }
            seen.insert(o);
        }
    }
    assert!(
        bad.is_empty(),
        "{} {:?} {:?}",
        bad.len(),
        bad.first(),
        bad.last()
    );
    assert!(seen.len() > 1);
    // Nested iterators skip the cut (and still work).
    let total: usize = pool.install(|| {
        (0..20usize)
            .into_par_iter()
            .map(|i| (0..i).into_par_iter().map(|j| j + 1).sum::<usize>())
            .sum()
    });
    assert_eq!(total, (0..20usize).map(|i| i * (i + 1) / 2).sum::<usize>());
}

#[test]
fn node_vec_parts_run_on_their_nodes() {
    let pool = strict_s1();
    let bufs: Vec<NodeBuffer<(u32, u32)>> = (0..16)
        .map(|n| NodeBuffer::new_in(&pool, NodeId(n), 500, move |i| (n, i as u32)))
        .collect();
    let data = zonal::iter::NodeVec::new(bufs);
    let bad = AtomicUsize::new(0);
    let items: Vec<(u32, u32)> = pool.install(|| {
        data.par_iter()
            .inspect(|(n, _)| {
                let origin = zonal::runtime::current_task().expect("on a worker").origin;
                if origin != NodeId(*n) {
                    bad.fetch_add(1, Ordering::Relaxed);
                }
            })
            .copied()
            .collect()
    });
    assert_eq!(bad.into_inner(), 0);
    let want: Vec<(u32, u32)> = (0..16)
        .flat_map(|n| (0..500).map(move |i| (n, i)))
        .collect();
    assert_eq!(items, want);
    // Off any pool: sequential, same result.
    let sum: u64 = zonal::iter::par_iter_nodes(data.buffers())
        .map(|p| u64::from(p.1))
        .sum();
    assert_eq!(sum, 16 * 499 * 500 / 2);
}
