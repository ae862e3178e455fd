//! Long-lived async tasks on the pool's workers: [`ThreadPool::spawn_async`],
//! [`ThreadPool::spawn_handle`], [`spawn_async`](crate::spawn_async), their
//! [`JoinHandle`]s, and the futures of [`crate::task`] ([`yield_now`], [`sleep`]).
//!
//! # The task
//!
//! One heap cell per task (`raw.rs`): a header — the job header every queued task starts
//! with (its `Meta`), the state word (`state.rs`), the pool's registry, the routing record
//! (the worker of the last poll), the join waker — and the future, later its output. While
//! the task is scheduled, one `Task` pointing at the cell sits in one queue of the pool,
//! like any job; running that job polls the future once.
//!
//! # The state machine (`state.rs`; model-checked under loom, `loom.rs`)
//!
//! ```text
//!            spawn
//!              │
//!              ▼        pop: start_run         poll → Pending
//!  ┌──▶ SCHEDULED ──────────────────▶ RUNNING ───────────────▶ idle ──┐
//!  │      ▲   (queued once)             │  │  wake: + SCHEDULED       │
//!  │      │                             │  └──────┐ (notified)        │
//!  │      └── poll → Pending, notified ─┼─────────┘                   │
//!  │                                    │ poll → Ready / panic        │
//!  │                                    ▼                             │
//!  │                                 COMPLETE ◀── cancel (shutdown)   │
//!  └───────────────────────── wake: push again (+1 reference) ────────┘
//! ```
//!
//! - **Never polled concurrently**: only the thread that moved `SCHEDULED → RUNNING` polls,
//!   and only a `SCHEDULED` task is ever in a queue — exactly once, since a wake pushes
//!   only on the transition *idle → `SCHEDULED`*.
//! - **Never lost when woken while running**: such a wake sets `SCHEDULED` next to
//!   `RUNNING`; the poller, ending the poll, sees it and queues the task again.
//! - **Polled again exactly once per wake after a poll**: any number of wakes between two
//!   polls set one flag and queue one task.
//! - **Dropped exactly once**: the future is dropped by the thread holding `RUNNING` when it
//!   completes (its output replaces it) or is cancelled; the output by the join handle, or
//!   by the runner when no handle is left (the `HANDLE` flag and `COMPLETE` are read and
//!   written in one atomic operation each, so exactly one of them sees the other).
//! - A panicking future completes with [`JoinError`] (its payload); the worker lives on. A
//!   detached task's panic goes to the pool's panic handler, as a spawned task's.
//! - The join handle's waker (its awaiter's, of any executor) is woken after `COMPLETE`
//!   is set; if it panics, the panic is caught and logged (`waker.rs`, `wake_foreign`):
//!   the result stays published and the worker (or the thread cancelling at shutdown)
//!   goes on. The timer (`timer.rs`) wakes its waits the same way.
//! - References (the pool's list, the handle, each `Waker`, the queue while scheduled) are
//!   counted in the state word; the last frees the cell.
//!
//! # Routing, ageing and migrations
//!
//! A new task is routed as any spawn (`route.rs`, `route::route`): its `Meta` (origin =
//! the spawning task's — a child inherits its parent's origin, `task_meta.rs`, "Whole
//! computations" —, or the node named by [`TaskOptions::origin`]; from outside the pool,
//! the next node with workers; group and weight inherited) is fixed there, and its origin
//! never changes. The task keeps its
//! `Meta` across polls, in its job header.
//!
//! A woken task goes back to the worker that last polled it (`route::requeue`): **aged**
//! (the policy's ageing rule, `StealSide::ageing`) → that worker's inbox, where no thief
//! sees it (so an aged task is never polled on another worker again); otherwise → that
//! worker's away queue, where thieves may take it one at a time after a check with its real
//! metadata (`steal/README.md`). Woken on that worker itself, the push is its own
//! (`new_local_work`); from any other thread, a shared push and the full wake-up check.
//! Either queue is one of the worker's *addressed* queues, which it looks at at every job
//! boundary, even in the middle of fork-join work (`boundary.rs`): a woken task is polled
//! at its worker's next boundary, not after the computation running there drains.
//!
//! A **migration** is counted once per move, by whoever moves the task:
//! - a **steal** bumps the task's migration count in the thief's copy of the `Meta`
//!   (`steal/`), which the poll writes back to the header (the poll sees a count above the
//!   header's and counts nothing more);
//! - a **balancing pass** (`balance/`, the control plane's or
//!   [`ThreadPool::balance_now`]) bumps it in the header of the task it pops from an away
//!   queue and makes the destination the task's routing record (`async_task::async_moved`), as
//!   if it had been polled there: the poll at the destination sees no move to count;
//! - a poll that finds the task on another node than its routing record's worker without
//!   either having counted the move (no such path exists today; the rule keeps the count
//!   honest if one appears) bumps it there, and counts it in the worker's `steals_by_level`
//!   at the level between the two CPUs,
//!
//! so that `migrations` ([`current_task`](crate::current_task)) counts every move of a task
//! once, and equals the moves counted in the metrics (`steals_by_level`, and
//! `balance_migrations_by_level` for passes). The ageing rule reads that count: with a
//! limit of 3 a task ages at its third move, whichever moved it.
//!
//! Metrics: each poll counts in the worker's `tasks_run` and `async_polls`; each task that
//! finishes (value or panic) on a worker in its `async_tasks_completed`. A re-queue is no
//! new task: it is not counted in `tasks_spawned`.
//!
//! # Shutdown
//!
//! A live async task counts in the pool's `pending` tasks from spawn to completion, so the
//! workers stay while one may still run. Terminating the [`ThreadPool`] — dropping it, or
//! [`ThreadPool::shutdown_and_wait`] — sets `terminate`, then closes the pool's list of
//! live tasks and **cancels** every one (`owned.rs`, `async_task::shutdown_async`): an idle
//! task — one nobody may ever wake — is cancelled on the terminating thread (its future
//! dropped there, before the call returns); a queued or running one by the worker that
//! runs it next or polls it now. A task spawned after that is cancelled at once. Each
//! cancelled task's handle resolves to [`JoinError`] ([`JoinError::is_cancelled`]). So
//! the workers stay for queued and running polls only, never for a wake that may not come
//! (rayon's workers stay for queued work only, too): the drop returns at once and the
//! workers exit once those are done; `shutdown_and_wait` returns after that, every
//! handle finished.
//!
//! # tokio's reactor and timers
//!
//! The pool is an executor, not a reactor: its own futures ([`crate::task::sleep`], the
//! timer of `timer.rs`; [`yield_now`](crate::task::yield_now)) need nothing else, and so
//! does any future woken by a plain [`Waker`](std::task::Waker) (channels, `JoinHandle`s,
//! tokio's `sync` types). tokio's *resources* — `tokio::time::sleep`,
//! `tokio::net::TcpStream`, `tokio::spawn` — look for a tokio runtime in the thread's
//! context. With the feature `tokio` a task finds one in either of two ways:
//! - **the spawner's** (no set-up): a task spawned inside a tokio runtime keeps that
//!   runtime's `tokio::runtime::Handle` and enters it around each poll (per task: the
//!   global pool outlives the runtimes of `#[tokio::test]`s; `tokio_context.rs`);
//! - **the pool's**: `ThreadPoolBuilder::tokio_handle` makes every worker enter a
//!   runtime's handle for its whole life (from before its start handler to after its exit
//!   handler, `construct.rs`); every task of that pool uses it.
//!
//! The runtime's threads drive the I/O and timers; their wakes queue the task on the pool
//! as any wake. A current-thread runtime drives them only while its thread is in
//! `block_on` (awaiting the task's [`JoinHandle`], say). With no runtime, tokio panics when
//! such a resource is created on a worker ("there is no reactor running, must be called
//! from the context of a Tokio 1.x runtime"): the task completes with a [`JoinError`]
//! ([`JoinError::is_panic`]) whose message starts "no tokio runtime: call spawn_async
//! inside one or give ThreadPoolBuilder::tokio_handle", and the worker lives on.

