//! Task turnaround: how long tasks took from being queued to completing, as a histogram
//! with fixed bounds, lock-free.
//!
//! One [`TurnaroundHistogram`] lives in the registry (`Registry::turnaround`). Tasks that
//! carry a completion (async tasks and spawned tasks with a handle) record their turnaround
//! there when they complete; [`PoolMetrics::turnaround`](crate::PoolMetrics::turnaround)
//! holds its [`Turnaround`] snapshot, and the control plane exposes it to Prometheus as
//! `zonal_task_turnaround_seconds`.
//!
//! Bounds: the 1-2-5 series from 10 µs to 100 s ([`Turnaround::upper_bounds`]), 22 buckets
//! plus one above 100 s. Recording is two relaxed `fetch_add`s (bucket, sum) and a binary
//! search over 22 bounds; the count is the sum of the buckets.
//!
//! A snapshot reads the buckets one by one while recorders may run: it is consistent with
//! itself (its `count` is the sum of its buckets), not necessarily with its `sum_ns`, which
//! may include a few recordings more or fewer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The buckets' upper bounds, inclusive, in nanoseconds: 10 µs · {1, 2, 5} · 10^k up to 100 s.
const BOUNDS_NS: [u64; 22] = [
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    2_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    20_000_000_000,
    50_000_000_000,
    100_000_000_000,
];

/// The number of buckets: one per bound and one above the last.
const NBUCKETS: usize = BOUNDS_NS.len() + 1;

/// A histogram of task turnaround times, written by any thread (lock-free).
#[derive(Debug)]
pub(crate) struct TurnaroundHistogram {
    /// Per bucket (`BOUNDS_NS`, then above the last bound): recordings in it.
    buckets: [AtomicU64; NBUCKETS],
    /// The sum of the recorded durations, ns (wrapping after 584 years of turnaround). The
    /// count is the sum of the buckets.
    sum_ns: AtomicU64,
}

impl Default for TurnaroundHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl TurnaroundHistogram {
    /// An empty histogram.
    pub(crate) fn new() -> Self {
        Self {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_ns: AtomicU64::new(0),
        }
    }

    /// Records one task's turnaround.
    pub(crate) fn record(&self, d: Duration) {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let i = BOUNDS_NS.partition_point(|&b| b < ns);
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// A snapshot.
    pub(crate) fn snapshot(&self) -> Turnaround {
        let counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        Turnaround {
            count: counts.iter().sum(),
            sum_ns: self.sum_ns.load(Ordering::Relaxed),
            upper_bounds_ns: BOUNDS_NS.to_vec(),
            counts,
        }
    }
}

/// A quantile asked of a [`Turnaround`] outside `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("quantile q = {q} is outside [0, 1]")]
pub struct QuantileError {
    /// The quantile asked for.
    pub q: f64,
}

/// A snapshot of the pool's task-turnaround histogram (queued to completed), in
/// [`PoolMetrics::turnaround`](crate::PoolMetrics::turnaround).
///
/// Buckets are not cumulative: `counts[i]` counts the turnarounds in
/// `(upper_bounds_ns[i - 1], upper_bounds_ns[i]]`, and the last count, one past the bounds,
/// those above the largest bound. A default `Turnaround` is empty and has no buckets.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let t = pool.metrics().turnaround;
/// assert_eq!(t.counts.len(), t.upper_bounds_ns.len() + 1);
/// assert_eq!(t.count, t.counts.iter().sum::<u64>());
/// assert!(t.quantile(2.0).is_err());
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct Turnaround {
    /// The buckets' upper bounds (inclusive), ns, ascending: [`Turnaround::upper_bounds`].
    pub upper_bounds_ns: Vec<u64>,
    /// Per bucket, then above the largest bound: turnarounds in it.
    pub counts: Vec<u64>,
    /// Turnarounds recorded: the sum of `counts`.
    pub count: u64,
    /// Their sum, ns.
    pub sum_ns: u64,
}

impl Turnaround {
    /// The fixed bucket bounds of every snapshot: 10 µs, 20 µs, 50 µs, 100 µs, … 100 s.
    #[must_use]
    pub fn upper_bounds() -> Vec<Duration> {
        BOUNDS_NS.iter().map(|&n| Duration::from_nanos(n)).collect()
    }

    /// The sum of the turnarounds, in seconds.
    #[must_use]
    pub fn sum_seconds(&self) -> f64 {
        self.sum_ns as f64 / 1e9
    }

