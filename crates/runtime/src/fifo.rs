//! FIFO spawns (rayon's `spawn_fifo` and `ScopeFifo::spawn_fifo`): among the FIFO spawns of
//! one worker, the oldest runs first, while the worker's deque stays LIFO for everything
//! else.
//!
//! A FIFO spawn that [`route::route`](crate::route::route) sends to the spawning worker's deque and whose
//! origin is that worker's node (the common case) is split in two, as in rayon-core: the job itself, a heap job
//! with the route's metadata, is pushed on a [`FifoQueue`] of that worker (the worker's own
//! for `spawn_fifo`, the scope's for that worker for `ScopeFifo`), and a *proxy* job
//! carrying only the queue's address is queued in its place, on the deque, through
//! `Route::queue_job` (counted once, woken for, stolen like any task).
//! Whoever runs a proxy — the owner or a thief — pops the *oldest* job of that queue and
//! runs it with the proxy's metadata as it ran (a steal of the proxy is the job's
//! migration). Each push has exactly one proxy and each proxy pops exactly one job, and
//! the push happens before its proxy is queued, so a proxy always finds a job: none is lost
//! or run twice. A FIFO spawn routed anywhere else (from outside the pool, aged, a child of
//! a computation rooted on another node) goes to an injector or to the worker's away queue,
//! FIFO already: a proxy speaks for whichever job of its queue is oldest, so every job of a
//! worker's FIFO queue must have the origin a thief's check of the proxy assumes.

use crate::job::HeapJob;
use crate::queues::FifoQueue;
use crate::registry::Registry;
use crate::route::Target;
use crate::task_meta::{Task, TaskOptions};
use crate::worker::WorkerThread;

/// A proxy's reference to its queue.
struct FifoPtr(*const FifoQueue);

// SAFETY: the queue is `Sync` (an injector of `Send` tasks behind a `OnceLock`) and outlives
// every proxy that points at it: a worker's queue lives in the registry, which the worker
// running the proxy keeps alive; a scope's queue lives in the scope, which waits for the
// job the proxy pops (see `run_oldest`).
unsafe impl Send for FifoPtr {}

/// Spawns `job` routed `Here` with `opts`; if the route is the spawning worker's deque,
/// through `fifo(worker)` and a proxy (module doc).
#[inline]
pub(crate) fn spawn_fifo<'q, F: FnOnce() + Send>(
    registry: &Registry,
    opts: TaskOptions,
    fifo: impl FnOnce(usize) -> &'q FifoQueue,
    job: F,
) {
    WorkerThread::with_current_in(registry, move |here| {
        let route = crate::route::route(registry, here, opts, Target::Here);
        match here {
            Some(w) if route.to_fifo() => {
                let queue = fifo(w.index);
                queue.push(HeapJob::task(route.blocks(), route.meta, job));
                let proxy = FifoPtr(queue);
                route.queue_job(move || run_oldest(proxy));
            }
            _ => route.fifo_elsewhere().queue_job(job),
        }
    });
}

/// A proxy's body: pops the oldest job of its queue and runs it here.
fn run_oldest(queue: FifoPtr) {
    // SAFETY: the queue is alive (see `FifoPtr`): it still holds at least one job — ours
    // or an older one — that has not run, so a scope owning it is still waiting. We do not
    // touch it after the pop.
    let queue = unsafe { &*queue.0 };
    let task = queue
        .pop()
        .expect("a FIFO proxy always finds a job: one push per proxy, pushed first");
    WorkerThread::with_current(|w| {
        run_fifo(
            w.expect("a proxy runs on a worker of the pool it was queued in"),
            task,
        );
    });
}

/// Runs a job popped by a proxy, with the job's metadata and the migrations of the
/// proxy as it runs.
fn run_fifo(worker: &WorkerThread, task: Task) {
    let mut meta = task.meta(&worker.home);
    meta.migrations = worker.current.get().migrations;
    let prev = worker.current.replace(meta);
    // SAFETY: the FIFO queue handed this task to us alone (crossbeam's injector gives
    // each pushed task to exactly one popper), so this is its only execution.
    unsafe { task.job.execute() };
    worker.current.set(prev);
}
