//! `faults` and `cpuset`: a pool on this machine while CPUs go away, and inside a
//! restricted cpuset.
//!
//! `zonal-probe faults [--cpu N]`: a pinned pool (workers named `zw{i}`) runs a stream of
//! numbered tasks, each counting its own execution. Then, in order:
//! 1. *before*: every worker's affinity from `/proc`;
//! 2. *offline*: `0 > /sys/devices/system/cpu/cpuN/online` for a CPU with a worker (the
//!    highest one, never cpu0, or `--cpu N`); poll the pool's metrics until that worker is
//!    reported displaced; wait until the pool completes more tasks; affinities *during*;
//! 3. *idle*: stop the stream and wait for every task (the pool goes idle, so the re-pin
//!    below is the displaced worker's timed park, not a task, at work);
//! 4. *online*: `1 > …/online`; poll until the worker is pinned again; affinities *after*;
//! 5. every task id must have run exactly once (`lost`, `duplicated`).
//!
//! Every wait polls with a generous deadline; a wait that runs out is a `failures` entry in
//! the JSON, never a hang. The CPU is put back online whatever happened.
//!
//! `zonal-probe cpuset [--buffer-node OS_ID]`: the default pool of this machine under
//! whatever taskset or cgroup cpuset the job started it in: the allowed CPUs, the workers'
//! CPUs and kernel affinities, each node's kind and workers, and a `NodeBuffer` on every
//! node without CPUs (or the one named) with what the kernel says of its pages.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zonal_runtime::{os, NodeBuffer, NodeWorkers, PoolMetrics, ThreadPool, ThreadPoolBuilder};
use zonal_topology::{CpuId, NodeId, NodeKind};

use crate::kernel;

/// Thread-name prefix of the workers (found in `/proc` by it).
const PREFIX: &str = "zw";
/// Task ids the stream may use (each a byte of counts).
const MAX_TASKS: usize = 1 << 21;
/// Tasks queued and not yet run, at most (keeps the queues short under TCG).
const IN_FLIGHT: usize = 256;
/// Tasks that must complete in each phase for the pool to count as "still running".
const PHASE_TASKS: usize = 2_000;
/// How long any wait may take before it is reported as a failure: generous, since an
/// emulated guest on a loaded host runs 10–50 times slower, and shorter than the guest
/// tests' quiet limit (600 s, `crates/guest/tests/common/mod.rs`) so that a hang is
/// reported here, by what it waited for.
const DEADLINE: Duration = Duration::from_secs(300);

/// A pool of this machine with named workers.
fn pool() -> Result<ThreadPool, String> {
    ThreadPoolBuilder::new()
        .no_policy()
        .thread_name(|i| format!("{PREFIX}{i}"))
        .build()
        .map_err(|e| format!("building the pool: {e}"))
}

/// `--flag VALUE` as a number.
fn flag(args: &[String], name: &str) -> Result<Option<u32>, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(None),
        Some(i) => {
            let v = args
                .get(i + 1)
                .ok_or_else(|| format!("{name} needs a value"))?;
            v.parse()
                .map(Some)
                .map_err(|e| format!("{name} {v:?}: {e}"))
        }
    }
}

/// Each worker's OS CPU index (the topology CPU of its metrics).
fn worker_os_cpus(pool: &ThreadPool) -> Vec<u32> {
    let m = pool.topology().machine();
    pool.metrics()
        .workers
        .iter()
        .filter_map(|w| w.cpu)
        .map(|cpu| m.cpu(CpuId::new(cpu as usize)).os_index)
        .collect()
}

/// Every worker's view from `/proc`: `[{worker, tid, allowed, last_cpu}]`.
fn affinities() -> Value {
    match kernel::workers(PREFIX) {
        Ok(v) => Value::Array(
            v.into_iter()
                .map(|(i, t)| {
                    json!({"worker": i, "tid": t.tid, "allowed": t.allowed, "last_cpu": t.last_cpu})
                })
                .collect(),
        ),
        Err(e) => json!({ "error": e }),
    }
}

/// The displacement view of one worker, and the pool's count.
fn pin_view(m: &PoolMetrics, w: usize) -> Value {
    let x = &m.workers[w];
    json!({
        "pinned": x.pinned,
        "displaced": x.displaced,
        "displacements": x.displacements,
        "repins": x.repins,
        "tasks_run": x.tasks_run,
        "displaced_workers": m.displaced_workers,
        "total_displacements": m.total.displacements,
        "total_repins": m.total.repins,
    })
}

/// Polls `f` every 10 ms until it holds or [`DEADLINE`] passes; `false`: it never held.
fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + DEADLINE;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The stream of numbered tasks: `hits[id]` counts the runs of task `id`.
struct Stream {
    hits: Arc<Vec<AtomicU8>>,
    spawned: Arc<AtomicUsize>,
    done: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    producer: Option<std::thread::JoinHandle<()>>,
}

