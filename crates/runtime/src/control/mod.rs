//! A tokio-based control plane (feature `control-plane`): off the workers, it samples a
//! pool's metrics periodically and publishes each sample with rates derived from the
//! previous one, and serves them to Prometheus on request.
//!
//! It runs a current-thread tokio runtime on a thread of its own, so that it never takes a
//! worker from the pool it watches. Its jobs are tasks of that runtime:
//! - `sampler.rs`: the periodic sample ([`Sample`], [`ControlPlane::subscribe`]);
//! - `http.rs`: the metrics endpoint ([`ControlPlane::serve_metrics`]), whose series are
//!   written by `exposition.rs`, which also lends them to a user's `prometheus-client`
//!   registry ([`PoolCollector`]) or handler ([`encode_metrics`]);
//! - `balance.rs`: the periodic balancer ([`ControlOptions::balance_every`],
//!   [`ControlPlane::balance_stats`]): the runtime's driver of the policy's balance side,
//!   moving queued long-lived tasks between workers.
//!
//! The thread drives the runtime until the [`ControlPlane`] is dropped; dropping it signals
//! the thread, which stops the runtime and with it every task (sampler, servers and their
//! connections), then joins it.

mod balance;
pub(crate) mod exposition;
mod http;
mod sampler;

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{oneshot, watch};

use crate::handle::MetricsHandle;

pub use balance::BalanceStats;
pub use exposition::{encode_metrics, PoolCollector, METRICS_CONTENT_TYPE};
pub use http::{ServeError, ServeOptions};
pub use sampler::Sample;

/// What a [`ControlPlane`] runs: sampling every `sample_every` (default 100 ms), and
/// balancing passes every `balance_every` (default: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControlOptions {
    sample_period: Duration,
    balance_tick: Option<Duration>,
}

/// The balancing tick the simulator and Linux (`CONFIG_HZ=250`) use, 4 ms: one constant,
/// [`zonal_policy::TICK_US`], for every driver. Pass it to
/// [`ControlOptions::balance_every`] for the periodic balancing the paper measured.
pub const BALANCE_TICK: Duration = Duration::from_micros(zonal_policy::TICK_US);

impl Default for ControlOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ControlOptions {
    /// Sampling every 100 ms, no balancing.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            sample_period: Duration::from_millis(100),
            balance_tick: None,
        }
    }

    /// Samples the metrics every `period`.
    #[must_use]
    pub const fn sample_every(mut self, period: Duration) -> Self {
        self.sample_period = period;
        self
    }

    /// Runs a balancing pass every `tick` (`balance.rs`; [`BALANCE_TICK`], 4 ms, is Linux's
    /// tick at `CONFIG_HZ=250` and the simulator's): the policy's balance side decides, per
    /// CPU and level, when and what to move.
    #[must_use]
    pub const fn balance_every(mut self, tick: Duration) -> Self {
        self.balance_tick = Some(tick);
        self
    }
}

