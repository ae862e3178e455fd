//! Idle workers help as rayon's do, and idle pools park (`src/sleep/README.md`, step 0a):
//! on a pool of 16 logical, unpinned workers, a worker that runs out of work searches the
//! others' queues before it parks, so it takes queued work without parking first; and once
//! there is no work at all, every worker parks and stays parked. Checked with the pool's
//! park and wake-up counters, never with a clock: waits are bounded polls.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zonal_runtime::{MetricsHandle, PoolMetrics, ThreadPool, ThreadPoolBuilder};

const WORKERS: usize = 16;

fn pool() -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(WORKERS)
        .pin(false)
        .build()
        .expect("a pool of 16 logical workers")
}

/// Polls `done` (bounded: a failure, not a hang).
fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn parks(m: &PoolMetrics) -> Vec<u64> {
    m.workers.iter().map(|w| w.parks).collect()
}

/// Waits until every worker has parked at least once and the park and wake-up counts stop
/// moving over ten polls in a row.
fn settle(pool: &ThreadPool) -> PoolMetrics {
    let counts = |m: &PoolMetrics| -> Vec<(u64, u64)> {
        m.workers.iter().map(|w| (w.parks, w.wakeups)).collect()
    };
    let mut last = counts(&pool.metrics());
    let mut still = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        std::thread::sleep(Duration::from_millis(5));
        let m = pool.metrics();
        let now = counts(&m);
        if m.workers.iter().all(|w| w.parks > 0) && now == last {
            still += 1;
            if still == 10 {
                return m;
            }
        } else {
            still = 0;
        }
        assert!(Instant::now() < deadline, "the pool never settled: {m:#?}");
        last = now;
    }
}

/// Every worker but worker 0 finishes a task while worker 0's deque holds thousands of
/// tasks, which worker 0 cannot run (it is blocked). Each of them must steal from that
/// deque: it does so in its first search, without parking first — its park count when it
/// starts its first stolen task is the one it had before it went idle.
#[test]
fn idle_workers_take_queued_work_without_parking_first() {
    let pool = pool();
    let handle = pool.metrics_handle();
    let n = 4_000;
    let started = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(AtomicBool::new(false));
    let release0 = Arc::new(AtomicBool::new(false));
    let queued = Arc::new(AtomicBool::new(false));
    let ran: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
    // Per worker: its park count when it started its first task of the n (u64::MAX: none).
    let first: Arc<Vec<AtomicU64>> =
        Arc::new((0..WORKERS).map(|_| AtomicU64::new(u64::MAX)).collect());
    for w in 0..WORKERS {
        let (started, release, release0, queued) = (
            Arc::clone(&started),
            Arc::clone(&release),
            Arc::clone(&release0),
            Arc::clone(&queued),
        );
        let (ran, first, handle) = (Arc::clone(&ran), Arc::clone(&first), handle.clone());
        pool.spawn_pinned(w, move || {
            started.fetch_add(1, Ordering::SeqCst);
            if w == 0 {
                for i in 0..n {
                    let (ran, first, handle) =
                        (Arc::clone(&ran), Arc::clone(&first), handle.clone());
                    zonal_runtime::spawn(move || task(i, &ran, &first, &handle));
                }
                queued.store(true, Ordering::SeqCst);
                while !release0.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            } else {
                while !release.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
    }
    wait_for("every worker runs its blocking task", || {
        started.load(Ordering::SeqCst) == WORKERS && queued.load(Ordering::SeqCst)
    });
    // Every worker is busy: nobody parks until we release them.
    let before = parks(&pool.metrics());
    release.store(true, Ordering::SeqCst);
    let done = || ran.iter().filter(|r| r.load(Ordering::SeqCst) > 0).count();
    wait_for("the other workers run worker 0's queued tasks", || {
        done() == n
            || first[1..]
                .iter()
                .all(|f| f.load(Ordering::SeqCst) != u64::MAX)
    });
    release0.store(true, Ordering::SeqCst);
    wait_for("every task runs", || done() == n);
    let m = settle(&pool);
    for (i, r) in ran.iter().enumerate() {
        assert_eq!(r.load(Ordering::SeqCst), 1, "task {i} ran once");
    }
    let helpers: Vec<usize> = (1..WORKERS)
        .filter(|&w| first[w].load(Ordering::SeqCst) != u64::MAX)
        .collect();
    assert!(
        helpers.len() >= 2,
        "idle workers took worker 0's queued tasks: only {helpers:?} did; {m:#?}"
    );
    for w in helpers {
        assert_eq!(
            first[w].load(Ordering::SeqCst),
            before[w],
            "worker {w} parked before it took queued work"
        );
    }
}

fn task(i: usize, ran: &[AtomicUsize], first: &[AtomicU64], handle: &MetricsHandle) {
    ran[i].fetch_add(1, Ordering::SeqCst);
    let w = zonal_runtime::current_thread_index().expect("runs on a worker");
    if first[w].load(Ordering::SeqCst) == u64::MAX {
        let parks = handle.snapshot().workers[w].parks;
        let _ = first[w].compare_exchange(u64::MAX, parks, Ordering::SeqCst, Ordering::SeqCst);
    }
    // A little work, so that the deque does not drain before the others look.
    let mut x = i as u64;
    for _ in 0..2_000 {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

/// Fork-join work on 16 workers, then nothing: every worker parks, and parked workers stay
/// parked (no wake-up, no park) while nothing is queued — idle workers do not spin.
#[test]
fn an_idle_pool_parks_and_stays_parked() {
    let pool = pool();
    for _ in 0..3 {
        let sum = pool.install(|| fib(20));
        assert_eq!(sum, 6765);
    }
    let m = settle(&pool);
    let counts: Vec<(u64, u64)> = m.workers.iter().map(|w| (w.parks, w.wakeups)).collect();
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(2));
        let now = pool.metrics();
        let again: Vec<(u64, u64)> = now.workers.iter().map(|w| (w.parks, w.wakeups)).collect();
        assert_eq!(again, counts, "an idle worker woke up: {now:#?}");
    }
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = zonal_runtime::join(|| fib(n - 1), || fib(n - 2));
    a + b
}
