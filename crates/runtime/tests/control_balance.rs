//! The control plane's periodic balancer (`src/control/balance.rs`) end to end: it runs
//! passes on its own thread at its tick, moves queued tasks under the pool's policy, and
//! counts each move in the metrics (`balance_migrations_by_level`, Prometheus
//! `source="balance"`).
//!
//! Pools on S1 with workers on CPUs 0–3 (nodes 0 and 1, level II apart) and 16–17 (node 8,
//! level VI: beyond node 0's zone of levels I–IV). Every worker is blocked while tasks wait
//! in worker 0's away queue, so that only the balancer can move them; waits are bounded
//! (the test fails after 20 s rather than hang) but nothing asserts on time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zonal_policy::PolicyConfig;
use zonal_runtime::{ControlOptions, ControlPlane, TaskOptions, ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

#[path = "common/parked.rs"]
mod parked;

use parked::{park, pool, release};

/// Waits (bounded) until `done` holds of the pool's balance migrations by level.
fn wait_for(pool: &ThreadPool, cp: &ControlPlane, done: impl Fn(&[u64]) -> bool) {
    let start = Instant::now();
    loop {
        let lv = pool.metrics().total.balance_migrations_by_level;
        if done(&lv) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still waiting after 20 s: moves by level {lv:?}, {:?}",
            cp.balance_stats()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn balancing(pool: &ThreadPool) -> ControlPlane {
    ControlPlane::start_with(
        pool.metrics_handle(),
        ControlOptions::new().balance_every(Duration::from_millis(1)),
    )
    .expect("control plane")
}

#[test]
fn under_linux_the_control_plane_moves_queued_tasks_between_nodes() {
    let pool = pool(PolicyConfig::named("linux").unwrap());
    let (gate, seen) = park(&pool, &[NodeId(1); 24]);
    let cp = balancing(&pool);
    // A move between nodes (level II or beyond) by the periodic passes.
    wait_for(&pool, &cp, |lv| lv.iter().skip(1).sum::<u64>() >= 1);
    let got = release(gate, &seen, 24);
    drop(cp);
    // Where the tasks finally ran is a race once the workers are released (idle workers
    // steal from each other's away queues); the balancer's own moves are in the metrics.
    let m = pool.metrics();
    let stats_moves: u64 = m.total.balance_migrations_by_level.iter().sum();
    assert!(stats_moves >= 1);
    // Every move the balancer counted is in the metrics, and each moved task's count.
    let migrated: u64 = got
        .iter()
        .map(|(_, info, _)| u64::from(info.migrations))
        .sum();
    assert!(migrated >= stats_moves, "{migrated} < {stats_moves}");
}

#[test]
fn under_conservative_hard_nothing_leaves_the_zone_and_aged_tasks_stay() {
    let mut cfg = PolicyConfig::named("conservative-hard").unwrap();
    cfg.age_limit = Some(1);
    let pool = pool(cfg);
    // Origins on node 1 (coming home is allowed) and node 8 (outside the zone of nodes 0
    // and 1: never moved).
    let origins: Vec<NodeId> = (0..24)
        .map(|i| if i % 3 == 0 { NodeId(8) } else { NodeId(1) })
        .collect();
    let (gate, seen) = park(&pool, &origins);
    let cp = balancing(&pool);
    wait_for(&pool, &cp, |lv| lv.iter().sum::<u64>() >= 1);
    // Let the balancer keep running: aged tasks (one move) must never move again.
    let passes = cp.balance_stats().passes;
    while cp.balance_stats().passes < passes + 50 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let got = release(gate, &seen, origins.len());
    drop(cp);
    for (i, info, node) in &got {
        assert_ne!(*node, NodeId(8), "task {i} ran beyond the zone: {info:?}");
        assert!(
            info.migrations <= 1,
            "task {i} moved after it aged: {info:?}"
        );
        if info.origin == NodeId(8) {
            assert_eq!(*node, NodeId(0), "task {i} ({info:?}) left node 0");
        }
    }
    let m = pool.metrics();
    let lv = &m.total.balance_migrations_by_level;
    assert!(
        lv.iter().skip(m.zone_depth).all(|&n| n == 0),
        "beyond the zone: {lv:?}"
    );
    assert_eq!(m.total.migrations_beyond_zone, 0);
    assert_eq!(m.total.moves_farther_from_origin, 0);
}

#[test]
fn async_tasks_complete_exactly_once_while_the_balancer_runs_and_the_policy_switches() {
    const TASKS: usize = 2_000;
    const SLICES: u32 = 8;
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .preset("s1")
            .policy_config(PolicyConfig::named("conservative-hard").unwrap())
            .build()
            .expect("pool on s1"),
    );
    let cp = balancing(&pool);
    let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..TASKS).map(|_| AtomicUsize::new(0)).collect());
    let handles: Vec<_> = (0..TASKS)
        .map(|i| {
            let runs = Arc::clone(&runs);
            // Skewed: three quarters born on node 0.
            let origin = NodeId(if i % 4 == 0 { (i % 16) as u32 } else { 0 });
            pool.try_spawn_async_with(TaskOptions::new().origin(origin), async move {
                for s in 0..SLICES {
                    if s % 2 == 0 {
                        zonal_runtime::task::yield_now().await;
                    } else {
                        zonal_runtime::task::sleep(Duration::from_micros(200)).await;
                    }
                }
                runs[i].fetch_add(1, Ordering::SeqCst);
                i
            })
            .expect("node 0..16 exists")
        })
        .collect();
    let policies = [
        "linux",
        "conservative-soft",
        "unrestricted",
        "conservative-hard",
    ];
    let mut k = 0;
    // At least a few switches, the first while most tasks are still queued or sleeping.
    while k < 5 || !handles.iter().all(zonal_runtime::JoinHandle::is_finished) {
        pool.set_policy(policies[k % policies.len()])
            .expect("known policy");
        k += 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().expect("no panic"), i);
    }
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.load(Ordering::SeqCst), 1, "task {i}");
    }
    let m = pool.metrics();
    assert_eq!(m.total.async_tasks_completed, TASKS as u64);
    assert_eq!(m.policy_switches, k as u64);
    assert!(cp.balance_stats().passes > 0);
}
