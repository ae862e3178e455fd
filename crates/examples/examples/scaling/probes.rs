//! `scaling --probes`: what idle searching costs, counted (never timed), on virtual pools
//! of 16, 64, 256 and 1,024 workers (the paper's S1, 16 nodes; unpinned): one wake-up burst
//! (every worker woken by a broadcast, then a scope of tiny tasks), then every worker spins
//! its fruitless rounds and parks. Reported from the workers' own counters
//! (`victim_probes`, `fruitless_rounds`, `parks`, `wakeups`), beside the shape of a walk that
//! probes every other worker in each of its 32 spins (rayon's, and Zonal's before node
//! hints): 32·P·(P−1) probes a burst.

use std::time::{Duration, Instant};

use zonal_examples::cli::Exit;
use zonal_runtime::{PoolMetrics, ThreadPool, ThreadPoolBuilder};

/// The pool sizes measured.
pub(crate) const SIZES: [usize; 4] = [16, 64, 256, 1024];

/// One pool's counts for one burst.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Burst {
    pub(crate) workers: usize,
    pub(crate) nodes: usize,
    pub(crate) fruitless_rounds: u64,
    pub(crate) probes: u64,
    pub(crate) parks: u64,
    pub(crate) wakeups: u64,
    /// 32·P·(P−1): a walk over every other worker in each of 32 spins, per worker.
    pub(crate) every_worker_walk: u64,
}

fn totals(m: &PoolMetrics) -> [u64; 4] {
    m.workers.iter().fold([0; 4], |t, w| {
        [
            t[0] + w.fruitless_rounds,
            t[1] + w.victim_probes,
            t[2] + w.parks,
            t[3] + w.wakeups,
        ]
    })
}

/// Waits until the counters stop moving (every worker parked); bounded.
fn settle(pool: &ThreadPool) -> Result<[u64; 4], Exit> {
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut last = totals(&pool.metrics());
    let mut still = 0;
    while still < 20 {
        std::thread::sleep(Duration::from_millis(10));
        let now = totals(&pool.metrics());
        still = if now == last { still + 1 } else { 0 };
        last = now;
        if Instant::now() > deadline {
            return Err(Exit::failure("the pool never settled after its burst"));
        }
    }
    Ok(last)
}

/// One burst on a pool of `workers`.
pub(crate) fn burst(workers: usize) -> Result<Burst, Exit> {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(workers)
        .pin(false)
        .policy_name("conservative-hard")
        .build()
        .map_err(Exit::failure)?;
    let before = settle(&pool)?;
    pool.broadcast(|_| ());
    pool.scope(|s| {
        for _ in 0..4 * workers {
            s.spawn(|_| {
                std::hint::black_box(0u64);
            });
        }
    });
    let after = settle(&pool)?;
    let p = workers as u64;
    Ok(Burst {
        workers,
        nodes: pool.topology().cpu_nodes().count(),
        fruitless_rounds: after[0] - before[0],
        probes: after[1] - before[1],
        parks: after[2] - before[2],
        wakeups: after[3] - before[3],
        every_worker_walk: 32 * p * (p - 1),
    })
}

/// The Markdown table.
pub(crate) fn table(bursts: &[Burst]) -> String {
    let mut t = String::from(
        "One wake-up burst on virtual S1 pools (16 nodes, conservative-hard, unpinned): \
         counts from the workers' own counters.\n\n\
         | workers | fruitless rounds | victim probes | probes a round | parks | wake-ups | \
         32·P·(P−1) |\n|---|---|---|---|---|---|---|\n",
    );
    for b in bursts {
        t += &format!(
            "| {} | {} | {} | {:.1} | {} | {} | {} |\n",
            b.workers,
            b.fruitless_rounds,
            b.probes,
            b.probes as f64 / b.fruitless_rounds.max(1) as f64,
            b.parks,
            b.wakeups,
            b.every_worker_walk
        );
    }
    t
}
