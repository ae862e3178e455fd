//! Batches and work from outside the pool:
//! - exactly once: many threads outside the pool spawn into a virtual multi-node pool
//!   (`s1`, `conservative-hard`), with nested work, and every task runs exactly once;
//! - with batch steals on, nothing moves beyond the zone and no task moves farther from its
//!   origin (metrics and the steal observer agree), and batches do happen;
//! - outside spawns without an origin land on the injectors of several nodes, each one a
//!   node with workers.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use zonal_runtime::{StealRecord, ThreadPoolBuilder};

const THREADS: usize = 8;
const PER_THREAD: usize = 2_000;
const FAN: usize = 16;

#[test]
fn outside_spawns_run_exactly_once_and_batches_keep_the_conservative_laws() {
    let records: Arc<Mutex<Vec<StealRecord>>> = Arc::default();
    let rec = Arc::clone(&records);
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .preset("s1")
            .policy_name("conservative-hard")
            .steal_observer(move |r: &StealRecord| rec.lock().unwrap().push(*r))
            .build()
            .expect("s1 pool"),
    );
    let total = THREADS * PER_THREAD * FAN;
    let hits: Arc<Vec<AtomicU8>> = Arc::new((0..total).map(|_| AtomicU8::new(0)).collect());
    let done = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let spawners: Vec<_> = (0..THREADS)
        .map(|t| {
            let (pool, hits, done, tx) = (
                Arc::clone(&pool),
                Arc::clone(&hits),
                Arc::clone(&done),
                tx.clone(),
            );
            std::thread::spawn(move || {
                for i in 0..PER_THREAD {
                    let (hits, done, tx) = (Arc::clone(&hits), Arc::clone(&done), tx.clone());
                    let base = (t * PER_THREAD + i) * FAN;
                    let body = move || {
                        // Nested work fills the deques that batches steal from.
                        zonal_runtime::scope(|s| {
                            for k in 0..FAN {
                                let hits = &hits;
                                s.spawn(move |_| {
                                    hits[base + k].fetch_add(1, Ordering::Relaxed);
                                });
                            }
                        });
                        if done.fetch_add(1, Ordering::AcqRel) + 1 == THREADS * PER_THREAD {
                            tx.send(()).unwrap();
                        }
                    };
                    // Every way in from outside: spawn, spawn_fifo, install.
                    match i % 3 {
                        0 => pool.spawn(body),
                        1 => pool.spawn_fifo(body),
                        _ => pool.install(body),
                    }
                }
            })
        })
        .collect();
    for s in spawners {
        s.join().unwrap();
    }
    rx.recv().unwrap();
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(h.load(Ordering::Relaxed), 1, "task {i}");
    }
    let m = pool.metrics();
    assert_eq!(m.total.migrations_beyond_zone, 0, "{m:#?}");
    assert_eq!(m.total.moves_farther_from_origin, 0, "{m:#?}");
    let records = records.lock().unwrap();
    assert_eq!(records.len() as u64, m.total.migrations);
    for r in records.iter() {
        assert!(usize::from(r.level) < m.zone_depth, "{r:?}");
    }
    eprintln!(
        "steals {}, batch_moved {}, injector_pops {}",
        m.total.migrations, m.total.batch_moved, m.total.injector_pops
    );
}

#[test]
fn outside_spawns_without_origin_spread_over_the_nodes_with_workers() {
    // Workers on CPUs 0–5 of s1 (2 CPUs a node): nodes 0, 1 and 2 have workers.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .policy_name("conservative-hard")
        .worker_cpus([0, 1, 2, 3, 4, 5])
        .build()
        .expect("s1 pool");
    let origins: Arc<Mutex<BTreeSet<u32>>> = Arc::default();
    let (tx, rx) = mpsc::channel();
    for _ in 0..60 {
        let (origins, tx) = (Arc::clone(&origins), tx.clone());
        pool.spawn(move || {
            let info = zonal_runtime::current_task().expect("on a worker");
            origins.lock().unwrap().insert(info.origin.0);
            tx.send(()).unwrap();
        });
    }
    for _ in 0..60 {
        rx.recv().unwrap();
    }
    for _ in 0..6 {
        let o = pool.install(|| zonal_runtime::current_task().unwrap().origin.0);
        origins.lock().unwrap().insert(o);
    }
    let seen = origins.lock().unwrap();
    assert!(seen.len() > 1, "one node only: {seen:?}");
    assert!(
        seen.iter().all(|&n| n <= 2),
        "a node without workers: {seen:?}"
    );
}

#[test]
fn a_batch_steal_moves_several_tasks_on_one_node() {
    // Two workers on one node: the idle one steals batches from the busy one's deque.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .policy_name("conservative-hard")
        .worker_cpus([0, 1])
        .build()
        .expect("s1 pool");
    let count = AtomicUsize::new(0);
    for _ in 0..50 {
        pool.install(|| {
            zonal_runtime::scope(|s| {
                for _ in 0..256 {
                    s.spawn(|_| {
                        let mut x = 0u64;
                        for i in 0..2_000 {
                            x = std::hint::black_box(x.wrapping_add(i));
                        }
                        count.fetch_add(1, Ordering::Relaxed);
                    });
                }
            });
        });
    }
    assert_eq!(count.load(Ordering::Relaxed), 50 * 256);
    let m = pool.metrics();
    assert_eq!(m.total.migrations_beyond_zone, 0);
    // Whether the other worker ever woke in time is up to the scheduler: no assertion on
    // how many moved, only that the books balance.
    assert_eq!(
        m.total.tasks_run,
        m.total.tasks_spawned + m.tasks_injected,
        "{m:#?}"
    );
}
