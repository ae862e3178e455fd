//! A service and its computations on one machine: an HTTP server's request latency while a
//! batch job keeps the CPUs busy with parallel computations, under three setups (issue 44).
//!
//! # The load
//!
//! - **The server** ([`server`]): hyper's HTTP/1 on loopback. Every request waits
//!   [`Config::wait`] on tokio's timer (its small async work); a share of them
//!   ([`LoadPlan::compute_percent`]) then starts a parallel computation of
//!   [`Config::request_ms`] (one core's time, calibrated at start-up: [`work`]) and awaits
//!   its result.
//! - **The batch job** ([`batch`]): one thread that runs a computation of
//!   [`Config::batch_ms`] on the setup's pool, one after another, from before the first
//!   request until after the last.
//! - **The load generator** ([`load`]): open loop, at a fixed arrival rate, latency from
//!   each request's intended send time, bounded by a request count and a deadline.
//!
//! # The setups ([`Setup`]), on the same CPUs, one at a time
//!
//! (a) tokio's multi-thread runtime beside a rayon pool, both at their default size;
//! (b) tokio with each request's computation in `spawn_blocking` (sequential), the batch
//! job on a rayon pool; (c) Zonal alone: the server's tasks are Zonal async tasks with
//! tokio's reactor on one thread of its own, the computations and the batch job `par_iter`
//! on the same pool — on this machine, or on a virtual S1 pool (emulated).
//!
//! The load generator is a thread of this process (a current-thread tokio runtime of its
//! own), on the same CPUs as every setup: its own CPU time is left out of the setups', and
//! a stall of that thread shows in the latencies as a server's stall would, the same for
//! every setup.
//!
//! # Rounds
//!
//! Each round runs every setup once, in the given order in even rounds and reversed in odd
//! ones, so that no setup always follows the same one. A setup's CPU time is the process's
//! (`getrusage`) from its batch job's start until its stop, less the load generator's own
//! thread; its batch throughput is the batch job's computations over the same span.
//!
//! # Running it
//!
//! ```text
//! cargo run --release --example mixed                  # 3 rounds of 3000 requests at 200/s
//! cargo run --release --example mixed -- --quick       # the short version (the main job's)
//! cargo run --release --example mixed -- --quick --s1  # also on a virtual S1 pool (emulated)
//! ```
//!
//! The report ([`report`]): a markdown table, a JSON document, and (the example's) a plot.

pub mod batch;
pub mod cpu;
pub mod load;
pub mod report;
pub mod server;
pub mod setup;
pub mod work;

mod tokio_rayon;
mod zonal_pool;

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use load::LoadPlan;
pub use report::{Run, Sample};
pub use setup::{Backend, Setup};

use batch::BatchJob;
use cpu::{cpu_time, Who};
use server::Server;
use work::{Calibration, Workloads};

/// Why a run could not be done.
#[derive(Debug, thiserror::Error)]
pub enum MixedError {
    /// A setting out of its range (a usage error).
    #[error("{name} {value} is out of range: expected {range}")]
    Invalid {
        /// The setting's flag.
        name: &'static str,
        /// The value given.
        value: String,
        /// The values allowed.
        range: &'static str,
    },
    /// No setup to run (a usage error).
    #[error("no setup to run")]
    NoSetup,
    /// A socket, runtime or thread that could not be set up.
    #[error("cannot {what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// Zonal's pool could not be built.
    #[error("cannot build Zonal's pool: {0}")]
    Zonal(#[from] zonal::runtime::BuildError),
    /// rayon's pool could not be built.
    #[error("cannot build rayon's pool: {0}")]
    Rayon(#[from] rayon::ThreadPoolBuildError),
    /// A thread of the benchmark panicked.
    #[error("{0}")]
    Lost(&'static str),
}

impl MixedError {
    pub(crate) fn io(what: &'static str, source: std::io::Error) -> Self {
        Self::Io { what, source }
    }

    /// Whether it is the user's input that is wrong (exit status 2), not the run (1).
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Invalid { .. } | Self::NoSetup)
    }
}

/// One run of the benchmark.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The setups, in the order of the even rounds.
    pub setups: Vec<Setup>,
    /// Rounds (each runs every setup once).
    pub rounds: u32,
    /// The requests of each setup's run.
    pub plan: LoadPlan,
    /// Every request's wait on tokio's timer.
    pub wait: Duration,
    /// A request's computation, in ms of one core.
    pub request_ms: f64,
    /// One batch computation, in ms of one core.
    pub batch_ms: f64,
}

