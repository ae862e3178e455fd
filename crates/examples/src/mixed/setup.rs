//! The setups compared: what runs the service's tasks, its computations and the batch job
//! ([`Backend`]), and their names ([`Setup`]).

use std::future::Future;
use std::pin::Pin;

use super::work::Work;
use super::MixedError;

/// A detached task, or a computation's result, as the server hands them around.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// One of the setups run side by side, on the same CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Setup {
    /// (a) tokio's multi-thread runtime for the server, a rayon pool for the computations
    /// and the batch job, each at its default size (one thread per CPU).
    TokioRayon,
    /// (b) tokio's multi-thread runtime, each request's computation run sequentially in
    /// `spawn_blocking`; the batch job on a rayon pool of the default size.
    TokioBlocking,
    /// (c) Zonal alone, on this machine: the server's tasks are Zonal async tasks (tokio's
    /// reactor and timers on one thread of their own), the computations and the batch job
    /// `par_iter` on the same pool.
    Zonal,
    /// (c) on a virtual S1 pool (`preset("s1")`: 32 workers over 16 emulated nodes, on this
    /// machine's CPUs, unpinned or spread over them as the pool's build logs): an emulation,
    /// not S1's hardware.
    ZonalS1,
}

impl Setup {
    /// The three setups of a run on this machine.
    pub const MACHINE: [Setup; 3] = [Setup::TokioRayon, Setup::TokioBlocking, Setup::Zonal];

    /// Its name on the command line and in the report.
    pub fn name(self) -> &'static str {
        match self {
            Setup::TokioRayon => "tokio-rayon",
            Setup::TokioBlocking => "tokio-blocking",
            Setup::Zonal => "zonal",
            Setup::ZonalS1 => "zonal-s1",
        }
    }

    /// What it is, in a few words (the report's legend).
    pub fn describe(self) -> &'static str {
        match self {
            Setup::TokioRayon => "tokio multi-thread + rayon pool, both default size",
            Setup::TokioBlocking => {
                "tokio multi-thread, computations in spawn_blocking; batch on rayon"
            }
            Setup::Zonal => "Zonal alone: async handlers, par_iter and batch on one pool",
            Setup::ZonalS1 => "Zonal alone on a virtual S1 pool (emulated, not S1 hardware)",
        }
    }

    /// Whether it runs on an emulated topology.
    pub fn is_virtual(self) -> bool {
        self == Setup::ZonalS1
    }

    /// Builds its runtimes and pools.
    ///
    /// # Errors
    /// [`MixedError`] when a runtime, pool or thread cannot be started.
    pub fn backend(self) -> Result<Box<dyn Backend>, MixedError> {
        match self {
            Setup::TokioRayon => super::tokio_rayon::TokioRayon::start(false),
            Setup::TokioBlocking => super::tokio_rayon::TokioRayon::start(true),
            Setup::Zonal => super::zonal_pool::ZonalPool::start(false),
            Setup::ZonalS1 => super::zonal_pool::ZonalPool::start(true),
        }
    }
}

impl std::fmt::Display for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a setup runs the three parts of the load. Dropping it stops its runtimes and pools
/// (their tasks are cancelled).
pub trait Backend: Send + Sync {
    /// The tokio runtime whose reactor and timers the server's sockets and waits use.
    fn reactor(&self) -> tokio::runtime::Handle;
    /// Runs `task` detached, as one of the server's tasks.
    fn spawn(&self, task: BoxFuture<()>);
    /// Starts a request's computation; the future gives its result (`None` if the
    /// computation was lost: it panicked or its pool shut down).
    fn compute(&self, work: Work) -> BoxFuture<Option<u64>>;
    /// One batch computation, on the calling thread's behalf (it blocks until done).
    fn batch(&self, work: &Work) -> u64;
    /// Worker threads of the pools it runs, for the report (`tokio + rayon` for two pools).
    fn threads(&self) -> String;
}
