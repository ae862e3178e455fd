//! PELT (Linux's per-entity load tracking), defined once for every driver: the simulator's
//! per-CPU loads (`zonal-sim`'s `machine.rs`) and the runtime's per-worker loads
//! (`zonal-runtime`'s `balance/load.rs`) are the same [`PeltAverage`], decayed by the same
//! table.
//!
//! A signal's contribution halves every 32 periods of 1024 µs (`y^32 = 1/2`, kernel
//! `kernel/sched/pelt.c`, `LOAD_AVG_PERIOD` = 32); after 640 periods (`y^640 = 2^-20`) it
//! counts as converged. The table makes a decay a lookup, not an `exp2`: balancing reads
//! loads of many CPUs per decision.

/// PELT's period as a shift: 1024 µs.
pub const PELT_PERIOD_SHIFT: u32 = 10;

/// Periods after which a signal counts as converged (`y^640 = 2^-20`).
pub const PELT_TABLE_LEN: usize = 640;

/// `y^n` for `n < PELT_TABLE_LEN`, `y = 2^(-1/32)`.
static PELT_DECAY: [f64; PELT_TABLE_LEN] = {
    const Y: f64 = 0.978_572_062_087_700_1;
    let mut t = [1.0; PELT_TABLE_LEN];
    let mut i = 1;
    while i < PELT_TABLE_LEN {
        t[i] = t[i - 1] * Y;
        i += 1;
    }
    t
};

/// The decay over `periods` whole PELT periods: `y^periods`, or `None` once the signal has
/// converged (then the average equals its level).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::pelt_decay;
/// assert_eq!(pelt_decay(0), Some(1.0));
/// assert!((pelt_decay(32).unwrap() - 0.5).abs() < 1e-12);
/// assert_eq!(pelt_decay(640), None);
/// ```
#[inline]
#[must_use]
pub fn pelt_decay(periods: u64) -> Option<f64> {
    usize::try_from(periods)
        .ok()
        .and_then(|n| PELT_DECAY.get(n))
        .copied()
}

/// Whole PELT periods between `since_us` and `now_us` (none if `now_us` is earlier).
#[inline]
#[must_use]
pub fn pelt_periods(since_us: u64, now_us: u64) -> u64 {
    now_us.saturating_sub(since_us) >> PELT_PERIOD_SHIFT
}

/// `value` moved toward `level` over `periods` whole periods: `level + (value − level)·y^n`,
/// or `level` once converged.
#[inline]
fn toward(value: f64, level: f64, periods: u64) -> f64 {
    match pelt_decay(periods) {
        Some(d) => level + (value - level) * d,
        None => level,
    }
}

/// An exponential average with PELT's decay over a piecewise-constant signal, in whole
/// periods of 1024 µs. Two ways to drive it, both exact for their driver:
///
/// - **Set and evaluate** (the simulator): [`set`](Self::set) records that the signal
///   changes to a new level at a time; [`at`](Self::at) evaluates the average at any later
///   time, decayed toward the level over the whole periods since that change.
/// - **Accumulate** (the runtime's balancer): [`accumulate`](Self::accumulate) accounts
///   the whole periods since the last accounting at the level the signal had, and carries
///   the fraction of a period left over to the next call, so the decay does not depend on
///   how often it is called; [`value`](Self::value) reads the result.
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::PeltAverage;
/// let mut p = PeltAverage::default();
/// p.set(0, 1024.0);
/// assert!((p.at(32 * 1024) - 512.0).abs() < 1e-9);
/// let mut q = PeltAverage::default();
/// q.accumulate(32 * 1024, 1024.0);
/// assert_eq!(q.value(), p.at(32 * 1024));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeltAverage {
    /// The average at `since_us`.
    value: f64,
    /// Start of the time not yet accounted (set: the last change; accumulate: the start of
    /// the period not yet accounted).
    since_us: u64,
    /// The signal's level since `since_us`.
    level: f64,
}

impl PeltAverage {
    /// The average as last accounted (at the last [`set`](Self::set) or
    /// [`accumulate`](Self::accumulate)).
    #[inline]
    #[must_use]
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The average at `now_us`: the accounted value decayed toward the current level over
    /// the whole periods since (the value itself before one whole period has passed).
    #[inline]
    #[must_use]
    pub fn at(&self, now_us: u64) -> f64 {
        toward(self.value, self.level, pelt_periods(self.since_us, now_us))
    }

    /// The signal changes to `level` at `now_us`: accounts the average up to `now_us` and
    /// restarts from there.
    #[inline]
    pub fn set(&mut self, now_us: u64, level: f64) {
        self.value = self.at(now_us);
        self.since_us = now_us;
        self.level = level;
    }

    /// Accounts the time from the last accounting to `now_us` at `level`: the average decays
    /// by `y^n` for the `n` whole periods elapsed and moves toward `level`; the fraction of
    /// a period left over is accounted by the next call (nothing changes before a whole
    /// period has passed).
    #[inline]
    pub fn accumulate(&mut self, now_us: u64, level: f64) {
        let n = pelt_periods(self.since_us, now_us);
        if n == 0 {
            return;
        }
        self.value = toward(self.value, level, n);
        self.level = level;
        self.since_us += n << PELT_PERIOD_SHIFT;
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn set_and_evaluate_halves_in_32_periods() {
        let mut p = PeltAverage::default();
        p.set(0, 1024.0);
        assert_eq!(p.at(0), 0.0);
        assert_eq!(p.at(1023), 0.0, "no whole period yet");
        assert!((p.at(32 * 1024) - 512.0).abs() < 1e-9);
        p.set(32 * 1024, 0.0);
        assert!((p.value() - 512.0).abs() < 1e-9);
        assert!((p.at(64 * 1024) - 256.0).abs() < 1e-9);
        assert_eq!(p.at(10_000_000), 0.0, "converged");
    }

    #[test]
    fn accumulate_and_set_agree_on_whole_periods() {
        // A signal held at one level for whole periods: both ways give the same number.
        let mut s = PeltAverage::default();
        let mut a = PeltAverage::default();
        for (k, level) in [(3u64, 1024.0), (40, 0.0), (41, 2048.0), (700, 5.0)] {
            let now = k * 1024;
            a.accumulate(now, s.level);
            s.set(now, level);
            assert_eq!(a.value(), s.value(), "at {k} periods");
        }
    }
}
