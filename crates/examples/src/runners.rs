//! What the paired benchmark runners (`scaling`, `rayon_demo`) share: their `--threads`
//! flag, the CPUs present, and how a run checks its `--rounds` and worker counts.

use crate::cli::{check_range, Result};

/// The `--threads` flag of the paired runners (`#[command(flatten)]` into their arguments).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ThreadsArg {
    /// Worker counts, comma-separated (default: 1, 2, 4, 8, 16 up to the CPUs present).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
}

/// How a paired runner starts: checks `--rounds` (1..=1000), then the worker counts of
/// `threads` ([`worker_counts`]); gives the CPUs present ([`cpus`]) and those counts.
///
/// # Errors
///
/// A usage error for `rounds` outside 1..=1000 or a count outside 1..=4096.
pub fn plan(threads: &ThreadsArg, rounds: usize) -> Result<(usize, Vec<usize>)> {
    check_range("--rounds", rounds, 1, 1000)?;
    let cpus = cpus();
    let counts = worker_counts(&threads.threads, cpus)?;
    Ok((cpus, counts))
}

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

#[cfg(test)]
mod test {
    use super::*;
    use crate::cli::Exit;

    fn usage(r: Result<(usize, Vec<usize>)>) -> String {
        match r {
            Err(Exit::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn plan_checks_rounds_then_threads() {
        let given = |threads: &[usize]| ThreadsArg {
            threads: threads.to_vec(),
        };
        let (cpus, counts) = plan(&given(&[3, 1]), 1).unwrap();
        assert_eq!((cpus, counts), (super::cpus(), vec![3, 1]));
        assert_eq!(
            usage(plan(&given(&[0]), 0)),
            "--rounds 0 is out of range: expected 1..=1000"
        );
        assert_eq!(
            usage(plan(&given(&[0]), 1000)),
            "--threads 0 is out of range: expected 1..=4096"
        );
        let (cpus, counts) = plan(&ThreadsArg::default(), 7).unwrap();
        assert_eq!(counts, worker_counts(&[], cpus).unwrap());
    }
}
