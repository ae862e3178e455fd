//! Parked tasks for balancing tests (`balance.rs`, `control_balance.rs`): pools on S1 with
//! workers on CPUs 0–3 (nodes 0 and 1, one board: level II apart) and 16–17 (node 8, four
//! ring hops away: level VI, beyond node 0's zone of levels I–IV); every worker blocked
//! while tasks wait in worker 0's away queue, so that only a balancing pass can move them.
//! Waits are bounded (a test fails after 20 s rather than hang), and nothing asserts on time.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zonal_policy::PolicyConfig;
use zonal_runtime::{TaskInfo, ThreadPool, ThreadPoolBuilder};
use zonal_topology::NodeId;

pub const CPUS: [u32; 6] = [0, 1, 2, 3, 16, 17];

pub fn pool(cfg: PolicyConfig) -> ThreadPool {
    ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus(CPUS)
        .policy_config(cfg)
        .build()
        .expect("pool on s1")
}

pub type Seen = Arc<Mutex<Vec<(usize, TaskInfo, NodeId)>>>;

/// Releases the workers when dropped (also when an assertion fails).
pub struct Gate(Arc<AtomicBool>);

impl Drop for Gate {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Blocks every worker with one task per entry of `origins` queued in worker 0's away
/// queue (their origins are not node 0: they are away from home there; a task at home
/// would lie in worker 0's deque, which only steals take from).
pub fn park(pool: &ThreadPool, origins: &[NodeId]) -> (Gate, Seen) {
    let origins = origins.to_vec();
    let gate = Arc::new(AtomicBool::new(false));
    let blocked = Arc::new(AtomicUsize::new(0));
    let seen: Seen = Arc::default();
    let n = pool.num_workers();
    let block = |gate: &Arc<AtomicBool>, blocked: &Arc<AtomicUsize>| {
        let (gate, blocked) = (Arc::clone(gate), Arc::clone(blocked));
        move || {
            blocked.fetch_add(1, Ordering::SeqCst);
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    for w in 1..n {
        pool.spawn_pinned(w, block(&gate, &blocked));
    }
    while blocked.load(Ordering::SeqCst) < n - 1 {
        std::thread::yield_now();
    }
    // Worker 0 blocked too, then its away queue filled: tasks living away from their origin
    // (`spawn_away`: placed roots would go to their node's injector instead).
    pool.spawn_pinned(0, block(&gate, &blocked));
    while blocked.load(Ordering::SeqCst) < n {
        std::thread::yield_now();
    }
    for (i, &origin) in origins.iter().enumerate() {
        let s = Arc::clone(&seen);
        pool.spawn_away(0, origin, move || {
            let info = zonal_runtime::current_task().expect("on a worker");
            let node = zonal_runtime::current_node().expect("on a worker");
            s.lock().unwrap().push((i, info, node));
        });
    }
    (Gate(gate), seen)
}

/// Releases the workers; every task ran exactly once.
pub fn release(gate: Gate, seen: &Seen, tasks: usize) -> Vec<(usize, TaskInfo, NodeId)> {
    drop(gate);
    let start = Instant::now();
    while seen.lock().unwrap().len() < tasks {
        assert!(start.elapsed() < Duration::from_secs(20), "tasks lost");
        std::thread::sleep(Duration::from_millis(1));
    }
    let got = seen.lock().unwrap().clone();
    let mut ids: Vec<usize> = got.iter().map(|s| s.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..tasks).collect::<Vec<_>>(), "each task ran once");
    got
}
