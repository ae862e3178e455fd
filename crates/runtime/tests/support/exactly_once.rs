//! One exactly-once check, shared by the runtime's unit tests (`src/construct.rs`, through
//! `#[path]`) and its behaviour tests (`tests/rayon_core_api.rs`): `n` tasks spawned in a
//! scope, then the same `n` counters touched again by nested joins; every counter must end
//! at exactly 2.

use std::sync::atomic::{AtomicUsize, Ordering};

use zonal_runtime::ThreadPool;

/// Runs `n` scope tasks and `n` join leaves on `pool`; panics unless each ran exactly once.
pub(crate) fn scope_and_joins_run_once(pool: &ThreadPool, n: usize) {
    let runs: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
    pool.scope(|s| {
        for r in &runs {
            s.spawn(move |_| {
                r.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    fn halves(pool: &ThreadPool, runs: &[AtomicUsize]) {
        if let [r] = runs {
            r.fetch_add(1, Ordering::Relaxed);
        } else {
            let (a, b) = runs.split_at(runs.len() / 2);
            pool.join(|| halves(pool, a), || halves(pool, b));
        }
    }
    halves(pool, &runs);
    let wrong: Vec<(usize, usize)> = runs
        .iter()
        .map(|r| r.load(Ordering::Relaxed))
        .enumerate()
        .filter(|&(_, k)| k != 2)
        .collect();
    assert!(
        wrong.is_empty(),
        "tasks not run exactly once (index, runs): {wrong:?}"
    );
}