mod join_handle;
#[cfg(all(test, zonal_loom))]
mod loom;
mod owned;
mod raw;
pub(crate) mod state;
mod timer;
mod tokio_context;
mod waker;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

pub use join_handle::{JoinError, JoinHandle};
pub(crate) use owned::AsyncTasks;
pub use timer::{sleep, sleep_until, Sleep};

use crate::registry::Registry;
use crate::route::Target;
use crate::task_meta::{Task, TaskOptions};
use crate::worker::WorkerThread;
use raw::Cell;

/// Spawns `fut` as an async task routed to `target` with `opts` (module docs).
pub(crate) fn spawn_async<F>(
    registry: &Arc<Registry>,
    opts: TaskOptions,
    target: Target,
    fut: F,
) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // Pending until complete (module docs, "Shutdown"); Relaxed as `accept_static`.
    registry
        .pending
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    WorkerThread::with_current_in(registry, |here| {
        let route = crate::route::route(registry, here, opts, target);
        // Three references: the list's, the handle's, the queue's.
        let runtime = tokio_context::TaskRuntime::capture(registry);
        let h = Cell::allocate(fut, route.meta, Arc::clone(registry), runtime, 3);
        // SAFETY: the cell is live and ours until shared below.
        let hd = unsafe { h.as_ref() };
        if registry.extension::<AsyncTasks>().insert(h) {
            // SAFETY: a new cell: its header starts with the job header; queued once.
            route.queue(unsafe { (hd.vtable.task)(h) });
        } else {
            // The pool shuts down: cancelled at once, never queued. The list's
            // reference was not taken.
            raw::drop_ref(h);
            let _ = hd.state.cancel();
            let _ = hd.state.start_run();
            // SAFETY: we hold `RUNNING` (just set) and the queue's reference.
            unsafe { (hd.vtable.cancel)(h) };
        }
        // SAFETY: the output type is `F::Output`; the handle's reference is handed over.
        unsafe { JoinHandle::new(h) }
    })
}

