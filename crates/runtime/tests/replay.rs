//! Replay: the runtime's steals, decided again by the policy crate's steal walker.
//!
//! A virtual S1 pool (16 nodes × 2 CPUs, zone I–IV) runs chains of continuations born on two
//! far-apart nodes, so that tasks are stolen at every level, leave home, and age. Every steal
//! is recorded (thief and victim CPUs, the task's origin and migrations before the steal, the
//! level, and the loads the victim decision saw). Each record is then fed through a fresh
//! [`StealWalker`] for the thief: the slot of the victim must sit at the recorded level, and
//! [`StealWalker::decide`] must allow the move — the runtime and the walker decide alike.
//! The same records replayed under another policy show that the check can fail.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{link, spin};
use zonal_policy::{MoveContext, Policy, PolicyConfig, StealWalker, TaskId, TaskMeta};
use zonal_runtime::{QueueKind, StealRecord, ThreadPoolBuilder};
use zonal_topology::{CpuId, Level, NodeId, Topology};

const CHAINS: usize = 600;
const HOPS: u32 = 5;

/// Runs the chains under `policy` and returns the pool's topology and its steal records.
fn record(policy: &Arc<dyn Policy>) -> (Topology, Vec<StealRecord>) {
    let records: Arc<Mutex<Vec<StealRecord>>> = Arc::default();
    let rec = Arc::clone(&records);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .policy(Arc::clone(policy))
        .steal_observer(move |r| rec.lock().unwrap().push(*r))
        .build()
        .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    for c in 0..CHAINS {
        let d = Arc::clone(&done);
        let node = NodeId(if c % 2 == 0 { 0 } else { 15 });
        pool.spawn_on(node, move || link(d, HOPS));
    }
    // Plain scope spawns too: fresh tasks at home, stolen from deques.
    pool.scope(|s| {
        for _ in 0..2_000 {
            s.spawn(|_| {
                spin(500);
            });
        }
    });
    while done.load(Ordering::Relaxed) < CHAINS {
        std::thread::yield_now();
    }
    let topo = pool.topology().clone();
    pool.shutdown_and_wait(); // no steal is recorded after this
    let records = std::mem::take(&mut *records.lock().unwrap());
    (topo, records)
}

/// Records runs until `enough` holds for the records (scheduling on a small machine may
/// leave a run without the steals a check needs), at most 20 runs.
fn record_until(
    policy: &Arc<dyn Policy>,
    enough: impl Fn(&Topology, &[StealRecord]) -> bool,
) -> (Topology, Vec<StealRecord>) {
    let mut last = record(policy);
    for _ in 1..20 {
        if enough(&last.0, &last.1) {
            break;
        }
        last = record(policy);
    }
    last
}

/// Replays every record under `policy`: how many the walker allows.
fn replay(policy: &Arc<dyn Policy>, topo: &Topology, records: &[StealRecord]) -> usize {
    let side = policy.steal_side();
    let walkers: Vec<StealWalker> = (0..topo.cpu_count())
        .map(|c| StealWalker::new(side, topo, CpuId::new(c), |_| true))
        .collect();
    let mut allowed = 0;
    for r in records {
        let w = &walkers[r.thief_cpu as usize];
        let slot = w
            .slot_of(CpuId(r.victim_cpu))
            .expect("the victim is in the order");
        assert_eq!(w.slot(slot).victim.level, Level(r.level), "{r:?}");
        let mut task = TaskMeta::new(TaskId(0), NodeId(r.origin), CpuId(r.victim_cpu));
        task.migrations = r.migrations_before;
        let ctx = MoveContext::steal(0);
        if w.decide(side, topo, slot, &task, ctx, r.loads).is_ok() {
            allowed += 1;
        }
    }
    allowed
}

#[test]
fn the_walker_allows_every_steal_the_runtime_made() {
    for name in [
        "conservative-hard",
        "conservative-soft",
        "linux",
        "unrestricted",
    ] {
        let policy = PolicyConfig::named(name).unwrap().build().unwrap();
        let (topo, records) = record_until(&policy, |_, rs| {
            rs.iter().any(|r| r.level > 0) && rs.iter().any(|r| r.queue != QueueKind::Deque)
        });
        assert!(!records.is_empty(), "{name}: no steal happened");
        assert!(
            records.iter().any(|r| r.level > 0),
            "{name}: no steal across nodes"
        );
        assert!(
            records.iter().any(|r| r.queue != QueueKind::Deque),
            "{name}: only deque steals"
        );
        assert_eq!(
            replay(&policy, &topo, &records),
            records.len(),
            "{name}: the walker refuses a steal the runtime made"
        );
    }
}

#[test]
fn the_replay_can_tell_policies_apart() {
    // Unrestricted stealing crosses the zone; conservative-hard's walker refuses those moves.
    let free = PolicyConfig::named("unrestricted")
        .unwrap()
        .build()
        .unwrap();
    let (topo, records) = record_until(&free, |t, rs| {
        rs.iter().any(|r| usize::from(r.level) >= t.zone_depth())
    });
    let beyond = records
        .iter()
        .filter(|r| usize::from(r.level) >= topo.zone_depth())
        .count();
    assert!(beyond > 0, "unrestricted never stole beyond the zone");
    let hard = PolicyConfig::named("conservative-hard")
        .unwrap()
        .build()
        .unwrap();
    assert!(replay(&hard, &topo, &records) <= records.len() - beyond);
}
