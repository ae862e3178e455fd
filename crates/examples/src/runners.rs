//! What the paired benchmark runners (`scaling`, `rayon_demo`) share: the CPUs present and
//! their `--threads` lists.

use crate::cli::{check_range, Result};

/// The CPUs this process may use (at least 1).
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// The worker counts of a `--threads` list, each checked (1..=4096); an empty list means
/// 1, 2, 4, 8, 16 up to `cpus`.
///
/// # Errors
///
/// A usage error for a count outside 1..=4096.
pub fn worker_counts(given: &[usize], cpus: usize) -> Result<Vec<usize>> {
    if given.is_empty() {
        return Ok([1, 2, 4, 8, 16]
            .into_iter()
            .filter(|&n| n <= cpus.max(1))
            .collect());
    }
    for &n in given {
        check_range("--threads", n, 1, 4096)?;
    }
    Ok(given.to_vec())
}
