//! A search that scales (`src/steal/hints.rs`): on a virtual pool of 256 workers (the
//! paper's S1, 16 nodes of 16 workers, unpinned), after a burst of work every idle worker
//! spins its fruitless rounds and parks; counted by the workers' own `victim_probes` and
//! `fruitless_rounds`, a fruitless round reads O(nodes + levels) lines — one hint per node,
//! and a node's victims only where its hint was set — not one per other worker (rayon's
//! idle search: 255 probes a round, 32·P·(P−1) a burst). Counted, never timed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use zonal_runtime::{PoolMetrics, ThreadPool, ThreadPoolBuilder};

const WORKERS: usize = 256;

fn totals(m: &PoolMetrics) -> (u64, u64, u64) {
    m.workers.iter().fold((0, 0, 0), |(p, r, k), w| {
        (p + w.victim_probes, r + w.fruitless_rounds, k + w.parks)
    })
}

/// Waits (bounded: a failure, not a hang) until the park and round counts stop moving.
fn settle(pool: &ThreadPool) -> PoolMetrics {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = totals(&pool.metrics());
    let mut still = 0;
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let m = pool.metrics();
        let now = totals(&m);
        if now == last {
            still += 1;
            if still == 20 {
                return m;
            }
        } else {
            still = 0;
        }
        assert!(Instant::now() < deadline, "the pool never settled");
        last = now;
    }
}

#[test]
fn a_fruitless_round_on_256_workers_reads_a_line_per_node_not_per_worker() {
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .num_threads(WORKERS)
        .pin(false)
        .policy_name("conservative-hard")
        .build()
        .expect("a virtual pool of 256 workers");
    let topo = pool.topology();
    let nodes = topo.cpu_nodes().count() as u64;
    let levels = topo.mal_count() as u64;
    settle(&pool);
    let mut rounds_seen = 0;
    for burst in 0..3 {
        // A burst: every worker woken (a broadcast), then a scope of tiny tasks spread by
        // stealing; then nothing, and every worker spins its fruitless rounds and parks.
        // Counted from before the burst: the probes of rounds that found work count too.
        let before = totals(&pool.metrics());
        pool.broadcast(|_| ());
        let ran = AtomicUsize::new(0);
        pool.scope(|s| {
            for _ in 0..4 * WORKERS {
                s.spawn(|_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(ran.load(Ordering::Relaxed), 4 * WORKERS);
        let after = totals(&settle(&pool));
        let (probes, rounds) = (after.0 - before.0, after.1 - before.1);
        rounds_seen += rounds;
        if rounds == 0 {
            continue;
        }
        let per_round = probes as f64 / rounds as f64;
        eprintln!(
            "burst {burst}: {rounds} fruitless rounds, {probes} probes, {per_round:.1} a round \
             (nodes {nodes}, levels {levels}; rayon's walk: {} a round)",
            WORKERS - 1
        );
        assert!(
            per_round <= (2 * (nodes + levels)) as f64,
            "{per_round:.1} probes a fruitless round on {WORKERS} workers \
             (bound 2 x (nodes {nodes} + levels {levels}))"
        );
    }
    assert!(
        rounds_seen > 0,
        "the idle workers spun no fruitless round at all"
    );
}
