//! `yield_now` (rayon's): a worker runs one pending task, if any, and returns.

use crate::pool::ThreadPool;
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

impl WorkerThread {
    /// Looks once for a task, where the worker's loop looks (its queues, its node's and
    /// the global injector, then a steal walk), and runs it.
    fn yield_now(&self) -> Yield {
        match self.find_work() {
            Some((task, meta)) => {
                self.execute_with(task, meta);
                Yield::Executed
            }
            None => Yield::Idle,
        }
    }
}

/// On a worker (of any pool), runs one pending task of its pool if there is one:
/// `Some(Yield::Executed)` or `Some(Yield::Idle)`; on any other thread `None` (and the
/// global pool is not built). Use it to wait cooperatively inside a pool.
///
/// ```
/// use zonal_runtime::Yield;
/// assert_eq!(zonal_runtime::yield_now(), None);
/// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
/// let r = pool.install(|| {
///     let (tx, rx) = std::sync::mpsc::channel();
///     zonal_runtime::spawn(move || tx.send(1).unwrap());
///     (zonal_runtime::yield_now(), rx.try_recv().ok())
/// });
/// assert_eq!(r, (Some(Yield::Executed), Some(1)));
/// # Ok::<(), zonal_runtime::BuildError>(())
/// ```
pub fn yield_now() -> Option<Yield> {
    WorkerThread::with_current(|w| w.map(WorkerThread::yield_now))
}

impl ThreadPool {
    /// [`yield_now`] if the current thread is a worker of this pool; `None` otherwise.
    #[must_use = "the answer says whether a task ran"]
    pub fn yield_now(&self) -> Option<Yield> {
        WorkerThread::with_current_in(&self.registry, |w| w.map(WorkerThread::yield_now))
    }
}
