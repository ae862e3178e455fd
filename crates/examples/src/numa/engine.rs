//! The runtimes compared, each able to run one closure per part of a workload's data:
//! Zonal under three policies (each part spawned on its home node), rayon (a parallel
//! iterator over the parts) and tokio (one spawned task per part). For the workloads that
//! keep every thread on one node, rayon and tokio get pools whose threads may only run on
//! that node's CPUs (`sched_setaffinity` at thread start); Zonal spawns every part there.

use std::sync::Arc;

use zonal::runtime::{os, ThreadPool};
use zonal::topology::NodeId;

/// Zonal's policies in the comparison.
pub const ZONAL_POLICIES: [&str; 3] = ["conservative-hard", "conservative-soft", "linux"];

/// Every runtime of the comparison, by name, in report order.
pub const RUNTIMES: [&str; 5] = [
    "zonal-conservative-hard",
    "zonal-conservative-soft",
    "zonal-linux",
    "rayon",
    "tokio",
];

/// The work run on one part, on whatever thread the runtime chose.
pub type PartFn<P> = Arc<dyn Fn(usize, &mut P) + Send + Sync>;

/// One runtime's pool.
#[derive(Debug)]
pub enum Engine {
    /// A Zonal pool and its policy's name.
    Zonal(&'static str, ThreadPool),
    /// A rayon pool.
    Rayon(rayon::ThreadPool),
    /// A tokio multi-thread runtime.
    Tokio(tokio::runtime::Runtime),
}

/// Why a pool could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Zonal's builder refused.
    #[error("cannot build the Zonal pool ({policy}): {source}")]
    Zonal {
        /// The policy.
        policy: &'static str,
        /// Why.
        source: Box<zonal::runtime::BuildError>,
    },
    /// rayon's builder refused.
    #[error("cannot build the rayon pool: {0}")]
    Rayon(#[from] rayon::ThreadPoolBuildError),
    /// tokio's builder refused.
    #[error("cannot build the tokio runtime: {0}")]
    Tokio(#[from] std::io::Error),
}

impl Engine {
    /// The Zonal pool under `policy`, on every CPU allowed.
    ///
    /// # Errors
    /// [`EngineError::Zonal`].
    pub fn zonal(policy: &'static str) -> Result<Self, EngineError> {
        zonal::runtime::ThreadPoolBuilder::new()
            .policy_name(policy)
            .build()
            .map(|p| Engine::Zonal(policy, p))
            .map_err(|e| EngineError::Zonal {
                policy,
                source: Box::new(e),
            })
    }

    /// A rayon pool on `cpus` (OS indexes; every CPU allowed when `None`), one thread per CPU.
    ///
    /// # Errors
    /// [`EngineError::Rayon`].
    pub fn rayon(cpus: Option<Vec<u32>>) -> Result<Self, EngineError> {
        let mut b = rayon::ThreadPoolBuilder::new();
        if let Some(cpus) = cpus {
            b = b
                .num_threads(cpus.len().max(1))
                .start_handler(move |_| confine(&cpus));
        }
        Ok(Engine::Rayon(b.build()?))
    }

    /// A tokio runtime on `cpus` (as [`rayon`](Self::rayon)).
    ///
    /// # Errors
    /// [`EngineError::Tokio`].
    pub fn tokio(cpus: Option<Vec<u32>>) -> Result<Self, EngineError> {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.enable_time();
        if let Some(cpus) = cpus {
            b.worker_threads(cpus.len().max(1))
                .on_thread_start(move || confine(&cpus));
        }
        Ok(Engine::Tokio(b.build()?))
    }

    /// The runtime's name in [`RUNTIMES`].
    pub fn name(&self) -> String {
        match self {
            Engine::Zonal(p, _) => format!("zonal-{p}"),
            Engine::Rayon(_) => "rayon".to_owned(),
            Engine::Tokio(_) => "tokio".to_owned(),
        }
    }

    /// Runs `f` once on every part, in parallel as the runtime does it: Zonal spawns part `i`
    /// on `homes[i]`; rayon and tokio ignore the homes. Gives the parts back.
    pub fn for_each_part<P: Send + 'static>(
        &self,
        mut parts: Vec<P>,
        homes: &[NodeId],
        f: &PartFn<P>,
    ) -> Vec<P> {
        match self {
            Engine::Zonal(_, pool) => {
                pool.scope(|s| {
                    for (i, p) in parts.iter_mut().enumerate() {
                        let f = &**f;
                        s.spawn_on(homes[i], move |_| f(i, p));
                    }
                });
                parts
            }
            Engine::Rayon(pool) => {
                use rayon::prelude::*;
                pool.install(|| {
                    parts
                        .par_iter_mut()
                        .with_max_len(1)
                        .enumerate()
                        .for_each(|(i, p)| f(i, p));
                });
                parts
            }
            Engine::Tokio(rt) => rt.block_on(async {
                let handles: Vec<_> = parts
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut p)| {
                        let f = Arc::clone(f);
                        tokio::spawn(async move {
                            f(i, &mut p);
                            p
                        })
                    })
                    .collect();
                let mut back = Vec::with_capacity(handles.len());
                for h in handles {
                    match h.await {
                        Ok(p) => back.push(p),
                        Err(e) => std::panic::resume_unwind(e.into_panic()),
                    }
                }
                back
            }),
        }
    }

    /// Makes `n` parts, part `i` by `make(i)`, each on a thread of the runtime (so that the
    /// pages it writes first are placed where that thread runs): Zonal on `homes[i]`.
    pub fn make_parts<P: Send + 'static>(
        &self,
        n: usize,
        homes: &[NodeId],
        make: Arc<dyn Fn(usize) -> P + Send + Sync>,
    ) -> Vec<P> {
        let slots: Vec<Option<P>> = (0..n).map(|_| None).collect();
        let fill: PartFn<Option<P>> = Arc::new(move |i, slot: &mut Option<P>| {
            *slot = Some(make(i));
        });
        self.for_each_part(slots, homes, &fill)
            .into_iter()
            .map(|s| s.expect("every part was made"))
            .collect()
    }
}

/// Restricts the calling thread to `cpus` (best effort: a refusal leaves it where it was,
/// which the locality figures then show).
fn confine(cpus: &[u32]) {
    if let Err(e) = os::set_thread_affinity(cpus) {
        eprintln!("numa: cannot confine a thread to CPUs {cpus:?}: {e}");
    }
}