    /// The mean turnaround, `None` when nothing was recorded.
    #[must_use]
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_nanos(self.sum_ns / self.count))
    }

    /// An estimate of the `q`-quantile (`0.5`: the median), `None` when nothing was
    /// recorded.
    ///
    /// As Prometheus's `histogram_quantile`: the bucket holding rank `q · count` is found
    /// and the value interpolated linearly inside it (from 0 for the first bucket); a rank
    /// that falls above the largest bound gives that bound (100 s).
    ///
    /// # Errors
    /// [`QuantileError`] when `q` is not in `[0, 1]` (NaN included).
    pub fn quantile(&self, q: f64) -> Result<Option<Duration>, QuantileError> {
        if !(0.0..=1.0).contains(&q) {
            return Err(QuantileError { q });
        }
        if self.count == 0 {
            return Ok(None);
        }
        let rank = q * self.count as f64;
        let mut below = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 || ((below + c) as f64) < rank {
                below += c;
                continue;
            }
            let Some(&hi) = self.upper_bounds_ns.get(i) else {
                break;
            };
            let lo = if i == 0 {
                0
            } else {
                self.upper_bounds_ns[i - 1]
            };
            let frac = ((rank - below as f64) / c as f64).clamp(0.0, 1.0);
            let ns = lo as f64 + (hi - lo) as f64 * frac;
            return Ok(Some(Duration::from_nanos(ns.round() as u64)));
        }
        Ok(self
            .upper_bounds_ns
            .last()
            .map(|&b| Duration::from_nanos(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn empty_has_no_quantile() {
        let h = TurnaroundHistogram::new();
        let t = h.snapshot();
        assert_eq!(t.count, 0);
        assert_eq!(t.counts.len(), NBUCKETS);
        assert_eq!(t.quantile(0.5), Ok(None));
        assert_eq!(t.mean(), None);
        assert_eq!(Turnaround::default().quantile(0.9), Ok(None));
    }

    #[test]
    fn record_lands_in_the_bucket_of_its_bound() {
        let h = TurnaroundHistogram::new();
        h.record(Duration::ZERO); // first bucket
        h.record(us(10)); // on the bound: inclusive, first bucket
        h.record(Duration::from_nanos(10_001)); // second
        h.record(Duration::from_secs(100)); // last bounded bucket
        h.record(Duration::from_secs(101)); // above
        h.record(Duration::MAX); // above, saturated
        let t = h.snapshot();
        assert_eq!(t.counts[0], 2);
        assert_eq!(t.counts[1], 1);
        assert_eq!(t.counts[BOUNDS_NS.len() - 1], 1);
        assert_eq!(t.counts[BOUNDS_NS.len()], 2);
        assert_eq!(t.count, 6);
        assert_eq!(t.upper_bounds_ns.len(), 22);
        assert_eq!(Turnaround::upper_bounds()[21], Duration::from_secs(100));
    }

    #[test]
    fn sum_and_mean() {
        let h = TurnaroundHistogram::new();
        h.record(us(100));
        h.record(us(300));
        let t = h.snapshot();
        assert_eq!(t.sum_ns, 400_000);
        assert!((t.sum_seconds() - 0.0004).abs() < 1e-12);
        assert_eq!(t.mean(), Some(us(200)));
    }

    #[test]
    fn quantiles_interpolate_inside_a_bucket() {
        // 100 recordings in (100 µs, 200 µs]: the median interpolates to 150 µs.
        let h = TurnaroundHistogram::new();
        for _ in 0..100 {
            h.record(us(150));
        }
        let t = h.snapshot();
        assert_eq!(t.quantile(0.5), Ok(Some(us(150))));
        assert_eq!(t.quantile(1.0), Ok(Some(us(200))));
        assert_eq!(t.quantile(0.0), Ok(Some(us(100))));
    }

    #[test]
    fn quantiles_pick_the_bucket_of_the_rank() {
        // 90 fast (≤ 10 µs), 10 slow (in (1 s, 2 s]).
        let h = TurnaroundHistogram::new();
        for _ in 0..90 {
            h.record(us(5));
        }
        for _ in 0..10 {
            h.record(Duration::from_millis(1500));
        }
        let t = h.snapshot();
        let p50 = t.quantile(0.5).unwrap().unwrap();
        assert!(p50 <= us(10), "{p50:?}");
        let p90 = t.quantile(0.9).unwrap().unwrap();
        assert_eq!(p90, us(10));
        let p95 = t.quantile(0.95).unwrap().unwrap();
        assert_eq!(p95, Duration::from_millis(1500));
        let p99 = t.quantile(0.99).unwrap().unwrap();
        assert!(p99 > Duration::from_secs(1) && p99 <= Duration::from_secs(2));
    }

    #[test]
    fn quantiles_above_the_bounds_give_the_largest_bound() {
        let h = TurnaroundHistogram::new();
        h.record(Duration::from_secs(1000));
        let t = h.snapshot();
        assert_eq!(t.quantile(0.5), Ok(Some(Duration::from_secs(100))));
    }

    #[test]
    fn quantiles_are_monotone() {
        let h = TurnaroundHistogram::new();
        for i in 0..1000u64 {
            h.record(Duration::from_nanos(i * i * 997));
        }
        let t = h.snapshot();
        let mut last = Duration::ZERO;
        for k in 0..=100 {
            let v = t.quantile(f64::from(k) / 100.0).unwrap().unwrap();
            assert!(v >= last, "q = {k}%: {v:?} < {last:?}");
            last = v;
        }
    }

    #[test]
    fn bad_quantiles_are_errors() {
        let t = TurnaroundHistogram::new().snapshot();
        assert_eq!(t.quantile(-0.1), Err(QuantileError { q: -0.1 }));
        assert_eq!(t.quantile(1.5), Err(QuantileError { q: 1.5 }));
        assert!(t.quantile(f64::NAN).is_err());
        assert_eq!(
            QuantileError { q: 1.5 }.to_string(),
            "quantile q = 1.5 is outside [0, 1]"
        );
    }

    #[test]
    fn concurrent_records_are_all_counted() {
        let h = TurnaroundHistogram::new();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let h = &h;
                s.spawn(move || {
                    for i in 0..1000u64 {
                        h.record(Duration::from_nanos((t + 1) * i * 1_000));
                    }
                });
            }
        });
        let t = h.snapshot();
        assert_eq!(t.count, 4000);
        let expected: u64 = (1..=4u64).map(|k| k * 1_000 * (999 * 1000 / 2)).sum();
        assert_eq!(t.sum_ns, expected);
    }
}
