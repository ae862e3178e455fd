//! `pinning`: does every worker stay pinned to its CPU, as the kernel sees it
//! (`Cpus_allowed_list`), through everything a pool does and everything that once broke it?
//!
//! Phases: after build; during a parallel iterator (read from inside it); after a
//! `NodeBuffer` on each node; during and after async tasks that yield; under a control
//! plane balancing every 4 ms, and after `balance_now`; while a second pool lives, and after
//! it is dropped; after the default discovery (`this_machine`: sysfs and procfs) and hwloc's
//! (`hwloc::this_machine`, the regression that re-bound the process) run again; at the end.
//! Each phase lists, per worker, its expected CPU (the pool's, as an OS index), the kernel's
//! allowed list and the CPU it last ran on.
//!
//! Built without the `hwloc` feature, the probe skips hwloc's discovery: the phase
//! `after-hwloc-discovery` and the field `rediscovered_cpus_hwloc` are absent, and `hwloc`
//! is `false`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use zonal::prelude::*;
use zonal_runtime::{ControlOptions, ControlPlane, NodeBuffer, TaskOptions, ThreadPool};
use zonal_topology::NodeId;

use crate::kernel;
use crate::work::{self, PREFIX};

/// The second pool's worker-name prefix.
const OTHER: &str = "zo";

/// One phase's reading.
fn snapshot(phase: &str, prefix: &str, expected: &[u32]) -> Result<Value, String> {
    let seen = kernel::workers(prefix)?;
    let mut rows = Vec::new();
    let mut mismatched = 0usize;
    for (i, &cpu) in expected.iter().enumerate() {
        let view = seen.iter().find(|(w, _)| *w == i).map(|(_, t)| t);
        let ok = view.is_some_and(|t| t.allowed == [cpu]);
        mismatched += usize::from(!ok);
        rows.push(json!({
            "worker": i,
            "expected": cpu,
            "allowed": view.map(|t| t.allowed.clone()),
            "last_cpu": view.and_then(|t| t.last_cpu),
            "tid": view.map(|t| t.tid),
        }));
    }
    Ok(json!({
        "phase": phase,
        "pool": prefix,
        "workers": rows,
        "threads_seen": seen.len(),
        "mismatched": mismatched,
    }))
}

/// Phases read from inside tasks, where an error cannot be returned at once.
#[derive(Default)]
struct Inside(Mutex<Vec<Result<Value, String>>>);

impl Inside {
    fn take(&self, phase: &str, expected: &[u32]) {
        let r = snapshot(phase, PREFIX, expected);
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(r);
    }

    fn drain(&self, into: &mut Vec<Value>) -> Result<(), String> {
        let taken = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        for r in taken {
            into.push(r?);
        }
        Ok(())
    }
}

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let items = work::num_arg(args, "--items", 4096)?;
    let pool = work::pool(None, PREFIX)?;
    let expected = work::worker_cpus(&pool);
    let mut phases = vec![snapshot("after-build", PREFIX, &expected)?];
    let inside = Arc::new(Inside::default());

    parallel_iterator(&pool, &expected, &inside, items);
    inside.drain(&mut phases)?;
    phases.push(snapshot("after-parallel-iterator", PREFIX, &expected)?);

    let topo = pool.topology().clone();
    let mut bindings = Vec::new();
    for n in 0..topo.node_count() {
        let node = NodeId::new(n);
        let buf = NodeBuffer::try_new_in(&pool, node, 1 << 16, |i| i as u8)
            .map_err(|e| format!("NodeBuffer on node {node}: {e}"))?;
        bindings.push(json!({ "node": n, "binding": buf.binding() }));
        phases.push(snapshot(
            &format!("after-nodebuffer-node{n}"),
            PREFIX,
            &expected,
        )?);
    }

    async_tasks(&pool, &expected, &inside)?;
    inside.drain(&mut phases)?;
    phases.push(snapshot("after-async-tasks", PREFIX, &expected)?);

    let (passes, balance_now_moves) = control_plane(&pool, &expected, &mut phases)?;

    let other = work::pool(None, OTHER)?;
    let other_expected = work::worker_cpus(&other);
    other.par_for(0..256, 8, |r| {
        for i in r {
            std::hint::black_box(work::spin(i as u64 * 10));
        }
    });
    phases.push(snapshot("while-second-pool", PREFIX, &expected)?);
    phases.push(snapshot("second-pool-itself", OTHER, &other_expected)?);
    other.shutdown_and_wait(); // its threads are gone
    phases.push(snapshot("after-second-pool-dropped", PREFIX, &expected)?);

    let rediscovered = zonal_topology::this_machine()
        .map(|m| m.cpus().len())
        .map_err(|e| e.to_string());
    phases.push(snapshot("after-default-discovery", PREFIX, &expected)?);
    let rediscovered_hwloc = hwloc_cpus();
    if rediscovered_hwloc.is_some() {
        phases.push(snapshot("after-hwloc-discovery", PREFIX, &expected)?);
    }

    // Both discoveries again while the workers are busy, then one more iterator.
    let busy = pool.spawn_handle(|| zonal_topology::this_machine().map(|m| m.cpus().len()));
    let busy_hwloc = pool.spawn_handle(hwloc_cpus);
    parallel_iterator(&pool, &expected, &inside, items / 4);
    let _ = busy.join();
    let _ = busy_hwloc.join();
    inside.drain(&mut phases)?;
    phases.push(snapshot("final", PREFIX, &expected)?);

    let mismatched: u64 = phases.iter().filter_map(|p| p["mismatched"].as_u64()).sum();
    let mut report = json!({
        "check": "pinning",
        "hwloc": cfg!(feature = "hwloc"),
        "workers": expected.len(),
        "expected_cpus": expected,
        "main_thread_affinity": zonal_runtime::os::thread_affinity().map_err(|e| e.to_string()),
        "buffers": bindings,
        "balance_passes": passes,
        "balance_now_moves": balance_now_moves,
        "rediscovered_cpus": rediscovered,
        "phases": phases,
        "mismatched_total": mismatched,
    });
    if let Some(found) = rediscovered_hwloc {
        report["rediscovered_cpus_hwloc"] = json!(found);
    }
    Ok(report)
}

