//! The task's memory: one heap cell holding the header (the job header every queued task
//! starts with, the state word, the routing record, the join waker) and the future or its
//! output, with a table of the functions that know the future's type. The protocol that
//! governs who touches what is in `mod.rs`.

use std::cell::UnsafeCell;
use std::future::Future;
use std::mem::{self, ManuallyDrop};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use super::join_handle::{JoinError, JoinWaker};
use super::state::{AfterPoll, Run, State};
use super::tokio_context::{self, TaskRuntime};
use super::waker;
use crate::job::{Job, JobHeader, JobRef};
use crate::metrics::bump;
use crate::registry::Registry;
use crate::task_meta::{Meta, Task};
use crate::unwind;
use crate::worker::WorkerThread;

/// "Never polled yet" in [`Header::last_worker`].
pub(crate) const NO_WORKER: u32 = u32::MAX;

/// The functions that know the future's type.
pub(crate) struct Vtable {
    /// The queued form of the task (a `JobRef` to its cell).
    pub(crate) task: unsafe fn(NonNull<Header>) -> Task,
    /// Moves the output into `*dst`, an `Option<Result<F::Output, JoinError>>`.
    pub(crate) take_output: unsafe fn(NonNull<Header>, *mut ()),
    /// Drops the future (unpolled) and completes with `Cancelled`.
    pub(crate) cancel: unsafe fn(NonNull<Header>),
    /// Frees the cell.
    pub(crate) dealloc: unsafe fn(NonNull<Header>),
}

/// The part of a task that does not depend on the future's type.
///
/// `#[repr(C)]` with the job header first: a `Task` pointing at the cell finds its `Meta`
/// there (`task_meta.rs`, `Task` invariant).
#[repr(C)]
pub(crate) struct Header {
    /// The task's metadata as of its last poll (or its spawn): written only by the thread
    /// holding `RUNNING` (or the spawner, before the first push); read by whoever takes the
    /// task next (a queue's pop, or a waker's `SCHEDULED` transition, orders the two).
    pub(crate) job: JobHeader,
    pub(crate) state: State,
    pub(crate) vtable: &'static Vtable,
    pub(crate) registry: Arc<Registry>,
    /// The worker of the last poll ([`NO_WORKER`] before the first), or the worker a
    /// balancing pass moved the task to since (`async_task::async_moved`): where a wake sends
    /// it back, and where the next poll looks for an uncounted move. Written and read as
    /// `job` (a pass writes it while it holds the task popped from a queue).
    pub(crate) last_worker: UnsafeCell<u32>,
    pub(crate) join_waker: JoinWaker,
    /// When the task was spawned (for the turnaround histogram).
    pub(crate) spawned_at: Instant,
    /// The tokio runtime each poll enters (`tokio_context.rs`; nothing without the feature
    /// `tokio`). Read-only after the spawn.
    pub(crate) runtime: TaskRuntime,
}

// SAFETY: the cells are accessed only under the protocol of `mod.rs` (one thread at a time,
// ordered by the state word or a queue); everything else is `Sync`.
unsafe impl Send for Header {}
// SAFETY: as above.
unsafe impl Sync for Header {}

/// The future, its output, or nothing.
pub(crate) enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, JoinError>),
    Consumed,
}

/// A task's heap cell.
#[repr(C)]
pub(crate) struct Cell<F: Future> {
    pub(crate) header: Header,
    /// Touched by the thread holding `RUNNING` (poll, completion), then by the join handle
    /// once `COMPLETE` is seen (or by the runner when no handle is left).
    pub(crate) stage: UnsafeCell<Stage<F>>,
}

