//! The job-boundary bound (`src/boundary.rs`, issue 44), counted, never timed: an async
//! task woken while every worker runs fork-join work is polled within its worker's next job
//! boundaries, not after the computation drains.
//!
//! Each round spawns an async task that parks on its first poll (remembering its worker,
//! `w`), then runs a binary tree of `join`s with [`LEAVES`] small leaves on every worker.
//! Every leaf waits until every worker has run one; from the [`BEFORE_WAKE`]th on, each
//! waits (yielding) until the round *releases* the workers. So the task is woken while every
//! worker sits in a leaf of the computation:
//! - **from a leaf on `w` itself**, or
//! - **from a thread outside the pool**,
//!
//! then `w`'s `tasks_run` is read (exact: `w` runs nothing meanwhile) and the workers are
//! released (after the wake's push, so `w`'s next check sees it). The poll must be the very
//! next task `w` runs: its leaf returns to a `join`'s boundary, or to its next search, and
//! either takes the task first. (Every boundary is followed by a task run — the `join`'s
//! second half taken back, or the task found — so `w`'s `tasks_run` counts its boundaries.)
//! A round also checks that the poll came while the tree still had leaves to run: before
//! job boundaries, a woken task waited in its worker's away queue until that worker's deque
//! drained, at the end of the computation. A round in which another worker took the task
//! from the away queue while searching (a thief may, as before) is counted apart; most
//! rounds must be `w`'s. On a 2-worker pool, and on a virtual S1 pool of four workers on
//! two nodes.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use zonal_policy::{NoPolicy, Policy};
use zonal_runtime::{current_thread_index, MetricsHandle, ThreadPool, ThreadPoolBuilder};

/// Leaves of each round's `join` tree (a power of two).
const LEAVES: u64 = 1 << 12;
/// Leaves run before the wake (and at least one on every worker).
const BEFORE_WAKE: u64 = 64;
const ROUNDS: usize = 12;

/// Who woke the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    /// A leaf on the task's worker.
    Own,
    /// A thread of the test, outside the pool.
    Outside,
}

/// What one round saw.
#[derive(Debug, Default)]
struct Probe {
    waker: Mutex<Option<Waker>>,
    /// The worker of the first poll (`usize::MAX` before it).
    first: AtomicUsize,
    /// Set just before the wake.
    woken: AtomicBool,
    /// Set after the wake and the read of `at_wake`: the leaves may go on.
    released: AtomicBool,
    /// `first`'s `tasks_run` read at the wake.
    at_wake: AtomicU64,
    /// Leaves finished so far, and which workers ran one (a bit each).
    leaves: AtomicU64,
    ran: AtomicU64,
    /// The second poll: its worker, that worker's `tasks_run`, the leaves finished.
    polled: Mutex<Option<(usize, u64, u64)>>,
}

impl Probe {
    fn new() -> Arc<Self> {
        let p = Self::default();
        p.first.store(usize::MAX, Ordering::SeqCst);
        Arc::new(p)
    }

    /// Wakes the task once; `at`: its worker's `tasks_run` read by the waker.
    fn wake(&self, at: impl FnOnce() -> u64) {
        if self.woken.swap(true, Ordering::SeqCst) {
            return;
        }
        let w = self
            .waker
            .lock()
            .unwrap()
            .take()
            .expect("the task parked first");
        w.wake();
        self.at_wake.store(at(), Ordering::SeqCst);
        self.released.store(true, Ordering::SeqCst);
    }
}

/// The task's future: parks on its first poll, records its second.
struct Parked {
    probe: Arc<Probe>,
    metrics: MetricsHandle,
}

impl Future for Parked {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let me = current_thread_index().expect("polled on a worker");
        let p = &self.probe;
        if !p.woken.load(Ordering::SeqCst) {
            *p.waker.lock().unwrap() = Some(cx.waker().clone());
            p.first.store(me, Ordering::SeqCst);
            return Poll::Pending;
        }
        let run = self.metrics.snapshot().workers[me].tasks_run;
        let leaves = p.leaves.load(Ordering::SeqCst);
        *p.polled.lock().unwrap() = Some((me, run, leaves));
        Poll::Ready(())
    }
}