/// Samples a pool's metrics every `period` on a tokio runtime of its own.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use std::time::Duration;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let cp = zonal::runtime::ControlPlane::start(pool.metrics_handle(), Duration::from_millis(5))
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
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Debug)]
pub struct ControlPlane {
    rx: watch::Receiver<Sample>,
    /// The pool's metrics, for the endpoint's scrapes.
    metrics: MetricsHandle,
    /// The control plane's runtime, driven by `thread`.
    rt: tokio::runtime::Handle,
    /// The balancer's counters (all zero when it does not run).
    balance: Arc<balance::Counters>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ControlPlane {
    /// Starts sampling every `period`.
    ///
    /// # Errors
    /// When the tokio runtime or its thread cannot be created, or `period` is zero
    /// ([`std::io::ErrorKind::InvalidInput`], naming it).
    pub fn start(handle: MetricsHandle, period: Duration) -> std::io::Result<Self> {
        Self::start_with(handle, ControlOptions::new().sample_every(period))
    }

    /// Starts the control plane with `options`: sampling, and, if asked
    /// ([`ControlOptions::balance_every`]), periodic balancing passes.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::time::Duration;
    /// use zonal::runtime::{ControlOptions, ControlPlane, ThreadPoolBuilder};
    /// let cfg = zonal::policy::PolicyConfig::named("conservative-hard").unwrap();
    /// let pool = ThreadPoolBuilder::new().preset("s1").policy_config(cfg).build()?;
    /// let cp = ControlPlane::start_with(
    ///     pool.metrics_handle(),
    ///     ControlOptions::new().balance_every(zonal::runtime::BALANCE_TICK),
    /// )
    /// .expect("control plane");
    /// let h = pool.spawn_async(async { zonal::task::sleep(Duration::from_millis(20)).await; 7 });
    /// assert_eq!(h.join().unwrap(), 7);
    /// std::thread::sleep(Duration::from_millis(20));
    /// assert!(cp.balance_stats().passes > 0);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// When the tokio runtime or its thread cannot be created, or a period is zero
    /// ([`std::io::ErrorKind::InvalidInput`], naming it).
    pub fn start_with(handle: MetricsHandle, options: ControlOptions) -> std::io::Result<Self> {
        let period = options.sample_period;
        if period.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("control plane: the sampling period must be positive, got {period:?}"),
            ));
        }
        if options.balance_tick.is_some_and(|t| t.is_zero()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "control plane: the balancing tick must be positive, got 0ns",
            ));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .enable_io()
            .build()?;
        let (tx, rx) = watch::channel(Sample::default());
        let (stop, stopped) = oneshot::channel::<()>();
        rt.spawn(sampler::run(handle.clone(), period, tx));
        let counters = Arc::new(balance::Counters::default());
        if let Some(tick) = options.balance_tick {
            rt.spawn(balance::run(handle.clone(), tick, Arc::clone(&counters)));
        }
        let rt_handle = rt.handle().clone();
        let thread = std::thread::Builder::new()
            .name("zonal-control".into())
            .spawn(move || {
                // Not on the CPU of a pinned worker that may have started it.
                crate::os::release_current_thread();
                // Until the control plane drops (or, should it vanish, its sender does).
                rt.block_on(async move {
                    let _ = stopped.await;
                });
                // Dropping the runtime here drops every task spawned on it.
                drop(rt);
            })?;
        Ok(Self {
            rx,
            metrics: handle,
            rt: rt_handle,
            balance: counters,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// What the periodic balancer has done so far (zeros when it does not run).
    #[must_use]
    pub fn balance_stats(&self) -> BalanceStats {
        self.balance.snapshot()
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

    /// Serves the pool's metrics to Prometheus at `http://{addr}/metrics`, on the control
    /// plane's runtime, until the control plane drops; returns the bound address (so
    /// `127.0.0.1:0` picks a free port). Loopback addresses only: see
    /// [`serve_metrics_with`](Self::serve_metrics_with) to serve on others.
    ///
    /// Each scrape takes a fresh snapshot ([`MetricsHandle::snapshot`]) and answers in the
    /// OpenMetrics text format (content type `application/openmetrics-text`), encoded by
    /// the `prometheus-client` crate. The series:
    /// `zonal_steals_total{level}`, `zonal_refusals_total{reason}`,
    /// `zonal_migrations_total{level,source}` (`source` = `steal` or `balance`),
    /// `zonal_queue_length{worker,node}`, the histogram `zonal_task_turnaround_seconds`,
    /// `zonal_tasks_run_total`, `zonal_tasks_spawned_total`, `zonal_task_panics_total`,
    /// `zonal_idle_seconds_total`, `zonal_job_memory_bytes`, `zonal_workers` and
    /// `zonal_policy_info{policy,levels,zone_depth}`. Levels are labelled by roman numeral:
    /// `level="I"` is the same node (index 0 of the `*_by_level` metrics), `"II"` the next
    /// level, and so on. Several endpoints may be served at once.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::io::{Read, Write};
    /// use std::time::Duration;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let cp = zonal::runtime::ControlPlane::start(pool.metrics_handle(), Duration::from_secs(1))
    ///     .expect("control plane");
    /// pool.par_for(0..10_000, 100, |_| {});
    /// let addr = cp.serve_metrics("127.0.0.1:0".parse().unwrap())?;
    ///
    /// let mut conn = std::net::TcpStream::connect(addr).unwrap();
    /// conn.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    ///     .unwrap();
    /// let mut reply = String::new();
    /// conn.read_to_string(&mut reply).unwrap();
    /// assert!(reply.starts_with("HTTP/1.1 200 OK"));
    /// assert!(reply.contains("zonal_steals_total{level=\"I\"}"));
    ///
    /// // Anything but loopback needs an explicit opt-in.
    /// let err = cp.serve_metrics("0.0.0.0:9100".parse().unwrap()).unwrap_err();
    /// assert!(err.to_string().contains("only loopback addresses"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`ServeError::NotLoopback`] for a non-loopback address; [`ServeError::Bind`] when the
    /// address cannot be bound (in use, not this machine's); [`ServeError::Listen`] when the
    /// bound socket cannot be set up.
    pub fn serve_metrics(&self, addr: SocketAddr) -> Result<SocketAddr, ServeError> {
        self.serve_metrics_with(addr, ServeOptions::default())
    }

    /// As [`serve_metrics`](Self::serve_metrics), with options: to serve on a non-loopback
    /// address, say so explicitly.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::time::Duration;
    /// use zonal::runtime::ServeOptions;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let cp = zonal::runtime::ControlPlane::start(pool.metrics_handle(), Duration::from_secs(1))
    ///     .expect("control plane");
    /// let addr = cp.serve_metrics_with(
    ///     "0.0.0.0:0".parse().unwrap(),
    ///     ServeOptions::default().allow_remote(true),
    /// )?;
    /// assert_ne!(addr.port(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`serve_metrics`](Self::serve_metrics).
    pub fn serve_metrics_with(
        &self,
        addr: SocketAddr,
        opts: ServeOptions,
    ) -> Result<SocketAddr, ServeError> {
        http::check_addr(addr, opts)?;
        let (listener, local) = http::bind(addr, &self.rt)?;
        self.rt.spawn(http::serve(listener, self.metrics.clone()));
        Ok(local)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ThreadPoolBuilder;

    #[test]
    fn a_zero_period_is_refused() {
        let pool = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .build()
            .unwrap();
        let err = ControlPlane::start(pool.metrics_handle(), Duration::ZERO).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("period"), "{err}");
        assert!(err.to_string().contains("0ns"), "{err}");
    }
}
