//! A small pool end to end: two workers on a virtual topology, every kind of job (stack,
//! block of either class, boxed, bare, injected from outside, pinned), frees on the
//! spawner's thread and on thieves', blocks reused across bursts. Small enough to run under
//! Miri, which checks the unsafe code on these paths (job blocks, type-erased jobs,
//! latches) for undefined behaviour and data races:
//!
//! ```text
//! MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-tree-borrows -Zmiri-ignore-leaks" \
//!     cargo +nightly miri test -p zonal-runtime --test small_pool
//! ```
//!
//! Tree borrows: crossbeam-epoch's intrusive list trips the older stacked-borrows model.
//! Ignoring leaks: crossbeam-epoch's global collector keeps its per-thread records past the
//! end of the program (five allocations, all of them crossbeam-epoch's). The job blocks'
//! own bookkeeping is leak-checked by its unit tests, which also pass under Miri
//! (`cargo +nightly miri test -p zonal-runtime --lib blocks`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use zonal_runtime::ThreadPoolBuilder;
use zonal_topology::NodeId;

fn pool() -> zonal_runtime::ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .no_policy()
        .worker_cpus([0, 2])
        .build()
        .expect("pool")
}

#[test]
fn every_kind_of_job_runs_once_and_frees_its_memory() {
    let pool = pool();
    let count = AtomicUsize::new(0);
    for _burst in 0..2 {
        pool.scope(|s| {
            for i in 0..40u64 {
                let count = &count;
                match i % 3 {
                    // A bare job in a 32-byte block.
                    0 => s.spawn(move |_| {
                        count.fetch_add(1, Ordering::Relaxed);
                    }),
                    // A 64-byte block.
                    1 => {
                        let pad = [i; 3];
                        s.spawn(move |_| {
                            assert_eq!(pad[2], i);
                            count.fetch_add(1, Ordering::Relaxed);
                        })
                    }
                    // Boxed, with a header (aimed at a node).
                    _ => {
                        let pad = [i; 9];
                        s.spawn_on(NodeId(1), move |_| {
                            assert_eq!(pad[8], i);
                            count.fetch_add(1, Ordering::Relaxed);
                        })
                    }
                }
            }
        });
        // Nested joins (stack jobs).
        let (a, b) = pool.join(|| zonal_runtime::join(|| 1, || 2), || 3);
        assert_eq!((a.0 + a.1, b), (3, 3));
    }
    assert_eq!(count.load(Ordering::Relaxed), 80);

    // 'static spawns: from outside (unowned blocks), from a worker (its blocks), pinned.
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..10 {
        let d = Arc::clone(&done);
        pool.spawn(move || {
            d.fetch_add(1, Ordering::Relaxed);
        });
    }
    let d = Arc::clone(&done);
    pool.install(move || {
        for _ in 0..4 {
            let d = Arc::clone(&d);
            zonal_runtime::spawn(move || {
                d.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    pool.spawn_pinned(1, {
        let d = Arc::clone(&done);
        move || {
            d.fetch_add(1, Ordering::Relaxed);
        }
    });
    pool.shutdown_and_wait(); // every spawned task ran
    assert_eq!(done.load(Ordering::Relaxed), 15);
}
