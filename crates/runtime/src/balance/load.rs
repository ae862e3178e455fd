//! Live load tracking for the balancer: a PELT-like decayed load and utilisation per worker,
//! from signals the workers already keep or keep at idle transitions only.
//!
//! # Signals (none on the per-task hot path)
//!
//! - **Queued tasks**: the deque's `Stealer::len`, the inbox's `Injector::len` and the away
//!   queue's length (`queues::AwayQueue::len`) — read by the balancer, written by nobody new.
//! - **Running or idle**: `IdleSignal` (`idle_signal.rs`, core), one atomic per worker
//!   that its owner writes when an idle span *starts* (the µs it started,
//!   `WorkerThread::spin`) and when it *ends* (`Idle::end`), never per task.
//! - **Idle time**: the worker's `idle_ns` counter (booked when an idle span ends).
//!
//! # The averages (Linux's PELT: `y^32 = 1/2`, periods of 1024 µs)
//!
//! At each pass, for each worker: `runnable = queued + (1 if not idle)`, and the busy
//! fraction of the window since the previous pass, from the idle time booked in the window
//! plus the part of the idle span still open now, minus the part of it already counted by
//! the previous pass (clamped to the window). [`Pelt::accumulate`] then decays the previous
//! average by `y^n` for the `n` whole periods elapsed and moves it toward the window's level:
//! `load_avg` toward `1024 × runnable` (nice-0 weight per task: queued tasks' weights cannot
//! be read from lock-free queues), `util_avg` toward `1024 × busy fraction`. Fractions of a
//! period are carried to the next pass, so the decay does not depend on how often passes
//! run.

/// An exponential average with PELT's decay, advanced in whole periods
/// ([`PeltAverage::accumulate`](zonal_policy::PeltAverage::accumulate)).
pub(crate) use zonal_policy::PeltAverage as Pelt;

/// What the balancer reads of one worker at one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Probe {
    /// Queued tasks: deque, inbox and away queue.
    pub(crate) queued: u32,
    /// Of those, in the away queue (the ones a pass may move).
    pub(crate) away: u32,
    /// Since when the worker idles, if it does.
    pub(crate) idle_since_us: Option<u64>,
    /// Idle time booked so far, ns.
    pub(crate) idle_ns: u64,
}

/// One worker's load averages across passes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct WorkerLoad {
    pub(crate) load: Pelt,
    pub(crate) util: Pelt,
    last_us: Option<u64>,
    last_idle_ns: u64,
    /// The part of the idle span open at the previous pass already counted, µs.
    open_counted_us: u64,
}

impl WorkerLoad {
    /// Accounts the window up to `now_us` from `probe`; returns the runnable count.
    pub(crate) fn update(&mut self, now_us: u64, probe: &Probe) -> u32 {
        let running = u32::from(probe.idle_since_us.is_none());
        let runnable = probe.queued.saturating_add(running);
        let open_us = probe
            .idle_since_us
            .map_or(0, |since| now_us.saturating_sub(since));
        let busy = match self.last_us {
            Some(last) if now_us > last => {
                let window = (now_us - last) as f64;
                let booked = probe.idle_ns.saturating_sub(self.last_idle_ns) as f64 / 1000.0;
                let idle =
                    (booked + open_us as f64 - self.open_counted_us as f64).clamp(0.0, window);
                1.0 - idle / window
            }
            // First pass: what the worker does now.
            _ => f64::from(running),
        };
        self.load.accumulate(now_us, 1024.0 * f64::from(runnable));
        self.util.accumulate(now_us, 1024.0 * busy);
        self.last_us = Some(now_us);
        self.last_idle_ns = probe.idle_ns;
        self.open_counted_us = open_us;
        runnable
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn pelt_halves_in_32_periods() {
        let mut p = Pelt::default();
        p.accumulate(640 * 1024, 1024.0);
        assert_eq!(p.value(), 1024.0, "converged after 640 periods");
        p.accumulate(672 * 1024, 0.0);
        assert!((p.value() - 512.0).abs() < 1e-9, "{}", p.value());
        p.accumulate(704 * 1024, 0.0);
        assert!((p.value() - 256.0).abs() < 1e-9, "{}", p.value());
    }

    #[test]
    fn pelt_carries_fractions_of_a_period() {
        // 32 periods in steps of 700 µs decay as 32 periods at once.
        let mut a = Pelt::default();
        a.accumulate(1 << 20, 1024.0);
        let mut b = a;
        let start = 1u64 << 20;
        let mut t = start;
        while t + 700 <= start + 32 * 1024 {
            t += 700;
            a.accumulate(t, 0.0);
        }
        a.accumulate(start + 32 * 1024, 0.0);
        b.accumulate(start + 32 * 1024, 0.0);
        assert_eq!(a.value(), b.value());
        assert!((a.value() - 512.0).abs() < 1e-9);
    }

    #[test]
    fn a_busy_worker_converges_to_its_runnable_load_and_full_utilisation() {
        let mut w = WorkerLoad::default();
        let probe = Probe {
            queued: 3,
            away: 1,
            idle_since_us: None,
            idle_ns: 0,
        };
        for k in 1..=1000u64 {
            assert_eq!(w.update(k * 1024, &probe), 4);
        }
        assert!((w.load.value() - 4096.0).abs() < 1e-3, "{}", w.load.value());
        assert!((w.util.value() - 1024.0).abs() < 1e-3, "{}", w.util.value());
    }

    #[test]
    fn idle_time_lowers_utilisation_open_and_booked_spans_alike() {
        let mut w = WorkerLoad::default();
        let busy = Probe::default();
        w.update(64 * 1024, &busy);
        // Idle from 64 periods on, still open at the next pass: the window is all idle.
        let open = Probe {
            idle_since_us: Some(64 * 1024),
            ..busy
        };
        w.update(96 * 1024, &open);
        let after_open = w.util.value();
        // The span closes at 128 periods and is booked in full (64 periods): only the part
        // not yet counted (32 periods) counts now, so this window is all idle too.
        let closed = Probe {
            idle_ns: 64 * 1024 * 1000,
            ..busy
        };
        w.update(128 * 1024, &closed);
        assert!(w.util.value() < after_open);
        let mut reference = Pelt::default();
        reference.accumulate(64 * 1024, 1024.0);
        reference.accumulate(128 * 1024, 0.0);
        assert!((w.util.value() - reference.value()).abs() < 1e-9);
        assert_eq!(w.load.value(), {
            let mut l = Pelt::default();
            l.accumulate(64 * 1024, 1024.0);
            l.accumulate(96 * 1024, 0.0);
            l.accumulate(128 * 1024, 1024.0);
            l.value()
        });
    }
}
