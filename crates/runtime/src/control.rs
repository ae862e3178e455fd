//! A tokio-based control plane (feature `control-plane`): samples a pool's metrics
//! periodically, off the workers, and publishes each sample with rates derived from the
//! previous one.
//!
//! It runs a current-thread tokio runtime on a thread of its own, so that it never takes a
//! worker from the pool it watches; dropping the [`ControlPlane`] stops it.

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};

use crate::metrics::MetricsHandle;
use crate::metrics::PoolMetrics;

/// One sample of the control plane.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Sample {
    /// Milliseconds since the control plane started.
    pub at_ms: u64,
    /// The metrics at that time.
    pub metrics: PoolMetrics,
    /// Tasks run per second since the previous sample.
    pub tasks_per_sec: f64,
    /// Steals per second since the previous sample.
    pub steals_per_sec: f64,
    /// Refusals per second since the previous sample.
    pub refusals_per_sec: f64,
}

/// Samples a pool's metrics every `period` on a tokio runtime of its own.
///
/// ```
/// use std::time::Duration;
/// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let cp = zonal_runtime::ControlPlane::start(pool.metrics_handle(), Duration::from_millis(5))
///     .expect("control plane");
/// pool.par_for(0..10_000, 100, |_| {});
/// let mut rx = cp.subscribe();
/// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
/// // The first change may be a sample taken before `par_for` ran (it was in flight when we
/// // subscribed): wait for one that sees the loop.
/// rt.block_on(async {
///     for _ in 0..100 {
///         rx.changed().await.unwrap();
///         if cp.latest().metrics.total.tasks_run > 0 {
///             break;
///         }
///     }
/// });
/// assert!(cp.latest().metrics.total.tasks_run > 0);
/// # Ok::<(), zonal_runtime::BuildError>(())
/// ```
#[derive(Debug)]
pub struct ControlPlane {
    rx: watch::Receiver<Sample>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ControlPlane {
    /// Starts sampling.
    ///
    /// # Errors
    /// When the tokio runtime or its thread cannot be created.
    pub fn start(handle: MetricsHandle, period: Duration) -> std::io::Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?;
        let (tx, rx) = watch::channel(Sample::default());
        let (stop, mut stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("zonal-control".into())
            .spawn(move || {
                rt.block_on(async move {
                    let start = Instant::now();
                    let mut tick = tokio::time::interval(period);
                    let mut prev: Option<(Instant, PoolMetrics)> = None;
                    loop {
                        tokio::select! {
                            _ = &mut stopped => break,
                            _ = tick.tick() => {}
                        }
                        let now = Instant::now();
                        let m = handle.snapshot();
                        let mut s = Sample {
                            at_ms: start.elapsed().as_millis() as u64,
                            ..Sample::default()
                        };
                        if let Some((t0, p)) = &prev {
                            let dt = now.duration_since(*t0).as_secs_f64().max(1e-9);
                            let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / dt;
                            s.tasks_per_sec = rate(m.total.tasks_run, p.total.tasks_run);
                            s.steals_per_sec = rate(m.total.migrations, p.total.migrations);
                            s.refusals_per_sec =
                                rate(m.total.refused.total(), p.total.refused.total());
                        }
                        s.metrics = m.clone();
                        prev = Some((now, m));
                        if tx.send(s).is_err() {
                            break;
                        }
                    }
                });
            })?;
        Ok(Self {
            rx,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The latest sample.
    #[must_use]
    pub fn latest(&self) -> Sample {
        self.rx.borrow().clone()
    }

    /// A receiver notified at every sample.
    #[must_use]
    pub fn subscribe(&self) -> watch::Receiver<Sample> {
        self.rx.clone()
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
