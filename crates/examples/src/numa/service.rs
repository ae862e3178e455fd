//! The skewed, long-lived service load (`crate::service_load`, the `service` example's,
//! without its remote-access emulation) on Zonal and on tokio, each slice recorded like
//! every other workload's. rayon cannot express it: it has no async tasks, and a task that
//! waits between slices would hold a worker.
//!
//! On Zonal each task's state is a `NodeBuffer` on its home node and the task is spawned
//! there (`crate::service_load::run_observed`); on tokio the same plan's tasks are spawned
//! into the runtime, each writing its state first (so it lies where the task first ran).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use zonal::policy::PolicyConfig;

use crate::numa::engine::Engine;
use crate::numa::kit::{Kit, KitError};
use crate::numa::locality::{CpuNodes, KernelPages, SliceLog, SliceSummary};
use crate::service_load::{
    self, exactly_once, pass, Calibration, LoadOptions, Plan, SliceObserver, LIVE_PER_WORKER,
};

/// How long the live tasks may go with none finishing once arrivals stop
/// (`service_load::wait_for_drain`).
const STALL_LIMIT: Duration = Duration::from_secs(300);

/// One run of the service load.
#[derive(Clone, Debug, Serialize)]
pub struct ServiceRun {
    /// The median task turnaround (spawn to completion), ms.
    pub median_turnaround_ms: f64,
    /// Tasks spawned.
    pub tasks: u64,
    /// Whether every task finished exactly once.
    pub exactly_once: bool,
    /// The slices.
    pub slices: SliceSummary,
    /// The states' pages, read by the kernel at every slice (pages × slices).
    pub kernel: KernelPages,
}

/// The slice observer: the slice's locality and its state's pages.
fn observer(
    cpus: Arc<CpuNodes>,
    log: Arc<SliceLog>,
    kernel: Arc<Mutex<KernelPages>>,
) -> SliceObserver {
    Arc::new(move |state: &[u64]| {
        log.record(&cpus, state);
        kernel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(state);
    })
}

/// The median of `v` (0 for none).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

impl Kit {
    /// One run of the service load on runtime `r`; `None` where the runtime cannot express
    /// it (rayon).
    ///
    /// # Errors
    /// [`KitError::Service`] when the load fails (a state that cannot be placed, a policy
    /// that does not build).
    pub fn service(&self, r: usize, seed: u64) -> Result<Option<ServiceRun>, KitError> {
        let log = Arc::new(SliceLog::default());
        let kernel = Arc::new(Mutex::new(KernelPages::default()));
        let obs = observer(
            Arc::clone(&self.cpus),
            Arc::clone(&log),
            Arc::clone(&kernel),
        );
        let secs = self.sizes.service_seconds;
        let (turnarounds, tasks, once) = match self.engine_at(r) {
            Engine::Zonal(policy, pool) => {
                let ageing = PolicyConfig::named(policy)
                    .and_then(|c| c.build())
                    .map_err(|e| KitError::Service(format!("{policy}: {e}")))?
                    .steal_side()
                    .ageing();
                let mut plan = Plan::new(&self.homes, pool.num_workers(), seed);
                let opts = LoadOptions {
                    seconds: secs,
                    emulate_remote: false,
                    ageing,
                    stall_limit: STALL_LIMIT,
                };
                let out = service_load::run_observed(pool, &mut plan, opts, Some(obs), |_| {})
                    .map_err(|e| KitError::Service(e.to_string()))?;
                let (missing, repeated) = exactly_once(out.spawned, &out.records);
                let t = out
                    .records
                    .iter()
                    .map(|r| r.turnaround_us as f64 / 1000.0)
                    .collect();
                (
                    t,
                    out.spawned,
                    out.drained && missing.is_empty() && repeated.is_empty(),
                )
            }
            Engine::Tokio(rt) => {
                let workers = rt.metrics().num_workers();
                tokio_service(rt, &self.homes, workers, seed, secs, obs)
            }
            Engine::Rayon(_) => return Ok(None),
        };
        let kernel = kernel
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        Ok(Some(ServiceRun {
            median_turnaround_ms: median(turnarounds),
            tasks,
            exactly_once: once,
            slices: log.summary(),
            kernel,
        }))
    }
}

/// The service plan on tokio: bursts every [`BURST_EVERY`](service_load::BURST_EVERY) for `secs`, then the live tasks
/// finish. Gives the turnarounds (ms), the tasks spawned and whether each finished once.
fn tokio_service(
    rt: &tokio::runtime::Runtime,
    homes: &[zonal::topology::NodeId],
    workers: usize,
    seed: u64,
    secs: u64,
    observe: SliceObserver,
) -> (Vec<f64>, u64, bool) {
    let calibration = Calibration::measure();
    let mut plan = Plan::new(homes, workers, seed);
    let done = Arc::new(Mutex::new(Vec::<(u64, f64)>::new()));
    let completed = Arc::new(AtomicU64::new(0));
    let live_bound = LIVE_PER_WORKER * workers as u64;
    let start = Instant::now();
    let until = Duration::from_secs(secs);
    let mut spawned = 0u64;
    let mut next = start;
    while start.elapsed() < until {
        while spawned - completed.load(Ordering::Acquire) > live_bound && start.elapsed() < until {
            std::thread::sleep(Duration::from_micros(500));
        }
        for spec in plan.next_burst() {
            let (id, born) = (spawned, Instant::now());
            let (done, completed, observe) = (
                Arc::clone(&done),
                Arc::clone(&completed),
                Arc::clone(&observe),
            );
            rt.spawn(async move {
                let mut state: Vec<u64> = (0..spec.words as u64).collect();
                let base = calibration.passes(state.len(), spec.slice_us);
                for slice in 0..spec.slices {
                    observe(&state);
                    let mut x = 0u64;
                    for p in 0..base {
                        x ^= pass(&mut state, p);
                    }
                    std::hint::black_box(x);
                    if slice % 2 == 0 {
                        tokio::task::yield_now().await;
                    } else {
                        tokio::time::sleep(Duration::from_millis(u64::from(spec.wait_ms))).await;
                    }
                }
                let ms = born.elapsed().as_secs_f64() * 1000.0;
                done.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((id, ms));
                completed.fetch_add(1, Ordering::Release);
            });
            spawned += 1;
        }
        service_load::wait_for_next_burst(&mut next);
    }
    service_load::wait_for_drain(
        || completed.load(Ordering::Acquire),
        spawned,
        STALL_LIMIT,
        || {},
    );
    let done = std::mem::take(&mut *done.lock().unwrap_or_else(PoisonError::into_inner));
    let mut seen = vec![0u32; spawned as usize];
    for &(id, _) in &done {
        if let Some(n) = seen.get_mut(id as usize) {
            *n += 1;
        }
    }
    let once = done.len() as u64 == spawned && seen.iter().all(|&n| n == 1);
    (done.into_iter().map(|(_, ms)| ms).collect(), spawned, once)
}
