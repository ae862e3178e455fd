//! Bounded searching (`src/sleep/README.md`, steps 0a–0c and 5'): one push wakes at most one
//! worker, and the searcher chain at most one more; a burst on many workers runs every task
//! exactly once. Nothing here depends on timing: waits are bounded polls.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use zonal_runtime::{ThreadPool, ThreadPoolBuilder};

fn pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(n)
        .pin(false)
        .build()
        .expect("pool")
}

/// Waits (bounded) until every worker has parked and the park count stays put for a while:
/// the pool is quiet.
fn settle(pool: &ThreadPool) {
    let mut last = u64::MAX;
    let mut still = 0;
    for _ in 0..2_000 {
        let m = pool.metrics();
        let parks = m.total.parks;
        if m.workers.iter().all(|w| w.parks > 0) && parks == last {
            still += 1;
            if still == 10 {
                return;
            }
        } else {
            still = 0;
        }
        last = parks;
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn one_spawn_wakes_at_most_two_workers() {
    let pool = pool(16);
    settle(&pool);
    for _ in 0..5 {
        let before = pool.metrics().total.wakeups;
        let (tx, rx) = mpsc::channel();
        pool.spawn(move || tx.send(()).unwrap());
        rx.recv().unwrap();
        settle(&pool);
        let woken = pool.metrics().total.wakeups - before;
        // The push wakes one (step 5); that one, the last searcher, finds the task and may
        // wake one more (0b), which finds nothing and parks. Before the bound, a herd.
        assert!(woken <= 2, "one spawn woke {woken} workers to search");
    }
}

#[test]
fn a_burst_on_many_workers_runs_every_task_once() {
    let pool = pool(16);
    let n = 100_000;
    let hits: Vec<AtomicU8> = (0..n).map(|_| AtomicU8::new(0)).collect();
    pool.scope(|s| {
        for h in &hits {
            s.spawn(move |_| {
                h.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
    assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    // And the pool goes quiet again, with every searcher's place given back: a new spawn
    // still runs.
    settle(&pool);
    let (tx, rx) = mpsc::channel();
    pool.spawn(move || tx.send(()).unwrap());
    rx.recv().unwrap();
}