/// How many CPUs hwloc's discovery (`hwloc::this_machine`) finds on this machine.
#[cfg(feature = "hwloc")]
fn hwloc_cpus() -> Option<Result<usize, String>> {
    Some(
        zonal_topology::hwloc::this_machine()
            .map(|m| m.cpus().len())
            .map_err(|e| e.to_string()),
    )
}

/// `None`: this probe was built without the `hwloc` feature, and links no libhwloc.
#[cfg(not(feature = "hwloc"))]
fn hwloc_cpus() -> Option<Result<usize, String>> {
    None
}

/// A node-partitioned iterator whose first item of each quarter reads the kernel's view.
fn parallel_iterator(pool: &ThreadPool, expected: &[u32], inside: &Inside, items: u64) {
    let quarter = (items / 4).max(1);
    pool.install(|| {
        (0..items).into_par_iter().for_each(|i| {
            if i % quarter == 0 {
                inside.take("during-parallel-iterator", expected);
            }
            std::hint::black_box(work::spin(200));
        });
    });
}

/// Async tasks on every node that yield a few times; one of them reads the kernel's view
/// between yields.
fn async_tasks(pool: &ThreadPool, expected: &[u32], inside: &Arc<Inside>) -> Result<(), String> {
    let nodes = pool.worker_nodes();
    let mut handles = Vec::new();
    for (k, node) in nodes.iter().cycle().take(nodes.len() * 4).enumerate() {
        let inside = Arc::clone(inside);
        let expected = expected.to_vec();
        let opts = TaskOptions::new().origin(*node);
        handles.push(pool.spawn_async_with(opts, async move {
            for round in 0..4 {
                std::hint::black_box(work::spin(2_000));
                if k == 0 && round == 2 {
                    inside.take("during-async-tasks", &expected);
                }
                zonal::task::yield_now().await;
            }
        }));
    }
    for h in handles {
        h.join().map_err(|e| format!("async task: {e}"))?;
    }
    Ok(())
}

/// A control plane balancing every 4 ms over a skewed load (every task born on the first
/// node), read during the load, then one `balance_now` pass. Returns the control plane's
/// passes and the tasks `balance_now` moved.
fn control_plane(
    pool: &ThreadPool,
    expected: &[u32],
    phases: &mut Vec<Value>,
) -> Result<(u64, usize), String> {
    let cp = ControlPlane::start_with(
        pool.metrics_handle(),
        ControlOptions::new().balance_every(zonal_runtime::BALANCE_TICK),
    )
    .map_err(|e| format!("control plane: {e}"))?;
    let first = pool.worker_nodes()[0];
    let mut handles = Vec::new();
    for _ in 0..(expected.len() * 4) {
        let opts = TaskOptions::new().origin(first);
        handles.push(pool.spawn_async_with(opts, async {
            for _ in 0..6 {
                std::hint::black_box(work::spin(5_000));
                zonal::task::yield_now().await;
            }
        }));
    }
    // Let a few passes happen while the tasks run (not a timing assertion: the count is
    // reported, and the phase is read whatever it is).
    for _ in 0..50 {
        if cp.balance_stats().passes >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(4));
    }
    phases.push(snapshot("during-control-plane", PREFIX, expected)?);
    for h in handles {
        h.join().map_err(|e| format!("async task: {e}"))?;
    }
    let passes = cp.balance_stats().passes;
    drop(cp);
    phases.push(snapshot("after-control-plane", PREFIX, expected)?);
    let moved = pool.balance_now().moves.len();
    phases.push(snapshot("after-balance-now", PREFIX, expected)?);
    Ok((passes, moved))
}
