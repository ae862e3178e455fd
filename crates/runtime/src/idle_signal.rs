//! A worker's idle signal: since when it idles, written by its owner at idle transitions only
//! (never per task) and read by the balancer (`balance/load.rs`). Core state of each worker,
//! below the balancing feature that reads it.

use std::sync::atomic::{AtomicU64, Ordering};

/// "Not idle" in [`IdleSignal`].
const BUSY: u64 = u64::MAX;

/// Since when a worker idles (µs of the pool's clock), or busy. Written by its owner only at
/// idle transitions; read by the balancer.
#[derive(Debug)]
pub(crate) struct IdleSignal(AtomicU64);

impl Default for IdleSignal {
    fn default() -> Self {
        Self(AtomicU64::new(BUSY))
    }
}

impl IdleSignal {
    /// An idle span started at `since_us`.
    #[inline]
    pub(crate) fn set_idle(&self, since_us: u64) {
        self.0.store(since_us.min(BUSY - 1), Ordering::Relaxed);
    }

    /// The idle span ended.
    #[inline]
    pub(crate) fn set_busy(&self) {
        self.0.store(BUSY, Ordering::Relaxed);
    }

    /// Since when the worker idles, or `None` if it runs (or searches briefly).
    #[inline]
    pub(crate) fn idle_since(&self) -> Option<u64> {
        let v = self.0.load(Ordering::Relaxed);
        (v != BUSY).then_some(v)
    }
}
