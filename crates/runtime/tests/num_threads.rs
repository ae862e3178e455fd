//! `ThreadPoolBuilder::num_threads`: sizes, spreading over nodes, extra unpinned workers
//! beyond the CPUs, and the combinations refused.

use std::sync::atomic::{AtomicU8, Ordering};

use zonal_runtime::{ThreadPoolBuilder, MAX_THREADS};

/// The CPUs a default pool of this machine has (as many workers).
fn machine_cpus() -> usize {
    ThreadPoolBuilder::new().build().unwrap().num_workers()
}

#[test]
fn one_and_two_workers_on_this_machine() {
    let cpus = machine_cpus();
    for n in [1, 2] {
        let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
        assert_eq!(pool.num_workers(), n);
        assert_eq!(pool.install(zonal_runtime::current_num_threads), n);
        assert_eq!(pool.extra_workers(), n.saturating_sub(cpus));
    }
    // 0: the default, one per CPU.
    let pool = ThreadPoolBuilder::new().num_threads(0).build().unwrap();
    assert_eq!(pool.num_workers(), cpus);
    assert_eq!((pool.unpinned_workers(), pool.extra_workers()), (0, 0));
}

#[test]
fn more_workers_than_cpus_are_extra_unpinned_and_run_every_task_once() {
    let cpus = machine_cpus();
    let n = (cpus * 4).max(8);
    let pool = ThreadPoolBuilder::new().num_threads(n).build().unwrap();
    assert_eq!(pool.num_workers(), n);
    assert_eq!(pool.extra_workers(), n - cpus);
    assert_eq!(pool.unpinned_workers(), n - cpus);
    assert_eq!(pool.pinning(), zonal_runtime::Pinning::Pinned);
    // Every worker exists and runs.
    let idx = pool.broadcast(|ctx| ctx.index());
    assert_eq!(idx, (0..n).collect::<Vec<_>>());
    // A 10,000-task scope: each task exactly once.
    let runs: Vec<AtomicU8> = (0..10_000).map(|_| AtomicU8::new(0)).collect();
    pool.scope(|s| {
        for r in &runs {
            s.spawn(move |_| {
                r.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
    let m = pool.metrics();
    assert_eq!(m.workers.len(), n);
}

#[test]
fn on_the_s1_preset_workers_spread_over_nodes_then_go_beyond_the_cpus() {
    // s1: 16 nodes of 2 CPUs.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(16)
        .build()
        .unwrap();
    assert_eq!(pool.num_workers(), 16);
    assert_eq!(pool.worker_nodes().len(), 16, "one worker per node");
    assert_eq!(pool.extra_workers(), 0);

    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(50)
        .build()
        .unwrap();
    assert_eq!((pool.num_workers(), pool.extra_workers()), (50, 18));
    assert_eq!(pool.unpinned_workers(), 50, "a virtual pool is unpinned");
    assert_eq!(pool.topology().cpu_count(), 50);
    let per_node: Vec<usize> = (0..16)
        .map(|n| (0..50).filter(|&w| pool.worker_node(w).0 == n).count())
        .collect();
    assert!(per_node.iter().all(|&k| k == 3 || k == 4), "{per_node:?}");
    let sum = pool.par_reduce(
        0..100_000,
        100,
        || 0u64,
        |r| r.map(|i| i as u64).sum(),
        |a, b| a + b,
    );
    assert_eq!(sum, 4_999_950_000);

    // Spread pinning binds the pool's own CPUs, never the extra workers.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .virtual_pinning(zonal_runtime::VirtualPinning::Spread)
        .num_threads(40)
        .build()
        .unwrap();
    assert_eq!(pool.unpinned_workers(), 8);
}

#[test]
fn invalid_combinations_and_absurd_counts_are_refused() {
    let err = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(4)
        .worker_cpus([0, 1])
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("worker_cpus"), "{err}");
    assert_eq!(err.num_threads(), Some(4));
    assert!(err.is_input_error());

    let err = ThreadPoolBuilder::new()
        .preset("s1")
        .workers_per_node(1)
        .num_threads(4)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("workers_per_node"), "{err}");

    let err = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(MAX_THREADS + 1)
        .build()
        .unwrap_err();
    assert_eq!(err.num_threads(), Some(MAX_THREADS + 1));
    assert!(
        err.to_string().contains(&(MAX_THREADS + 1).to_string()),
        "{err}"
    );

    // num_threads(0) is the default: it conflicts with nothing.
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(0)
        .worker_cpus([0, 1])
        .build()
        .unwrap();
    assert_eq!(pool.num_workers(), 2);
}
