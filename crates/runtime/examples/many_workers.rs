//! A virtual pool of thousands of workers: how long it takes to start, to run a scope of
//! small tasks (each counted exactly once) and to stop.
//!
//! ```text
//! cargo run --release -p zonal-runtime --example many_workers -- [WORKERS [TASKS]]
//! ```
//!
//! The machine is generated: two NUMA nodes (distance 10/20) of `WORKERS / 2` CPUs each,
//! one unpinned worker per virtual CPU (defaults: 3,000 workers, 20,000 tasks). Starting
//! builds each worker's victim order and steal walk, and the idle workers' first walks
//! over thousands of mostly empty deques; the figures in BENCHMARKS.md come from here.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

fn arg(i: usize, default: usize) -> Result<usize, String> {
    match std::env::args().nth(i) {
        None => Ok(default),
        Some(s) => s.parse().map_err(|e| format!("argument {i} ({s:?}): {e}")),
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workers = arg(1, 3_000)?;
    let tasks = arg(2, 20_000)?;
    if workers < 2 || workers % 2 != 0 {
        return Err(format!("WORKERS must be even and at least 2, not {workers}").into());
    }
    let topo = zonal_topology::presets::hierarchical(&[2], workers / 2)?;
    let t = Instant::now();
    let pool = zonal_runtime::ThreadPoolBuilder::new()
        .topology(topo)
        .build()?;
    let started = t.elapsed();
    let runs: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
    let t = Instant::now();
    pool.scope(|s| {
        for r in &runs {
            s.spawn(move |_| {
                r.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    let ran = t.elapsed();
    let once = runs.iter().all(|r| r.load(Ordering::Relaxed) == 1);
    let n = pool.num_workers();
    let t = Instant::now();
    pool.shutdown_and_wait();
    let stopped = t.elapsed();
    println!(
        "{n} workers: start {started:.3?}, scope of {tasks} tasks {ran:.3?}, stop {stopped:.3?}; \
         every task ran exactly once: {once}"
    );
    if once {
        Ok(())
    } else {
        Err("a task ran more or less than once".into())
    }
}
