//! `scope_fifo` and `in_place_scope_fifo` (rayon's): a scope whose spawns run in FIFO order
//! per spawning worker.
//!
//! A [`ScopeFifo`] is a [`Scope`] (its latch, its panic, its pool) plus one [`FifoQueue`]
//! per worker of the pool; `spawn_fifo` from a worker pushes the job on that worker's queue
//! and a proxy on its deque (`fifo.rs`). The scope waits for its jobs as any scope does
//! (its latch counts the jobs, not the proxies), so every queue is empty when it returns.

use std::sync::Arc;

use crate::global::current_or_global;
use crate::latch::Latch;
use crate::pool::ThreadPool;
use crate::queues::FifoQueue;
use crate::registry::Registry;
use crate::route::Target;
use crate::scope::{Scope, ScopePtr};
use crate::task_meta::TaskOptions;
use crate::unwind;
use crate::worker::WorkerThread;

/// A scope whose tasks run in FIFO order per spawning worker; see
/// [`ThreadPool::scope_fifo`].
pub struct ScopeFifo<'scope> {
    base: Scope<'scope>,
    /// Per worker of the pool: its FIFO spawns waiting for their proxies.
    fifos: Box<[FifoQueue]>,
}

impl std::fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeFifo").finish_non_exhaustive()
    }
}

pub(crate) fn scope_fifo_in_worker<'scope, OP, R>(wt: &WorkerThread, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    let scope = ScopeFifo {
        base: Scope::new(&wt.registry, Some(wt)),
        fifos: (0..wt.registry.num_workers())
            .map(|_| FifoQueue::default())
            .collect(),
    };
    scope.base.complete(Some(wt), || op(&scope))
}

/// `in_place_scope_fifo` on `registry`'s pool: the body runs here, on the calling thread.
fn in_place_scope_fifo_in<'scope, OP, R>(registry: &Arc<Registry>, op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    WorkerThread::with_current(|owner| {
        let scope = ScopeFifo {
            base: Scope::new(registry, owner),
            fifos: (0..registry.num_workers())
                .map(|_| FifoQueue::default())
                .collect(),
        };
        scope.base.complete(owner, || op(&scope))
    })
}

impl<'scope> ScopeFifo<'scope> {
    /// Spawns a task that may borrow from outside the scope, in FIFO order relative to the
    /// other `spawn_fifo`s of the same worker into this scope: where [`Scope::spawn`]s of
    /// one worker run newest first, these run oldest first. Routed like `Scope::spawn`
    /// (origin: the spawning task's).
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
    /// let order = Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..5 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]);
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn spawn_fifo<F>(&self, body: F)
    where
        F: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.base.latch.increment();
        let me = ScopePtr(self as *const ScopeFifo<'scope>);
        let job = move || {
            // SAFETY: the scope waits for this job (its count) before it goes away.
            let scope = unsafe { me.as_ref() };
            if let Err(p) = unwind::halt_unwinding(|| body(scope)) {
                scope.base.job_panicked(p);
            }
            // SAFETY: the latch is alive: we still hold our count.
            unsafe { Latch::set(&scope.base.latch) };
        };
        self.base
            .registry
            .spawn_fifo(TaskOptions::new(), |w| &self.fifos[w], job);
    }

    /// Runs `body` once on every worker of the scope's pool, each with its
    /// [`BroadcastContext`](crate::BroadcastContext), without waiting (rayon's
    /// `ScopeFifo::spawn_broadcast`); the scope waits for all of them. As
    /// [`Scope::spawn_broadcast`].
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").num_threads(3).build()?;
    /// let runs = AtomicUsize::new(0);
    /// pool.scope_fifo(|s| s.spawn_broadcast(|_, _| {
    ///     runs.fetch_add(1, Ordering::Relaxed);
    /// }));
    /// assert_eq!(runs.into_inner(), 3);
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, crate::BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let n = self.base.registry.num_workers();
        let body = Arc::new(body);
        for index in 0..n {
            let body = Arc::clone(&body);
            self.base.latch.increment();
            let me = ScopePtr(self as *const ScopeFifo<'scope>);
            let job = move || {
                // SAFETY: the scope waits for this job (its count) before it goes away.
                let scope = unsafe { me.as_ref() };
                let ctx = crate::BroadcastContext::new(index, n);
                if let Err(p) = unwind::halt_unwinding(|| body(scope, ctx)) {
                    scope.base.job_panicked(p);
                }
                // SAFETY: the latch is alive: we still hold our count.
                unsafe { Latch::set(&scope.base.latch) };
            };
            self.base
                .registry
                .spawn(TaskOptions::new(), Target::Worker(index), job);
        }
    }
}

impl ThreadPool {
    /// Creates a scope whose spawned tasks may borrow from the caller and run in FIFO order
    /// per spawning worker ([`ScopeFifo::spawn_fifo`]); returns once all of them have
    /// finished. The first panic among them (or of `op`) resumes here. `op` runs on a worker
    /// of this pool, as for [`scope`](Self::scope).
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.registry
            .in_worker(|wt, _| scope_fifo_in_worker(wt, op))
    }
}

impl ThreadPool {
    /// [`scope_fifo`](Self::scope_fifo), but `op` runs on the *calling* thread (rayon's
    /// `in_place_scope_fifo`); its spawns go to this pool.
    ///
    /// ```
    /// use std::sync::Mutex;
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
    /// let order = Mutex::new(Vec::new());
    /// let caller = std::thread::current().id();
    /// let here = pool.in_place_scope_fifo(|s| {
    ///     for i in 0..3 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    ///     std::thread::current().id()
    /// });
    /// assert_eq!(here, caller);
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]);
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        in_place_scope_fifo_in(&self.registry, op)
    }
}

/// [`ThreadPool::in_place_scope_fifo`] on the current pool: the current worker's, or outside
/// every pool the global pool (built if needed). `op` runs on the calling thread.
///
/// ```
/// let mut v = vec![0; 4];
/// zonal_runtime::in_place_scope_fifo(|s| {
///     for (i, x) in v.iter_mut().enumerate() {
///         s.spawn_fifo(move |_| *x = i);
///     }
/// });
/// assert_eq!(v, [0, 1, 2, 3]);
/// ```
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    let registry = WorkerThread::with_current(|w| w.map(|w| Arc::clone(&w.registry)));
    match registry {
        Some(r) => in_place_scope_fifo_in(&r, op),
        None => in_place_scope_fifo_in(&crate::global::global_pool().registry, op),
    }
}

/// [`ThreadPool::scope_fifo`] on the current pool: the current worker's, or outside every
/// pool the global pool (built if needed).
///
/// ```
/// let mut v = vec![0; 8];
/// zonal_runtime::scope_fifo(|s| {
///     for (i, x) in v.iter_mut().enumerate() {
///         s.spawn_fifo(move |_| *x = i);
///     }
/// });
/// assert_eq!(v, [0, 1, 2, 3, 4, 5, 6, 7]);
/// ```
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    current_or_global(op, scope_fifo_in_worker, ThreadPool::scope_fifo)
}
