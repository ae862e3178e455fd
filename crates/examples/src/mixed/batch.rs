//! The batch job: one thread that runs the large computation on the setup's pool
//! ([`Backend::batch`]) again and again, from before the first request until after the
//! last, and counts them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::setup::Backend;
use super::work::Work;
use super::MixedError;

/// What the batch job did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchResult {
    /// Computations finished (at least one: the job always finishes the one it started).
    pub computations: u64,
    /// From its start until its last computation ended.
    pub elapsed: Duration,
}

impl BatchResult {
    /// Computations per second.
    pub fn per_second(&self) -> f64 {
        self.computations as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The running job; [`BatchJob::stop`] ends it.
#[derive(Debug)]
pub struct BatchJob {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<BatchResult>,
}

impl BatchJob {
    /// Starts computing `work` on `backend`, one computation after another.
    ///
    /// # Errors
    /// [`MixedError::Io`] when its thread cannot start.
    pub fn start(backend: Arc<dyn Backend>, work: Work) -> Result<Self, MixedError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("mixed-batch".into())
            .spawn(move || {
                let start = Instant::now();
                let mut computations = 0u64;
                let mut acc = 0u64;
                loop {
                    acc = acc.wrapping_add(backend.batch(&work));
                    computations += 1;
                    if flag.load(Ordering::Acquire) {
                        break;
                    }
                }
                std::hint::black_box(acc);
                BatchResult {
                    computations,
                    elapsed: start.elapsed(),
                }
            })
            .map_err(|e| MixedError::io("start the batch job's thread", e))?;
        Ok(Self { stop, thread })
    }

    /// Asks it to stop after the computation under way and waits for that one.
    ///
    /// # Errors
    /// [`MixedError::Lost`] when the job panicked.
    pub fn stop(self) -> Result<BatchResult, MixedError> {
        self.stop.store(true, Ordering::Release);
        self.thread
            .join()
            .map_err(|_| MixedError::Lost("the batch job panicked"))
    }
}
