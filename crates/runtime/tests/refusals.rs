//! Idle workers park while a task they are refused waits for its busy owner
//! (`crates/runtime/src/steal/README.md`, "Refused work"): a refusal wakes the task's owner only, never
//! another worker the policy would refuse the same task.
//!
//! A pool on S1 with workers on CPUs 0–3 (nodes 0 and 1, one board: level II apart). Worker
//! 0 queues a task whose origin is node 8 (four ring hops away: outside the zone of nodes 0
//! and 1, so every other worker is refused it, `OriginOutsideZone`), then stays busy. The
//! three idle workers search, are refused, and park; over the next second nothing changes,
//! and none of them wakes or parks again. When worker 0 is free, it runs the task itself.
//! Waits are bounded (a failure, not a hang); nothing asserts on how long anything took.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use zonal_policy::PolicyConfig;
use zonal_runtime::{PoolMetrics, TaskOptions, ThreadPoolBuilder};
use zonal_topology::NodeId;

fn idle_counts(m: &PoolMetrics) -> Vec<(u64, u64)> {
    m.workers[1..]
        .iter()
        .map(|w| (w.wakeups, w.parks))
        .collect()
}

fn refusals(m: &PoolMetrics) -> u64 {
    m.workers[1..].iter().map(|w| w.refused.total()).sum()
}

#[test]
fn idle_workers_park_while_a_refused_task_waits_for_its_busy_owner() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1, 2, 3])
        .policy_config(PolicyConfig::named("conservative-hard").unwrap())
        .build()
        .expect("pool on s1");
    let far = NodeId(8);
    assert!(!pool.topology().node_in_zone(NodeId(0), far));
    assert!(!pool.topology().node_in_zone(NodeId(1), far));

    let gate = Arc::new(AtomicBool::new(false));
    let queued = Arc::new(AtomicBool::new(false));
    let ran_on = Arc::new(AtomicUsize::new(usize::MAX));
    let (done_tx, done_rx) = mpsc::channel();
    {
        let (gate, queued, ran_on) = (Arc::clone(&gate), Arc::clone(&queued), Arc::clone(&ran_on));
        pool.spawn_pinned(0, move || {
            zonal_runtime::spawn_with(TaskOptions::new().origin(far), move || {
                ran_on.store(
                    zonal_runtime::current_thread_index().unwrap(),
                    Ordering::SeqCst,
                );
                done_tx.send(()).unwrap();
            });
            queued.store(true, Ordering::SeqCst);
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while !queued.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "worker 0 never queued the task");
        std::thread::yield_now();
    }
    // The idle workers find the task and are refused it; then they all park.
    let settled = |m: &PoolMetrics| refusals(m) > 0;
    let mut m = pool.metrics();
    while !settled(&m) {
        assert!(
            Instant::now() < deadline,
            "nobody was refused the task: {m:#?}"
        );
        std::thread::sleep(Duration::from_millis(5));
        m = pool.metrics();
    }
    // Wait until the counts stop moving (each idle worker parked after its last refusal):
    // unchanged over three polls in a row, as every idle worker searches and spins a
    // bounded number of rounds before it parks, which on a loaded machine takes a while.
    let mut before = idle_counts(&m);
    let mut still = 0;
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = idle_counts(&pool.metrics());
        if now == before {
            still += 1;
            if still == 3 {
                break;
            }
            continue;
        }
        still = 0;
        assert!(
            Instant::now() < deadline,
            "the idle workers never settled: they keep waking up ({before:?} -> {now:?})"
        );
        before = now;
    }
    // A second with the refused task outstanding and nothing else happening.
    let r0 = refusals(&pool.metrics());
    std::thread::sleep(Duration::from_secs(1));
    let m = pool.metrics();
    assert_eq!(
        idle_counts(&m),
        before,
        "a refused worker woke up while nothing changed: {m:#?}"
    );
    assert_eq!(refusals(&m), r0, "refused again while parked");
    assert_eq!(
        ran_on.load(Ordering::SeqCst),
        usize::MAX,
        "somebody took it"
    );

    // The owner, once free, runs it itself.
    gate.store(true, Ordering::SeqCst);
    done_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the task ran");
    assert_eq!(ran_on.load(Ordering::SeqCst), 0);
}