impl Stream {
    /// Starts a producer thread that keeps about [`IN_FLIGHT`] tasks queued in `pool`.
    fn start(pool: &Arc<ThreadPool>) -> Self {
        let hits: Arc<Vec<AtomicU8>> = Arc::new((0..MAX_TASKS).map(|_| AtomicU8::new(0)).collect());
        let spawned = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let producer = {
            let (pool, hits, spawned, done, stop) = (
                Arc::clone(pool),
                Arc::clone(&hits),
                Arc::clone(&spawned),
                Arc::clone(&done),
                Arc::clone(&stop),
            );
            std::thread::spawn(move || {
                let mut id = 0;
                while !stop.load(Ordering::Relaxed) && id < MAX_TASKS {
                    if id - done.load(Ordering::Relaxed) >= IN_FLIGHT {
                        std::thread::sleep(Duration::from_micros(200));
                        continue;
                    }
                    let (hits, done) = (Arc::clone(&hits), Arc::clone(&done));
                    pool.spawn(move || {
                        // A little work, so that a task is more than its queueing.
                        let mut x = id as u64;
                        for _ in 0..200 {
                            x = std::hint::black_box(x.wrapping_mul(6364136223846793005) + 1);
                        }
                        hits[id].fetch_add(1, Ordering::Relaxed);
                        done.fetch_add(1, Ordering::Release);
                    });
                    id += 1;
                    spawned.store(id, Ordering::Release);
                }
            })
        };
        Self {
            hits,
            spawned,
            done,
            stop,
            producer: Some(producer),
        }
    }

    fn done(&self) -> usize {
        self.done.load(Ordering::Acquire)
    }

    /// Waits until `n` more tasks than now have completed.
    fn progress(&self, n: usize) -> bool {
        let target = self.done() + n;
        wait_for(|| self.done() >= target || self.spawned.load(Ordering::Acquire) >= MAX_TASKS)
    }

    /// Stops the producer and waits for every spawned task; `false`: they did not all
    /// complete in time.
    fn finish(&mut self) -> bool {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.producer.take() {
            let _ = p.join();
        }
        let spawned = self.spawned.load(Ordering::Acquire);
        wait_for(|| self.done() >= spawned)
    }

    /// `(spawned, lost, duplicated)`: ids never run, ids run more than once.
    fn tally(&self) -> (usize, usize, usize) {
        let spawned = self.spawned.load(Ordering::Acquire);
        let mut lost = 0;
        let mut dup = 0;
        for h in &self.hits[..spawned] {
            match h.load(Ordering::Relaxed) {
                0 => lost += 1,
                1 => {}
                _ => dup += 1,
            }
        }
        (spawned, lost, dup)
    }
}

