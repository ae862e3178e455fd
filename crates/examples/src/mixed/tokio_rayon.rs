//! Setups (a) and (b): tokio's multi-thread runtime for the server beside a rayon pool,
//! each at its default size.

use std::time::Duration;

use rayon::prelude::*;

use super::setup::{Backend, BoxFuture};
use super::work::{mix, Work};
use super::MixedError;

/// How long dropping the runtime waits for its blocking threads.
const SHUTDOWN: Duration = Duration::from_secs(5);

/// tokio + rayon; with `blocking`, each request's computation runs sequentially in
/// `spawn_blocking` instead of on the rayon pool.
#[derive(Debug)]
pub(crate) struct TokioRayon {
    runtime: Option<tokio::runtime::Runtime>,
    rayon: rayon::ThreadPool,
    blocking: bool,
}

impl TokioRayon {
    /// tokio's multi-thread runtime and a rayon pool, both at their default sizes.
    pub(crate) fn start(blocking: bool) -> Result<Box<dyn Backend>, MixedError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("mixed-tokio")
            .build()
            .map_err(|e| MixedError::io("start tokio's runtime", e))?;
        let rayon = rayon::ThreadPoolBuilder::new()
            .thread_name(|i| format!("mixed-rayon-{i}"))
            .build()?;
        Ok(Box::new(Self {
            runtime: Some(runtime),
            rayon,
            blocking,
        }))
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime.as_ref().expect("the runtime lives until drop")
    }
}

/// The computation with rayon's `par_iter` (on the pool of the calling thread).
fn par_fold(work: &Work) -> u64 {
    work.slice()
        .par_iter()
        .map(|&x| mix(x))
        .reduce(|| 0, u64::wrapping_add)
}

impl Backend for TokioRayon {
    fn reactor(&self) -> tokio::runtime::Handle {
        self.runtime().handle().clone()
    }

    fn spawn(&self, task: BoxFuture<()>) {
        drop(self.runtime().spawn(task));
    }

    fn compute(&self, work: Work) -> BoxFuture<Option<u64>> {
        if self.blocking {
            let done = self.runtime().spawn_blocking(move || work.sequential());
            Box::pin(async move { done.await.ok() })
        } else {
            let (tx, rx) = tokio::sync::oneshot::channel();
            self.rayon.spawn(move || {
                // The receiver may be gone (the request was abandoned): nothing to do.
                let _ = tx.send(par_fold(&work));
            });
            Box::pin(async move { rx.await.ok() })
        }
    }

    fn batch(&self, work: &Work) -> u64 {
        self.rayon.install(|| par_fold(work))
    }

    fn threads(&self) -> String {
        format!(
            "{} tokio + {} rayon",
            self.runtime().metrics().num_workers(),
            self.rayon.current_num_threads()
        )
    }
}

impl Drop for TokioRayon {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(SHUTDOWN);
        }
    }
}
