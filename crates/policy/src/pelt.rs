//! PELT's decay (Linux's per-entity load tracking), defined once for every driver: the
//! simulator's per-CPU loads (`zonal-sim`'s `machine.rs`) and the runtime's per-worker
//! loads (`zonal-runtime`'s `balance/load.rs`) decay by the same table.
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
/// use zonal_policy::pelt_decay;
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
