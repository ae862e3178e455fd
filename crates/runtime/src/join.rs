//! `join`: run two closures, potentially in parallel (rayon-core's `join`).
//!
//! The second closure goes on the worker's deque as a [`StackJob`] living on this stack
//! frame; the first runs here. Then the worker pops its deque back: if it finds the job it
//! runs it inline, otherwise (stolen) it works or sleeps until the job's latch is set. The
//! stack frame cannot be left before that latch is set, even when the first closure panics,
//! which is what makes the lifetime erasure of the `JobRef` sound.

use std::marker::PhantomData;

use crate::job::StackJob;
use crate::latch::SpinLatch;
use crate::metrics::bump;
use crate::route::{route, Target};
use crate::task_meta::TaskOptions;
use crate::unwind;
use crate::worker::WorkerThread;

/// Where a closure of [`join_context`](crate::join_context) runs (rayon's `FnContext`).
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    /// Not `Send`, as rayon's: it describes this thread.
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    fn new(migrated: bool) -> Self {
        Self {
            migrated,
            _marker: PhantomData,
        }
    }

    /// Whether the closure runs on another thread than the one that called
    /// [`join_context`](crate::join_context): the second closure was stolen by another worker, or the first one
    /// was injected into the pool from a thread outside it.
    #[must_use]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

pub(crate) fn join_in_worker<A, B, RA, RB>(wt: &WorkerThread, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    join_context_in_worker(wt, false, |_| a(), |_| b())
}

/// `join_context` on worker `wt`; `injected`: the call came from another thread (`a` is
/// migrated).
pub(crate) fn join_context_in_worker<A, B, RA, RB>(
    wt: &WorkerThread,
    injected: bool,
    a: A,
    b: B,
) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    // A child of the current task, fresh at home: our deque.
    let route = route(&wt.registry, Some(wt), TaskOptions::new(), Target::Here);
    let mut job_b = StackJob::new(
        |stolen| b(FnContext::new(stolen)),
        SpinLatch::new(&wt.registry, wt.index),
        route.meta,
    );
    // SAFETY: `job_b` lives on this frame, and we do not leave it before its latch is set
    // or we have taken the job back from the deque (below, also on A's panic).
    let job_b_task = unsafe { job_b.as_task() };
    let origin_b = route.meta.origin;
    route.queue(job_b_task);

    let status_a = unwind::halt_unwinding(|| a(FnContext::new(injected)));
    // A job boundary: tasks addressed to us (a woken async task) run here, before B
    // (`boundary.rs`).
    wt.at_join_boundary();

    while !job_b.latch.probe() {
        if let Some(t) = wt.deque.pop() {
            if t == job_b_task {
                // One counter for "popped back and run inline" (a local pop and a run).
                bump(&wt.counters().joins_inline, 1);
                if origin_b != wt.node {
                    // A half of a computation rooted on another node: counted like any task
                    // with a header (`WorkerThread::execute_with`).
                    wt.count_placement(origin_b);
                }
                let result_b = job_b.run_inline(false);
                return (ok_or_resume(status_a), result_b);
            }
            bump(&wt.counters().local_pops, 1);
            wt.execute(t);
        } else {
            // Stolen. A stolen half of a short loop is done within a few microseconds: wait
            // for it here before the idle loop, whose fruitless search yields the CPU (on a
            // loaded machine, for a whole time slice of another process).
            if !spin_until_set(&job_b.latch) {
                wt.wait_until(&job_b.latch);
            }
            break;
        }
    }
    let ra = ok_or_resume(status_a);
    (ra, job_b.into_result())
}

/// Rounds of [`spin_until_set`]: round `k` spins `2^k` times (`2^SPIN_ROUNDS - 1` spin-loop
/// hints in all, about a microsecond or two: the time a thief takes to run a stolen half of
/// a loop of a few thousand cheap items and set its latch).
const SPIN_ROUNDS: u32 = 8;

/// Spins on `latch` for a bounded time; whether it was set.
#[inline]
fn spin_until_set(latch: &SpinLatch<'_>) -> bool {
    for round in 0..SPIN_ROUNDS {
        for _ in 0..1u32 << round {
            std::hint::spin_loop();
        }
        if latch.probe() {
            return true;
        }
    }
    false
}

#[inline]
fn ok_or_resume<T>(r: std::thread::Result<T>) -> T {
    match r {
        Ok(x) => x,
        Err(p) => unwind::resume_unwinding(p),
    }
}