/// `faults`.
pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let pool = Arc::new(pool()?);
    let cpus = worker_os_cpus(&pool);
    let chosen = match flag(args, "--cpu")? {
        Some(c) => c,
        None => cpus
            .iter()
            .copied()
            .filter(|&c| c != 0)
            .max()
            .ok_or("no worker on a CPU other than cpu0: nothing to take offline")?,
    };
    let worker = cpus
        .iter()
        .position(|&c| c == chosen)
        .ok_or_else(|| format!("no worker on CPU {chosen} (workers on {cpus:?})"))?;
    let online_path = format!("/sys/devices/system/cpu/cpu{chosen}/online");
    let mut failures: Vec<String> = Vec::new();
    let mut stream = Stream::start(&pool);
    if !stream.progress(PHASE_TASKS) {
        failures.push("the stream did not start".into());
    }
    let before = affinities();
    let metrics_before = pin_view(&pool.metrics(), worker);

    // Offline.
    let offline_at = Instant::now();
    kernel::write(&online_path, "0")?;
    let online_during = kernel::read("/sys/devices/system/cpu/online").unwrap_or_default();
    let displaced_seen = wait_for(|| pool.metrics().workers[worker].displaced);
    if !displaced_seen {
        failures.push(format!(
            "worker {worker} was never reported displaced after CPU {chosen} went offline"
        ));
    }
    let detect_ms = offline_at.elapsed().as_millis();
    let metrics_displaced = pin_view(&pool.metrics(), worker);
    let done_offline = stream.done();
    if !stream.progress(PHASE_TASKS) {
        failures.push(format!(
            "the pool did not complete {PHASE_TASKS} tasks while CPU {chosen} was offline"
        ));
    }
    let tasks_while_offline = stream.done() - done_offline;
    let during = affinities();
    let metrics_during = pin_view(&pool.metrics(), worker);

    // Idle, then online again.
    if !stream.finish() {
        failures.push("not every spawned task completed".into());
    }
    let metrics_idle = pin_view(&pool.metrics(), worker);
    let online_back = kernel::write(&online_path, "1");
    if let Err(e) = &online_back {
        failures.push(e.clone());
    }
    let repinned_seen = wait_for(|| {
        let m = pool.metrics();
        m.workers[worker].pinned && m.workers[worker].repins >= 1
    });
    if !repinned_seen {
        failures.push(format!(
            "worker {worker} was not pinned again after CPU {chosen} came back"
        ));
    }
    let after = affinities();
    let metrics_after = pin_view(&pool.metrics(), worker);
    // A last burst after the fault: the pool still runs work.
    let count = Arc::new(AtomicUsize::new(0));
    pool.scope(|s| {
        for _ in 0..1000 {
            let c = Arc::clone(&count);
            s.spawn(move |_| {
                c.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    let (spawned, lost, duplicated) = stream.tally();
    Ok(json!({
        "cpus_online_at_start": cpus,
        "worker_cpus": cpus,
        "target": {"worker": worker, "cpu": chosen},
        "cpus_online_while_offline": online_during,
        "affinity": {"before": before, "during": during, "after": after},
        "metrics": {
            "before": metrics_before,
            "displaced": metrics_displaced,
            "during": metrics_during,
            "idle": metrics_idle,
            "after": metrics_after,
        },
        "displaced_seen": displaced_seen,
        "detect_ms": detect_ms,
        "repinned_seen": repinned_seen,
        "tasks_while_offline": tasks_while_offline,
        "tasks": spawned,
        "lost": lost,
        "duplicated": duplicated,
        "burst_after": count.load(Ordering::Relaxed),
        "failures": failures,
    }))
}

/// `cpuset`.
pub(crate) fn run_cpuset(args: &[String]) -> crate::Outcome {
    let only = flag(args, "--buffer-node")?;
    let allowed = os::thread_affinity().map_err(|e| format!("sched_getaffinity: {e}"))?;
    let pool = pool()?;
    let topo = pool.topology();
    let m = topo.machine();
    let worker_cpus = worker_os_cpus(&pool);
    let nodes: Vec<Value> = m
        .nodes()
        .iter()
        .zip(pool.node_workers())
        .map(|(n, w)| {
            json!({
                "os_id": n.os_id,
                "kind": n.kind(),
                "cpus": n.cpus.iter().map(|&c| m.cpu(c).os_index).collect::<Vec<_>>(),
                "withheld_cpus": n.withheld_cpus,
                "offline_cpus": n.offline_cpus,
                "workers": w,
            })
        })
        .collect();
    let nodes_with_workers: Vec<u32> = m
        .nodes()
        .iter()
        .zip(pool.node_workers())
        .filter(|(_, w)| matches!(w, NodeWorkers::Workers { .. }))
        .map(|(n, _)| n.os_id)
        .collect();
    let mut buffers = Vec::new();
    for (k, n) in m.nodes().iter().enumerate() {
        let wanted = match only {
            Some(id) => id == n.os_id,
            None => matches!(n.kind(), NodeKind::MemoryOnly | NodeKind::CpusOffline),
        };
        if wanted {
            buffers.push(buffer_on(&pool, NodeId::new(k), n.os_id));
        }
    }
    let report = zonal_topology::TopologyReport::new(topo);
    Ok(json!({
        "allowed": allowed,
        "cgroup": kernel::read("/proc/self/cgroup").ok(),
        "cpus_online": kernel::read("/sys/devices/system/cpu/online").ok(),
        "worker_cpus": worker_cpus,
        "affinity": affinities(),
        "nodes": nodes,
        "nodes_with_workers": nodes_with_workers,
        "cpuless_nodes": report.cpuless_nodes,
        "cpus_not_allowed_nodes": report.cpus_not_allowed_nodes,
        "buffers": buffers,
    }))
}

/// A 64-page buffer on `node`: its binding and the kernel's policy and page nodes.
fn buffer_on(pool: &ThreadPool, node: NodeId, os_id: u32) -> Value {
    let len = 64 * os::page_size() / std::mem::size_of::<u64>();
    match NodeBuffer::try_new_in(pool, node, len, |i| i as u64) {
        Err(e) => json!({"node": os_id, "error": e.to_string()}),
        Ok(b) => {
            let sum_ok = b.iter().copied().eq(0..len as u64);
            let pages = b.page_nodes().map_err(|e| e.to_string());
            let (on_node, elsewhere, errors) = match &pages {
                Ok(p) => (
                    p.iter().filter(|r| **r == Ok(os_id)).count(),
                    p.iter()
                        .filter(|r| matches!(r, Ok(n) if *n != os_id))
                        .count(),
                    p.iter().filter(|r| r.is_err()).count(),
                ),
                Err(_) => (0, 0, 0),
            };
            json!({
                "node": os_id,
                "binding": b.binding(),
                "kernel_policy": b.kernel_policy().map_err(|e| e.to_string()),
                "pages": pages.as_ref().map(Vec::len).ok(),
                "pages_on_node": on_node,
                "pages_elsewhere": elsewhere,
                "page_errors": errors,
                "page_nodes_error": pages.err(),
                "contents_ok": sum_ok,
            })
        }
    }
}
