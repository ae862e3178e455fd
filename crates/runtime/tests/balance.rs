//! Periodic balancing passes over live queues, and live policy switches (`src/balance/`,
//! `src/policy_switch.rs`).
//!
//! Pools on S1 with workers on CPUs 0–3 (nodes 0 and 1, one board: level II apart) and
//! 16–17 (node 8, four ring hops away: level VI, beyond node 0's zone of levels I–IV).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zonal_policy::{NoPolicy, PolicyConfig, PolicyError};
use zonal_runtime::{MoveRecord, TaskOptions, ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

#[path = "common/parked.rs"]
mod parked;

use parked::{park, pool, release, CPUS};

/// Passes far enough apart that every level is due, busy CPUs included.
fn passes(pool: &ThreadPool, n: usize) -> Vec<MoveRecord> {
    let mut moves = Vec::new();
    for k in 1..=n {
        let r = pool.balance_at(k as u64 * 2_000_000);
        assert!(r.balances, "{r:?}");
        moves.extend(r.moves);
    }
    moves
}

#[test]
fn a_linux_pass_moves_queued_tasks_between_nodes() {
    let pool = pool(PolicyConfig::named("linux").unwrap());
    let origins = vec![NodeId(1); 24];
    let (gate, seen) = park(&pool, &origins);
    let moves = passes(&pool, 3);
    assert!(!moves.is_empty(), "nothing moved");
    // The first moves leave worker 0, the only one with queued tasks; later ones may move
    // them on.
    assert_eq!(moves[0].from_worker, 0, "{moves:?}");
    assert!(
        moves
            .iter()
            .any(|m| m.from_node == NodeId(0) && m.to_node != NodeId(0)),
        "no move between nodes: {moves:?}"
    );
    assert!(moves.iter().all(|m| m.from_worker != m.to_worker));
    for m in &moves {
        assert_eq!(pool.worker_node(m.to_worker), m.to_node);
        assert_eq!(
            m.level,
            pool.topology().node_level(m.from_node, m.to_node).unwrap()
        );
    }
    let by_level: u64 = pool
        .balance_at(6_000_000)
        .total_migrations_by_level
        .iter()
        .sum();
    assert_eq!(by_level as usize, moves.len());
    release(gate, &seen, origins.len());
    // A task moved by a pass ran with one more migration (steals after the release may
    // add more, never fewer).
    let moved = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, info, _)| info.migrations >= 1)
        .count();
    assert!(moved >= moves.len().min(origins.len()));
}

#[test]
fn conservative_hard_passes_keep_the_zone_the_origin_and_aged_tasks() {
    let mut cfg = PolicyConfig::named("conservative-hard").unwrap();
    cfg.age_limit = Some(1);
    let pool = pool(cfg);
    let topo = pool.topology().clone();
    // Origins on node 1 (coming home is allowed), node 0's board partner… and node 8,
    // outside the zone of nodes 0 and 1 (never moved: the zone, or the origin's zone).
    let origins: Vec<NodeId> = (0..24)
        .map(|i| if i % 3 == 0 { NodeId(8) } else { NodeId(1) })
        .collect();
    let (gate, seen) = park(&pool, &origins);
    let moves = passes(&pool, 6);
    assert!(!moves.is_empty(), "nothing moved");
    for m in &moves {
        assert!(
            topo.node_in_zone(m.to_node, m.from_node),
            "beyond the zone: {m:?}"
        );
        assert!(
            topo.distance(m.origin, m.to_node) <= topo.distance(m.origin, m.from_node),
            "farther from its origin: {m:?}"
        );
        assert_ne!(m.origin, NodeId(8), "{m:?}");
        // The age limit is 1: a move ages the task, and an aged task never moves.
        assert_eq!((m.migrations_before, m.aged), (0, true), "{m:?}");
    }
    release(gate, &seen, origins.len());
    let m = pool.metrics();
    assert_eq!(m.total.migrations_beyond_zone, 0, "{m:#?}");
    assert_eq!(m.total.moves_farther_from_origin, 0, "{m:#?}");
    for (_, info, node) in seen.lock().unwrap().iter() {
        assert!(info.migrations <= 1, "{info:?}");
        if info.origin == NodeId(8) {
            assert_eq!(*node, NodeId(0), "{info:?} left node 0");
        }
    }
}

