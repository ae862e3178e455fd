//! The sampler: every period, a metrics snapshot published with rates derived from the
//! previous one.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::handle::MetricsHandle;
use crate::metrics::PoolMetrics;

/// One sample of the control plane.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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

/// Samples `handle` every `period` into `tx` until every receiver is gone (the control
/// plane holds one, so in practice until its runtime stops).
pub(super) async fn run(handle: MetricsHandle, period: Duration, tx: watch::Sender<Sample>) {
    let start = Instant::now();
    let mut tick = tokio::time::interval(period);
    let mut prev: Option<(Instant, PoolMetrics)> = None;
    loop {
        tick.tick().await;
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
            s.refusals_per_sec = rate(m.total.refused.total(), p.total.refused.total());
        }
        s.metrics = m.clone();
        prev = Some((now, m));
        if tx.send(s).is_err() {
            break;
        }
    }
}
