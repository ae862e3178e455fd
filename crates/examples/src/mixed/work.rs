//! The computations: a fold over a shared slice of `u64`, each element mixed a fixed number
//! of rounds, sized in elements from a start-up calibration (in CPU time) so that one
//! computation is worth the milliseconds of one core's time asked for.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cpu::{cpu_time, Who};

/// Mixing rounds per element.
const ROUNDS: u32 = 8;
/// How much CPU time the calibration spends.
const CALIBRATE_FOR: Duration = Duration::from_millis(20);
/// The most clock time it takes, whatever the CPU time counted.
const WALL_LIMIT: Duration = Duration::from_secs(2);

/// One element's work: eight rounds of splitmix64's finaliser.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    for _ in 0..ROUNDS {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

/// One computation: the first `len` elements of `data`, each [`mix`]ed, folded with
/// wrapping addition. The setups run it sequentially ([`Work::sequential`]) or with their
/// pool's `par_iter` over [`Work::slice`]; the result is the same.
#[derive(Clone, Debug)]
pub struct Work {
    data: Arc<[u64]>,
    len: usize,
}

impl Work {
    /// The elements this computation folds.
    pub fn slice(&self) -> &[u64] {
        &self.data[..self.len]
    }

    /// Elements folded.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it folds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The computation on the calling thread.
    pub fn sequential(&self) -> u64 {
        self.slice()
            .iter()
            .fold(0u64, |acc, &x| acc.wrapping_add(mix(x)))
    }
}

/// How long one element takes on this machine, measured once at start-up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Nanoseconds per element, on one core.
    pub ns_per_element: f64,
}

impl Calibration {
    /// Times [`mix`] over 4,096 elements at a time, for 20 ms of this thread's CPU time
    /// (not of the clock: on a busy machine the thread may wait for a CPU, which must not
    /// count as work), or 2 s of the clock if the kernel counts no CPU time.
    pub fn measure() -> Self {
        let (start, cpu0) = (Instant::now(), cpu_time(Who::Thread));
        let mut elements = 0u64;
        let mut acc = 0u64;
        let mut cpu = Duration::ZERO;
        while cpu < CALIBRATE_FOR && start.elapsed() < WALL_LIMIT {
            for i in 0..4096u64 {
                acc = acc.wrapping_add(mix(std::hint::black_box(elements + i)));
            }
            elements += 4096;
            cpu = cpu_time(Who::Thread).saturating_sub(cpu0);
        }
        std::hint::black_box(acc);
        let spent = if cpu.is_zero() { start.elapsed() } else { cpu };
        Self {
            ns_per_element: (spent.as_nanos() as f64 / elements.max(1) as f64).max(0.01),
        }
    }

    /// Elements worth `ms` milliseconds on one core (at least one).
    pub fn elements(&self, ms: f64) -> usize {
        ((ms * 1e6 / self.ns_per_element) as usize).max(1)
    }
}

/// The two computations of a run, over one shared buffer: a request's and the batch job's.
#[derive(Clone, Debug)]
pub struct Workloads {
    /// What a request that computes folds.
    pub request: Work,
    /// What one batch computation folds.
    pub batch: Work,
}

impl Workloads {
    /// Sizes both from `calibration`: `request_ms` and `batch_ms` of one core's time.
    pub fn new(calibration: Calibration, request_ms: f64, batch_ms: f64) -> Self {
        let (r, b) = (
            calibration.elements(request_ms),
            calibration.elements(batch_ms),
        );
        let data: Arc<[u64]> = (0..r.max(b) as u64).collect();
        Self {
            request: Work {
                data: Arc::clone(&data),
                len: r,
            },
            batch: Work { data, len: b },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_follow_the_milliseconds_asked() {
        let c = Calibration {
            ns_per_element: 10.0,
        };
        assert_eq!(c.elements(2.0), 200_000);
        assert_eq!(c.elements(0.0), 1, "at least one element");
        let w = Workloads::new(c, 0.01, 0.1);
        assert_eq!((w.request.len(), w.batch.len()), (1_000, 10_000));
        assert_eq!(w.request.slice(), &w.batch.slice()[..1_000]);
    }

    #[test]
    fn the_fold_is_the_sum_of_the_mixed_elements() {
        let w = Workloads::new(
            Calibration {
                ns_per_element: 1e6,
            },
            3.0,
            3.0,
        );
        assert_eq!(w.request.len(), 3);
        let want = mix(0).wrapping_add(mix(1)).wrapping_add(mix(2));
        assert_eq!(w.request.sequential(), want);
    }
}