#[test]
fn every_task_runs_once_while_passes_run_and_the_policy_switches() {
    const TASKS: usize = 20_000;
    let pool = Arc::new(pool(PolicyConfig::named("conservative-hard").unwrap()));
    let runs: Arc<Vec<AtomicU32>> = Arc::new((0..TASKS).map(|_| AtomicU32::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let balancer = {
        let (pool, stop) = (Arc::clone(&pool), Arc::clone(&stop));
        std::thread::spawn(move || {
            let (mut now, mut passes) = (0u64, 0u64);
            while !stop.load(Ordering::SeqCst) {
                now += 5_000;
                let _ = pool.balance_at(now);
                passes += 1;
            }
            passes
        })
    };
    let switcher = {
        let (pool, stop) = (Arc::clone(&pool), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut k = 0usize;
            while !stop.load(Ordering::SeqCst) {
                match k % 4 {
                    0 => pool.set_policy("linux").unwrap(),
                    1 => pool.set_policy("conservative-hard").unwrap(),
                    2 => pool.set_policy("unrestricted").unwrap(),
                    _ => pool.set_policy_object(Arc::new(NoPolicy)),
                }
                k += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            k
        })
    };
    let nodes = [NodeId(0), NodeId(1), NodeId(8), NodeId(5)];
    pool.install(|| {
        zonal_runtime::scope(|s| {
            for i in 0..TASKS {
                let runs = Arc::clone(&runs);
                let work = move || {
                    runs[i].fetch_add(1, Ordering::Relaxed);
                    // About 10 µs of work: the run spans many passes and switches.
                    std::hint::black_box((0..std::hint::black_box(2_000u64)).sum::<u64>());
                };
                match i % 4 {
                    0 => s.spawn(move |_| work()),
                    1 => s.spawn_with(TaskOptions::new().origin(nodes[i / 4 % 4]), move |_| work()),
                    2 => s.spawn_on(nodes[i / 4 % 3], move |_| work()),
                    _ => s.spawn_with(TaskOptions::new().continuation(), move |_| work()),
                }
            }
        });
    });
    stop.store(true, Ordering::SeqCst);
    let passes = balancer.join().unwrap();
    let switches = switcher.join().unwrap();
    let counts: Vec<u32> = runs.iter().map(|r| r.load(Ordering::Relaxed)).collect();
    let wrong: Vec<(usize, u32)> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != 1)
        .map(|(i, &c)| (i, c))
        .take(10)
        .collect();
    assert!(wrong.is_empty(), "tasks not run exactly once: {wrong:?}");
    assert!(passes > 0 && switches > 0);
    assert_eq!(pool.metrics().policy_switches, switches as u64);
}

#[test]
fn an_unknown_policy_name_is_a_typed_error_and_changes_nothing() {
    let pool = pool(PolicyConfig::named("linux").unwrap());
    let err = pool.set_policy("no-such-policy").unwrap_err();
    match &err {
        PolicyError::UnknownPolicy { name, .. } => assert_eq!(name, "no-such-policy"),
        e => panic!("unexpected error {e:?}"),
    }
    assert_eq!(pool.policy_name(), "linux");
    let m = pool.metrics();
    assert_eq!((m.policy.as_str(), m.policy_switches), ("linux", 0));
    pool.set_policy("conservative-hard").unwrap();
    let m = pool.metrics();
    assert_eq!(
        (m.policy.as_str(), m.policy_switches),
        ("conservative-hard", 1)
    );
    assert_eq!(pool.balance_now().policy, "conservative-hard");
}

#[test]
fn steal_only_policies_make_passes_do_nothing() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus(CPUS)
        .no_policy()
        .build()
        .unwrap();
    let (gate, seen) = park(&pool, &[NodeId(1); 8]);
    let r = pool.balance_at(10_000_000);
    assert!(!r.balances);
    assert_eq!((r.attempts, r.asked, r.moves.len()), (0, 0, 0));
    release(gate, &seen, 8);
}
