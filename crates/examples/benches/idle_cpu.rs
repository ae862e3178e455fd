//! CPU time that idle workers burn while a task they are refused waits for its busy owner
//! (`crates/runtime/src/steal/README.md`, "Refused work"), read from the kernel
//! (`/proc/self/task/<tid>/schedstat`: nanoseconds each thread ran), not from a clock.
//!
//! The pool is virtual S1 with workers on CPUs 0–3 (nodes 0 and 1) under conservative-hard.
//! A root placed on node 8 (no workers, outside the zone of nodes 0 and 1) runs on node 0,
//! queues a child of origin 8 (every other worker is refused it) and stays busy; the other
//! three are idle. The two-owner case: workers on nodes 0 and 2, a refused child on a worker
//! of each node, the other two idle (an earlier refusal wake had them wake each other for
//! ever). For comparison, the same pool fully idle, and a rayon pool of 4 threads with one
//! blocked. Each scenario is
//! measured over one second of wall time after a settling pause, three times; the report is
//! the CPU time the idle workers used per second (ms/s: 1000 is one core spinning).
//!
//! Linux only (elsewhere it says so and exits). Run with
//! `cargo bench --bench idle_cpu`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// CPU nanoseconds so far of every thread of this process whose name starts with `prefix`.
fn threads_cpu_ns(prefix: &str) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for e in dir.flatten() {
        let p = e.path();
        let name = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        if !name.trim_end().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(p.join("schedstat")).unwrap_or_default();
        total += stat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

/// Milliseconds of CPU per second of wall time used by threads named `prefix*`, over one
/// second (after `settle`).
fn cpu_ms_per_s(prefix: &str) -> f64 {
    std::thread::sleep(Duration::from_millis(300));
    let a = threads_cpu_ns(prefix);
    std::thread::sleep(Duration::from_secs(1));
    let b = threads_cpu_ns(prefix);
    (b - a) as f64 / 1e6
}

/// A virtual S1 pool with workers on `cpus`, under conservative-hard.
fn zonal_pool_on(cpus: [u32; 4]) -> zonal_runtime::ThreadPool {
    zonal_runtime::ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus(cpus)
        .policy_config(zonal_policy::PolicyConfig::named("conservative-hard").expect("policy"))
        .thread_name(|i| format!("zidle-{i}"))
        .build()
        .expect("pool on s1")
}

/// A root placed on each of `far` (nodes without workers, outside the zones of the pool's
/// nodes) runs on a worker of the nearest node with workers, queues a child (which inherits
/// the root's origin: every other worker is refused it) and blocks (using no CPU) until the
/// returned gates are dropped.
fn refused_tasks_outstanding(
    pool: &zonal_runtime::ThreadPool,
    far: &[u32],
) -> Vec<mpsc::Sender<()>> {
    let mut gates = Vec::new();
    for &node in far {
        let (gate, wait) = mpsc::channel::<()>();
        let queued = Arc::new(AtomicBool::new(false));
        let q = Arc::clone(&queued);
        pool.spawn_on(zonal_topology::NodeId(node), move || {
            zonal_runtime::spawn(|| {});
            q.store(true, Ordering::SeqCst);
            let _ = wait.recv();
        });
        while !queued.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        gates.push(gate);
    }
    gates
}

fn zonal_pool() -> zonal_runtime::ThreadPool {
    zonal_pool_on([0, 1, 2, 3])
}

fn main() {
    if !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("idle_cpu: needs Linux's /proc");
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("idle workers' CPU time, ms per second of wall time (3 runs)");
    let mut rows = Vec::new();
    {
        let pool = zonal_pool();
        let runs: Vec<f64> = (0..3).map(|_| cpu_ms_per_s("zidle-")).collect();
        rows.push(("zonal, idle pool (4 workers)", runs));
        drop(pool);
    }
    {
        let pool = zonal_pool();
        // Node 8: the nearest node with workers is 0, outside its zone. The owner is busy
        // (blocked in its task, using no CPU): what is measured is the three idle workers.
        let gates = refused_tasks_outstanding(&pool, &[8]);
        let runs: Vec<f64> = (0..3).map(|_| cpu_ms_per_s("zidle-")).collect();
        rows.push(("zonal, refused task outstanding (3 idle)", runs));
        drop(gates);
        drop(pool);
    }
    {
        // Two owners on two nodes: workers on nodes 0 and 2 (CPUs 0, 1, 4, 5); roots placed
        // on nodes 10 and 8, whose nearest nodes with workers are 0 and 2, both outside the
        // zones of nodes 0 and 2. Each idle worker is refused both children.
        let pool = zonal_pool_on([0, 1, 4, 5]);
        let gates = refused_tasks_outstanding(&pool, &[10, 8]);
        let runs: Vec<f64> = (0..3).map(|_| cpu_ms_per_s("zidle-")).collect();
        rows.push(("zonal, refused tasks on two nodes (2 idle)", runs));
        drop(gates);
        drop(pool);
    }
    {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .thread_name(|i| format!("ridle-{i}"))
            .build()
            .expect("rayon pool");
        let (gate, wait) = mpsc::channel::<()>();
        pool.spawn(move || {
            let _ = wait.recv();
        });
        let runs: Vec<f64> = (0..3).map(|_| cpu_ms_per_s("ridle-")).collect();
        rows.push(("rayon, one worker blocked (3 idle)", runs));
        drop(gate);
    }
    for (name, runs) in rows {
        let shown: Vec<String> = runs.iter().map(|v| format!("{v:7.2}")).collect();
        println!("{name:<44} {}", shown.join(" "));
    }
}
