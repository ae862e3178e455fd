//! Entering a pool: running an operation on one of its workers ([`in_worker`]) —
//! in place on one of them; from a worker of another pool, injected while that worker keeps
//! working for its own pool; from any other thread, injected while the thread blocks.

use std::ptr;

use crate::job::StackJob;
use crate::latch::{CrossLatch, Latch, LockLatch};
use crate::registry::Registry;
use crate::route::Target;
use crate::task_meta::TaskOptions;
use crate::worker::WorkerThread;

/// Runs `op` on a worker of this registry: here if we are one; else via a node's
/// injector (round-robin over the nodes with workers, `route.rs`), the calling thread blocking meanwhile, or, if it is a worker of another
/// pool, working for that pool meanwhile.
#[inline]
pub(crate) fn in_worker<OP, R>(registry: &Registry, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    WorkerThread::with_current(|w| match w {
        Some(w) if ptr::eq(&*w.registry, registry) => op(w, false),
        Some(w) => in_worker_cross(registry, w, op),
        None => in_worker_cold(registry, op),
    })
}

/// `in_worker` from a worker of another pool: inject the job here and keep that worker
/// busy with its own pool's work until a worker of ours has run it. Blocking it instead
/// would idle a core of the other pool, and deadlock if that pool's work is what ours
/// waits for.
#[cold]
fn in_worker_cross<OP, R>(registry: &Registry, current: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    let latch = CrossLatch::new(&current.registry, current.index);
    run_injected(registry, op, latch, |l| current.wait_until(l))
}

/// `in_worker` from a thread outside every pool: it blocks until a worker has run `op`.
#[cold]
fn in_worker_cold<OP, R>(registry: &Registry, op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    run_injected(registry, op, LockLatch::new(), LockLatch::wait)
}

/// Queues `op` on a node's injector (routed from outside, `route.rs`) as a job on this
/// stack, then `wait`s for `latch`,
/// which the worker that runs it sets.
fn run_injected<OP, R, L: Latch>(registry: &Registry, op: OP, latch: L, wait: impl FnOnce(&L)) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    // From outside our workers: the next node's injector, which becomes its origin.
    let route = crate::route::route(registry, None, TaskOptions::new(), Target::Here);
    let job = StackJob::new(
        |injected| {
            WorkerThread::with_current(|w| {
                // The job was queued here: only a worker of this registry runs it.
                op(w.expect("an injected job runs on a worker"), injected)
            })
        },
        latch,
        route.meta,
    );
    // SAFETY: `job` outlives its task: `wait` returns only once the latch is set, that
    // is, once the job has run, and `job` lives until the end of this function.
    route.queue(unsafe { job.as_task() });
    wait(&job.latch);
    job.into_result()
}
