//! `scope_fifo` and `in_place_scope_fifo` (rayon's): a scope whose spawns run in FIFO order
//! per spawning worker.
//!
//! A [`ScopeFifo`] is a [`Scope`] (its latch, its panic, its pool) plus one [`FifoQueue`]
//! per worker of the pool; `spawn_fifo` from a worker pushes the job on that worker's queue
//! and a proxy on its deque (`fifo.rs`). The scope waits for its jobs as any scope does
//! (its latch counts the jobs, not the proxies), so every queue is empty when it returns.

use std::sync::Arc;

use crate::latch::Latch;
use crate::queues::FifoQueue;
use crate::registry::Registry;
use crate::route::Target;
use crate::scope::{Scope, ScopePtr};
use crate::task_meta::TaskOptions;
use crate::unwind;
use crate::worker::WorkerThread;

/// A scope whose tasks run in FIFO order per spawning worker; see
/// [`ThreadPool::scope_fifo`](crate::ThreadPool::scope_fifo).
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
pub(crate) fn in_place_scope_fifo_in<'scope, OP, R>(registry: &Arc<Registry>, op: OP) -> R
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
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::Mutex;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
    /// let order = Mutex::new(Vec::new());
    /// pool.scope_fifo(|s| {
    ///     for i in 0..5 {
    ///         let order = &order;
    ///         s.spawn_fifo(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2, 3, 4]);
    /// # Ok::<(), zonal::BuildError>(())
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
        crate::fifo::spawn_fifo(
            &self.base.registry,
            TaskOptions::new(),
            |w| &self.fifos[w],
            job,
        );
    }

    /// Runs `body` once on every worker of the scope's pool, each with its
    /// [`BroadcastContext`](crate::BroadcastContext), without waiting (rayon's
    /// `ScopeFifo::spawn_broadcast`); the scope waits for all of them. As
    /// [`Scope::spawn_broadcast`].
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(3).build()?;
    /// let runs = AtomicUsize::new(0);
    /// pool.scope_fifo(|s| s.spawn_broadcast(|_, _| {
    ///     runs.fetch_add(1, Ordering::Relaxed);
    /// }));
    /// assert_eq!(runs.into_inner(), 3);
    /// # Ok::<(), zonal::BuildError>(())
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
            crate::route::spawn(
                &self.base.registry,
                TaskOptions::new(),
                Target::Worker(index),
                job,
            );
        }
    }
}
