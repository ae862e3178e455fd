//! The conservative laws, checked on the `s1` preset (16 nodes × 2 CPUs, 6 levels, zone
//! I–IV) from a record of every steal and from the metrics:
//! - hard zone: no steal from beyond level S;
//! - no task already away from home moves farther from its origin;
//! - no aged task is ever stolen (they stay in their worker's inbox).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::link;
use zonal_policy::{Policy, PolicyConfig};
use zonal_runtime::{StealRecord, ThreadPool, ThreadPoolBuilder};
use zonal_topology::{NodeId, Topology};

const CHAINS: usize = 2_000;
const HOPS: u32 = 6;

/// Runs the chains: all born on nodes 0 and 15 (far apart), so every other node's workers
/// must steal across levels to help.
fn run(policy: Arc<dyn Policy>, age_limit: Option<u32>) {
    let records: Arc<Mutex<Vec<StealRecord>>> = Arc::default();
    let rec = Arc::clone(&records);
    let pool: ThreadPool = ThreadPoolBuilder::new()
        .preset("s1")
        .policy(policy)
        .steal_observer(move |r| rec.lock().unwrap().push(*r))
        .build()
        .unwrap();
    let topo: Topology = pool.topology().clone();
    let done = Arc::new(AtomicUsize::new(0));
    for c in 0..CHAINS {
        let d = Arc::clone(&done);
        let node = NodeId(if c % 2 == 0 { 0 } else { 15 });
        pool.spawn_on(node, move || link(d, HOPS));
    }
    let m_pool = pool;
    // Every chain is done before the metrics are read; the pool then stops.
    let metrics = {
        let p = m_pool;
        while done.load(Ordering::Relaxed) < CHAINS {
            std::thread::yield_now();
        }
        let m = p.metrics();
        p.shutdown_and_wait();
        m
    };
    assert_eq!(done.load(Ordering::Relaxed), CHAINS);
    let records = records.lock().unwrap();
    let s = topo.zone_depth();
    assert!(
        !records.is_empty(),
        "no steal at all: the test exercises nothing"
    );
    for r in records.iter() {
        assert!(
            usize::from(r.level) < s,
            "steal beyond the zone (level {}): {r:?}",
            r.level + 1
        );
        if r.origin != r.victim_node {
            let (o, v, t) = (
                NodeId(r.origin),
                NodeId(r.victim_node),
                NodeId(r.thief_node),
            );
            assert!(
                topo.distance(o, t) <= topo.distance(o, v),
                "task moved farther from its origin: {r:?}"
            );
        }
        if let Some(limit) = age_limit {
            assert!(
                r.migrations_before < limit,
                "an aged task was stolen: {r:?}"
            );
        }
    }
    assert_eq!(metrics.total.migrations_beyond_zone, 0);
    assert_eq!(metrics.total.moves_farther_from_origin, 0);
    assert_eq!(
        metrics.total.steals_by_level[s..].iter().sum::<u64>(),
        0,
        "{:?}",
        metrics.total.steals_by_level
    );
    let away = records.iter().filter(|r| r.origin != r.victim_node).count();
    eprintln!(
        "{}: {} steals ({} of tasks away from home), by level {:?}, aged kept {}, refused {:?}",
        metrics.policy,
        records.len(),
        away,
        metrics.total.steals_by_level,
        metrics.total.aged_kept,
        metrics.total.refused.by_name()
    );
    if age_limit.is_some() {
        assert!(
            metrics.total.aged_kept > 0,
            "no task aged: the test exercises nothing"
        );
        assert!(
            away > 0,
            "no task away from home was stolen: the test exercises nothing"
        );
    }
}

#[test]
fn mini_conservative_obeys_the_laws() {
    run(Arc::new(common::MiniConservative { age_limit: 2 }), Some(2));
}

#[test]
fn conservative_hard_obeys_the_laws() {
    let mut cfg = PolicyConfig::named("conservative-hard").unwrap();
    cfg.age_limit = Some(2);
    // zonal-policy builds it: a failure here is one, never a reason to skip.
    let policy = cfg
        .build()
        .unwrap_or_else(|e| panic!("conservative-hard does not build: {e}"));
    run(policy, Some(2));
}
