//! `yield_now` and `yield_local` (rayon's): a worker runs one pending task, if any, and
//! returns; `current_thread_has_pending_tasks` says whether its own queues hold one.

use crate::worker::WorkerThread;

/// What [`yield_now`] did (rayon's `Yield`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Yield {
    /// A pending task was found and run (it may have run nested or stolen work).
    Executed,
    /// No task was pending anywhere this worker may take from.
    Idle,
}

/// `yield_now` on `worker`: looks once for a task, where the worker's loop looks (its queues, its node's
/// injector, then a steal walk), and runs it.
pub(crate) fn run_one(worker: &WorkerThread) -> Yield {
    match worker.find_work() {
        Some((task, meta)) => {
            worker.execute_with(task, meta);
            Yield::Executed
        }
        None => Yield::Idle,
    }
}

/// `yield_local` on `worker`: runs one task of its own queues (deque, inbox, away queue),
/// if any.
pub(crate) fn run_one_local(worker: &WorkerThread) -> Yield {
    match worker.find_local() {
        Some((task, meta)) => {
            worker.execute_with(task, meta);
            Yield::Executed
        }
        None => Yield::Idle,
    }
}

/// On a worker (of any pool), runs one pending task of its pool if there is one:
/// `Some(Yield::Executed)` or `Some(Yield::Idle)`; on any other thread `None` (and the
/// global pool is not built). Use it to wait cooperatively inside a pool.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::Yield;
/// assert_eq!(zonal::yield_now(), None);
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
/// let r = pool.install(|| {
///     let (tx, rx) = std::sync::mpsc::channel();
///     zonal::spawn(move || tx.send(1).unwrap());
///     (zonal::yield_now(), rx.try_recv().ok())
/// });
/// assert_eq!(r, (Some(Yield::Executed), Some(1)));
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn yield_now() -> Option<Yield> {
    WorkerThread::with_current(|w| w.map(run_one))
}

/// Like [`yield_now`], but runs only a task of the current worker's *own* queues (its deque,
/// its inbox of pinned tasks, its away queue): no injected task and no steal (rayon's
/// `yield_local`). `None` on a thread that is no worker.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::Yield;
/// assert_eq!(zonal::yield_local(), None);
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
/// let r = pool.install(|| {
///     let (tx, rx) = std::sync::mpsc::channel();
///     zonal::spawn(move || tx.send(1).unwrap()); // onto this worker's deque
///     let pending = zonal::current_thread_has_pending_tasks();
///     (pending, zonal::yield_local(), rx.try_recv().ok(), zonal::yield_local())
/// });
/// assert_eq!(r, (Some(true), Some(Yield::Executed), Some(1), Some(Yield::Idle)));
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn yield_local() -> Option<Yield> {
    WorkerThread::with_current(|w| w.map(run_one_local))
}

/// On a worker (of any pool), whether its own queues (deque, inbox, away queue) hold a task
/// waiting to run; `None` on any other thread (rayon's `current_thread_has_pending_tasks`).
/// Tasks in the injectors or other workers' queues do not count.
#[must_use]
pub fn current_thread_has_pending_tasks() -> Option<bool> {
    WorkerThread::with_current(|w| w.map(WorkerThread::has_local_work))
}