impl<F> Cell<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    const VTABLE: Vtable = Vtable {
        task: Self::task,
        take_output: Self::take_output,
        cancel: Self::cancel_raw,
        dealloc: Self::dealloc,
    };

    /// A new cell, scheduled, with `refs` references, its handle alive.
    pub(crate) fn allocate(
        fut: F,
        meta: Meta,
        registry: Arc<Registry>,
        runtime: TaskRuntime,
        refs: usize,
    ) -> NonNull<Header> {
        let cell = Box::new(Cell {
            header: Header {
                job: JobHeader::new(meta),
                state: State::new_scheduled(refs),
                vtable: &Self::VTABLE,
                registry,
                last_worker: UnsafeCell::new(NO_WORKER),
                join_waker: JoinWaker::new(),
                spawned_at: Instant::now(),
                runtime,
            },
            stage: UnsafeCell::new(Stage::Running(fut)),
        });
        NonNull::from(Box::leak(cell)).cast()
    }

    /// # Safety
    /// `h` is the header of a live `Cell<F>`.
    unsafe fn from_header<'a>(h: NonNull<Header>) -> &'a Self {
        // SAFETY: the header is the first field of a `repr(C)` cell (caller).
        unsafe { h.cast::<Self>().as_ref() }
    }

    unsafe fn task(h: NonNull<Header>) -> Task {
        // SAFETY: the cell lives while it is queued (the queue holds a reference) and its
        // header starts with a `JobHeader`; the state machine queues it at most once at a
        // time, so each push is executed once.
        unsafe { Task::new(JobRef::new(h.cast::<Self>().as_ptr().cast_const())) }
    }

    unsafe fn take_output(h: NonNull<Header>, dst: *mut ()) {
        // SAFETY: the handle calls this once it saw `COMPLETE` (Acquire): the stage is its
        // own; `dst` is the handle's `Option<Result<F::Output, JoinError>>`.
        unsafe {
            let stage = &mut *Self::from_header(h).stage.get();
            if let Stage::Finished(out) = mem::replace(stage, Stage::Consumed) {
                *dst.cast::<Option<Result<F::Output, JoinError>>>() = Some(out);
            }
        }
    }

    unsafe fn cancel_raw(h: NonNull<Header>) {
        // SAFETY: the caller holds `RUNNING` (it claimed an idle task) and a reference.
        unsafe { Self::from_header(h).cancel(None) }
    }

    unsafe fn dealloc(h: NonNull<Header>) {
        // SAFETY: the last reference is gone: nobody else can reach the cell. Dropping it
        // drops whatever stage is left (the future, if the task never completed: not
        // possible while it is listed, but dropped exactly once either way).
        drop(unsafe { Box::from_raw(h.cast::<Self>().as_ptr()) });
    }

    /// Runs the task on worker `w`: polls it (or cancels it) once.
    fn run(&self, w: &WorkerThread) {
        let h = &self.header;
        match h.state.start_run() {
            Run::Cancel => self.cancel(Some(w)),
            Run::Poll => self.poll(w),
        }
    }

    /// One poll, with the task's metadata brought up to date (module docs, "Migrations").
    fn poll(&self, w: &WorkerThread) {
        let h = &self.header;
        // Until the end of the poll, the completion included (`tokio_context.rs`).
        let _runtime = h.runtime.enter();
        let meta = self.record_move(w);
        w.current.set(meta);
        bump(&w.counters().async_polls, 1);
        let raw = NonNull::from(h);
        // The poller's waker borrows the runner's reference: dropped without a decrement.
        // SAFETY: the task lives while we hold the runner's reference.
        let waker = ManuallyDrop::new(unsafe { waker::borrowed(raw) });
        let mut cx = Context::from_waker(&waker);
        let res = unwind::halt_unwinding(|| {
            // SAFETY: we hold `RUNNING`: the stage is ours; the future never moves (the cell
            // is on the heap until freed).
            let stage = unsafe { &mut *self.stage.get() };
            match stage {
                // SAFETY: the future is pinned in its heap cell until it is dropped there.
                Stage::Running(f) => unsafe { Pin::new_unchecked(f) }.poll(&mut cx),
                _ => unreachable!("a task is polled only before it completes"),
            }
        });
        match res {
            Ok(Poll::Pending) => match h.state.end_poll() {
                AfterPoll::Idle => drop_ref(raw),
                // SAFETY: the runner's reference becomes the queue's.
                AfterPoll::Requeue => unsafe { requeue(raw, Some(w)) },
                AfterPoll::Cancel => self.cancel(Some(w)),
            },
            Ok(Poll::Ready(out)) => self.complete(Ok(out), Some(w)),
            Err(payload) => {
                let payload = tokio_context::explain(payload);
                self.complete(Err(JoinError::panic(payload)), Some(w));
            }
        }
    }

    /// The metadata to poll with on `w` (written back to the header): the run's copy (a
    /// steal bumped its migrations there), plus one migration if the task changed node
    /// since its last poll (or the pass that last moved it: it counted that move) and no
    /// steal counted the move.
    fn record_move(&self, w: &WorkerThread) -> Meta {
        let h = &self.header;
        // SAFETY: we hold `RUNNING`: the routing record is ours.
        let (job_meta, last) = unsafe { (*h.job.meta.get(), *h.last_worker.get()) };
        let mut meta = w.current.get();
        if meta.migrations <= job_meta.migrations && last != NO_WORKER {
            let r = &*w.registry;
            let prev = last as usize;
            if r.worker_node[prev] != w.node {
                meta.migrations = job_meta.migrations.saturating_add(1);
                let level = r.topo.level_between(r.worker_cpu[prev], w.cpu).index();
                if let Some(c) = w.counters().steals.get(level) {
                    bump(c, 1);
                }
            }
        }
        // SAFETY: as above.
        unsafe {
            *h.job.meta.get() = meta;
            *h.last_worker.get() = w.index as u32;
        }
        meta
    }

    /// Drops the future unpolled (the pool shuts down) and completes with `Cancelled` (or
    /// with the panic of the future's drop). The caller holds `RUNNING` and a reference.
    fn cancel(&self, w: Option<&WorkerThread>) {
        let res = unwind::halt_unwinding(|| {
            // SAFETY: we hold `RUNNING`: the stage is ours.
            unsafe { *self.stage.get() = Stage::Consumed };
        });
        let err = match res {
            Ok(()) => JoinError::cancelled(),
            Err(p) => JoinError::panic(p),
        };
        self.complete(Err(err), w);
    }

    /// Stores the output (dropping the future), completes, tells the handle or drops the
    /// output, leaves the pool's list, and drops the runner's reference.
    fn complete(&self, out: Result<F::Output, JoinError>, w: Option<&WorkerThread>) {
        let h = &self.header;
        let registry = Arc::clone(&h.registry);
        // SAFETY: we hold `RUNNING`: the stage is ours. A panic in the future's drop goes
        // to the panic handler; the output is kept.
        let old = unsafe { mem::replace(&mut *self.stage.get(), Stage::Finished(out)) };
        if let Err(p) = unwind::halt_unwinding(move || drop(old)) {
            crate::spawn::handle_panic(&registry, p);
        }
        // Counted before the handle can see the completion (a joiner then reads it).
        if let Some(w) = w {
            bump(&w.counters().async_tasks_completed, 1);
        }
        // Turnaround: spawn → done, for `zonal_task_turnaround_seconds`.
        registry.turnaround.record(h.spawned_at.elapsed());
        if h.state.complete() {
            h.join_waker.wake();
        } else {
            // Detached: nobody will read the output; a panic goes to the handler, as a
            // spawned task's.
            // SAFETY: no handle is left: the stage is ours.
            let stage = unsafe { mem::replace(&mut *self.stage.get(), Stage::Consumed) };
            if let Stage::Finished(Err(e)) = stage {
                if let Some(p) = e.into_panic_payload() {
                    crate::spawn::handle_panic(&registry, p);
                }
            }
        }
        let raw = NonNull::from(h);
        registry.extension::<super::AsyncTasks>().remove(raw);
        drop_ref(raw);
        crate::spawn::task_done(&registry);
    }
}