/// A balancing pass popped `task` from an away queue and moves it to worker `to`, its
/// migration count already bumped (`balance/driver.rs`). If it is an async task, `to`
/// becomes its routing record's worker, so that its next poll does not count the move
/// again (module docs, "Routing, ageing and migrations"). Other jobs are left alone.
pub(crate) fn async_moved(registry: &Registry, task: &Task, to: usize) {
    if let Some(h) = registry
        .extension::<AsyncTasks>()
        .find(task.job.untagged().addr())
    {
        // SAFETY: `task` is that async task (a live job at a listed cell's address),
        // popped by the caller and not yet pushed again: nobody else runs it or reads
        // its routing record until the push, which orders this write before them
        // (the same ownership under which the caller writes its metadata).
        unsafe { *h.as_ref().last_worker.get() = to as u32 };
    }
}

/// Shutdown: cancels every live async task (module docs, "Shutdown").
pub(crate) fn shutdown_async(registry: &Registry) {
    registry.extension::<AsyncTasks>().close_and_cancel();
}

/// A future that calls a closure once (the task of [`ThreadPool::spawn_handle`]).
pub(crate) struct CallOnce<F>(pub(crate) Option<F>);

impl<F> Unpin for CallOnce<F> {}

impl<F: FnOnce() -> T, T> Future for CallOnce<F> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        let f = self.0.take().expect("a `spawn_handle` task is polled once");
        Poll::Ready(f())
    }
}

/// A future that, awaited, re-queues the task once, so that other tasks run first
/// ([`yield_now`]).
#[derive(Debug)]
#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow {
    yielded: bool,
}

/// Yields to the pool: the task is queued again (on its worker's away queue, or its inbox
/// if aged) and the worker runs other work first. Unlike rayon's
/// [`yield_now`](crate::yield_now) (which runs one pending task in place), this is a future,
/// for async tasks; under any other executor it yields once to that executor.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let h = pool.spawn_async(async {
///     for _ in 0..3 {
///         zonal::task::yield_now().await;
///     }
///     "done"
/// });
/// assert_eq!(h.join().unwrap(), "done");
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