/// The ranges [`Config::check`] enforces.
pub mod limits {
    /// Requests per setup and round.
    pub const REQUESTS: (u64, u64) = (1, 10_000_000);
    /// Arrivals per second.
    pub const RATE: (f64, f64) = (0.1, 100_000.0);
    /// Percent of requests that compute.
    pub const COMPUTE_PERCENT: (u32, u32) = (0, 100);
    /// Rounds.
    pub const ROUNDS: (u32, u32) = (1, 1000);
    /// A request's wait, ms.
    pub const WAIT_MS: (u64, u64) = (0, 10_000);
    /// A request's computation, ms.
    pub const REQUEST_MS: (f64, f64) = (0.001, 10_000.0);
    /// A batch computation, ms.
    pub const BATCH_MS: (f64, f64) = (0.001, 100_000.0);
    /// The deadline after the last request is due, s.
    pub const GRACE_S: (f64, f64) = (0.1, 3600.0);
    /// Connections at once.
    pub const CONNECTIONS: (usize, usize) = (1, 4096);
}

/// `Err(Invalid)` unless `lo <= v <= hi` (NaN is out of every range).
fn within<T: PartialOrd + std::fmt::Display + Copy>(
    name: &'static str,
    v: T,
    (lo, hi): (T, T),
    range: &'static str,
) -> Result<(), MixedError> {
    if lo <= v && v <= hi {
        Ok(())
    } else {
        Err(MixedError::Invalid {
            name,
            value: v.to_string(),
            range,
        })
    }
}

impl Config {
    /// Checks every setting against [`limits`].
    ///
    /// # Errors
    /// [`MixedError::Invalid`] naming the first setting out of range, [`MixedError::NoSetup`]
    /// for an empty list of setups.
    pub fn check(&self) -> Result<(), MixedError> {
        use limits::*;
        if self.setups.is_empty() {
            return Err(MixedError::NoSetup);
        }
        let p = &self.plan;
        within("--requests", p.requests, REQUESTS, "1..=10000000")?;
        within("--rate", p.rate, RATE, "0.1..=100000")?;
        within(
            "--compute-percent",
            p.compute_percent,
            COMPUTE_PERCENT,
            "0..=100",
        )?;
        within("--grace", p.grace.as_secs_f64(), GRACE_S, "0.1..=3600 s")?;
        within(
            "--max-connections",
            p.max_connections,
            CONNECTIONS,
            "1..=4096",
        )?;
        within("--rounds", self.rounds, ROUNDS, "1..=1000")?;
        let wait_ms = u64::try_from(self.wait.as_millis()).unwrap_or(u64::MAX);
        within("--wait-ms", wait_ms, WAIT_MS, "0..=10000")?;
        within("--request-ms", self.request_ms, REQUEST_MS, "0.001..=10000")?;
        within("--batch-ms", self.batch_ms, BATCH_MS, "0.001..=100000")?;
        Ok(())
    }
}

/// Runs every round of `config` (module docs), calling `progress` after each setup's run.
///
/// # Errors
/// [`MixedError`] for a setting out of range, or a setup that cannot be started.
pub fn run(config: &Config, mut progress: impl FnMut(&Sample)) -> Result<Run, MixedError> {
    config.check()?;
    let calibration = Calibration::measure();
    let workloads = Workloads::new(calibration, config.request_ms, config.batch_ms);
    let mut samples = Vec::new();
    for round in 0..config.rounds {
        let mut order = config.setups.clone();
        if round % 2 == 1 {
            order.reverse();
        }
        for setup in order {
            let sample = run_setup(setup, round, config, &workloads)?;
            progress(&sample);
            samples.push(sample);
        }
    }
    Ok(Run {
        config: config.clone(),
        cpus: std::thread::available_parallelism().map_or(1, usize::from),
        ns_per_element: calibration.ns_per_element,
        request_elements: workloads.request.len(),
        batch_elements: workloads.batch.len(),
        samples,
    })
}

/// One setup's run: its server and batch job, the load against them, then the shutdown.
fn run_setup(
    setup: Setup,
    round: u32,
    config: &Config,
    workloads: &Workloads,
) -> Result<Sample, MixedError> {
    let backend: Arc<dyn Backend> = Arc::from(setup.backend()?);
    let threads = backend.threads();
    let server = Server::start(&backend, workloads.request.clone(), config.wait)?;
    let (cpu0, wall0) = (cpu_time(Who::Process), Instant::now());
    let batch = BatchJob::start(Arc::clone(&backend), workloads.batch.clone())?;
    let load = load::run(server.addr(), config.plan);
    // Stopped even when the load generator failed, so that no thread is left computing.
    let batch = batch.stop();
    let (cpu1, wall) = (cpu_time(Who::Process), wall0.elapsed());
    drop(server);
    // The only strong reference (the server's tasks hold weak ones): stops the runtimes.
    drop(backend);
    let (load, batch) = (load?, batch?);
    let cpu = cpu1.saturating_sub(cpu0).saturating_sub(load.cpu);
    Ok(Sample::new(setup, round, threads, &load, batch, cpu, wall))
}