impl<F> Job for Cell<F>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    unsafe fn execute(this: *const ()) {
        // SAFETY: `this` is the cell a queued `Task` pointed at (`Cell::task`); the queue's
        // reference, now the runner's, keeps it alive.
        let cell = unsafe { &*this.cast::<Self>() };
        WorkerThread::with_current(|w| {
            // Async tasks are queued only in their registry's queues: a worker runs them.
            cell.run(w.expect("an async task runs on a worker"));
        });
    }
}

/// Drops one reference, freeing the task if it was the last.
pub(crate) fn drop_ref(h: NonNull<Header>) {
    // SAFETY: the caller owns the reference it drops; the header lives until then.
    unsafe {
        if h.as_ref().state.ref_dec() {
            (h.as_ref().vtable.dealloc)(h);
        }
    }
}

/// Pushes a scheduled task back on a queue of its last worker (`route.rs`,
/// `route::requeue`), from `here` (the current worker, if one of the task's pool).
///
/// # Safety
/// The caller set `SCHEDULED` (or kept it, after a poll) and hands its reference to the
/// queue; the task has been polled at least once.
pub(crate) unsafe fn requeue(h: NonNull<Header>, here: Option<&WorkerThread>) {
    // SAFETY: the reference handed over keeps the header alive; the routing record is
    // ours until the push (we set `SCHEDULED`, nobody runs the task before it is queued).
    unsafe {
        let hd = h.as_ref();
        let (meta, last) = (*hd.job.meta.get(), *hd.last_worker.get());
        let task = (hd.vtable.task)(h);
        crate::route::requeue(&hd.registry, here, last as usize, &meta, task);
    }
}