/// A small leaf: some arithmetic the optimiser keeps.
fn leaf_work() {
    let mut x = 0u64;
    for i in 0..2_000u64 {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    std::hint::black_box(x);
}

/// A `join` tree of `n` leaves; `leaf` runs after each one's work.
fn tree(n: u64, leaf: &(impl Fn() + Sync)) {
    if n == 1 {
        leaf_work();
        leaf();
    } else {
        zonal_runtime::join(|| tree(n / 2, leaf), || tree(n / 2, leaf));
    }
}

/// One round; `Some(delta)`: the poll was on the task's worker, after `delta` of its task
/// runs since the wake; `None`: a searcher took it first.
fn round(pool: &ThreadPool, by: Wake) -> Option<u64> {
    let workers = pool.num_workers();
    let all = (1u64 << workers) - 1;
    let probe = Probe::new();
    let metrics = pool.metrics_handle();
    let done = pool.spawn_async(Parked {
        probe: Arc::clone(&probe),
        metrics: metrics.clone(),
    });
    while probe.first.load(Ordering::SeqCst) == usize::MAX {
        std::thread::yield_now();
    }
    let w = probe.first.load(Ordering::SeqCst);
    let ready = |p: &Probe| {
        p.leaves.load(Ordering::SeqCst) >= BEFORE_WAKE && p.ran.load(Ordering::SeqCst) == all
    };
    let hold = |p: &Probe, until: &dyn Fn(&Probe) -> bool| {
        while !until(p) {
            std::thread::yield_now();
        }
    };
    std::thread::scope(|s| {
        if by == Wake::Outside {
            s.spawn(|| {
                hold(&probe, &ready);
                probe.wake(|| metrics.snapshot().workers[w].tasks_run);
            });
        }
        pool.install(|| {
            tree(LEAVES, &|| {
                let me = current_thread_index().expect("a leaf runs on a worker");
                probe.ran.fetch_or(1 << me, Ordering::SeqCst);
                probe.leaves.fetch_add(1, Ordering::SeqCst);
                // Every worker in the computation before anything else.
                hold(&probe, &|p| p.ran.load(Ordering::SeqCst) == all);
                if ready(&probe) {
                    if by == Wake::Own && me == w {
                        probe.wake(|| metrics.snapshot().workers[w].tasks_run);
                    }
                    hold(&probe, &|p| p.released.load(Ordering::SeqCst));
                }
            });
        });
    });
    done.join().expect("the task completes");
    let (poller, run, leaves) = probe.polled.lock().unwrap().expect("polled twice");
    assert!(
        leaves < LEAVES,
        "woken by {by:?}: polled only after the computation drained ({leaves} leaves)"
    );
    if poller != w {
        return None;
    }
    Some(run.saturating_sub(probe.at_wake.load(Ordering::SeqCst)))
}

fn check(pool: &ThreadPool, name: &str) {
    for by in [Wake::Own, Wake::Outside] {
        // The poll itself is the one task run.
        let bound = 1;
        let mut counted = Vec::new();
        for _ in 0..ROUNDS {
            if let Some(delta) = round(pool, by) {
                assert!(
                    delta <= bound,
                    "{name}, woken by {by:?}: polled after {delta} task runs of its worker (bound {bound})"
                );
                counted.push(delta);
            }
        }
        assert!(
            counted.len() * 2 >= ROUNDS,
            "{name}, woken by {by:?}: only {} of {ROUNDS} rounds polled on the task's worker",
            counted.len()
        );
        let picks = pool.metrics().total.boundary_picks;
        assert!(picks > 0, "{name}: no task was taken at a join boundary");
        eprintln!("{name}, woken by {by:?}: task runs before the poll {counted:?}");
    }
}

#[test]
fn a_woken_task_is_polled_at_the_next_boundaries_on_two_workers() {
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("2-worker pool");
    check(&pool, "2 workers");
}

#[test]
fn a_woken_task_is_polled_at_the_next_boundaries_on_two_nodes() {
    let policy: Arc<dyn Policy> = Arc::new(NoPolicy);
    let pool = ThreadPoolBuilder::new()
        .preset("s1")
        .worker_cpus([0, 1, 2, 3])
        .policy(policy)
        .build()
        .expect("pool on s1");
    assert_eq!(pool.num_workers(), 4);
    check(&pool, "s1, 2 nodes");
}
