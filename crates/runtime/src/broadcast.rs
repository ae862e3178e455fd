//! `broadcast` and `spawn_broadcast` (rayon's): run an operation once on every worker of a
//! pool, waiting for the results or not.
//!
//! The operation is entered on a worker of the pool (as `install`), which opens a scope and
//! spawns one job per worker through the pinned route (`Target::Worker`: the worker's inbox,
//! which only that worker pops and no thief sees), then waits for them as a scope does
//! (working meanwhile, so it runs its own share from its inbox). Each job writes its result
//! to its worker's slot. The inbox is an existing queue: broadcast adds no queue of its own.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use crate::registry::Registry;
use crate::route::Target;
use crate::scope::{scope_in_worker, Scope};
use crate::task_meta::TaskOptions;
use crate::worker::WorkerThread;

/// Where a [`broadcast`](crate::ThreadPool::broadcast) operation runs (rayon's
/// `BroadcastContext`).
#[derive(Debug)]
pub struct BroadcastContext<'a> {
    index: usize,
    num_threads: usize,
    /// Borrowed for the call, as rayon's (not `Send`: it describes this thread).
    marker: PhantomData<&'a *const ()>,
}

impl BroadcastContext<'_> {
    pub(crate) fn new(index: usize, num_threads: usize) -> Self {
        Self {
            index,
            num_threads,
            marker: PhantomData,
        }
    }

    /// The index of the worker running the operation (its
    /// [`current_thread_index`](crate::current_thread_index)).
    #[must_use]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The number of workers the operation runs on: the pool's.
    #[must_use]
    pub fn num_threads(&self) -> usize {
        self.num_threads
    }
}

/// Runs `op` once on every worker of `registry`, from its worker `wt`; the results by
/// worker index.
pub(crate) fn broadcast_in_worker<OP, R>(wt: &WorkerThread, op: &OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    let registry: &Registry = &wt.registry;
    let n = registry.num_workers();
    let slots: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    scope_in_worker(wt, |s| {
        for (index, slot) in slots.iter().enumerate() {
            s.spawn_pinned(index, move |_| {
                let ctx = BroadcastContext {
                    index,
                    num_threads: n,
                    marker: PhantomData,
                };
                let r = op(ctx);
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every worker ran the broadcast (a panic would have resumed)")
        })
        .collect()
}

/// Queues `op` once on every worker of `registry` through its inbox (`Target::Worker`), as
/// `'static` tasks the pool counts as pending; returns without waiting.
pub(crate) fn spawn_broadcast_in<OP>(registry: &Registry, op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let n = registry.num_workers();
    let op = std::sync::Arc::new(op);
    for index in 0..n {
        let op = std::sync::Arc::clone(&op);
        crate::spawn::spawn_static(
            registry,
            TaskOptions::new(),
            Target::Worker(index),
            move || {
                op(BroadcastContext {
                    index,
                    num_threads: n,
                    marker: PhantomData,
                });
            },
        );
    }
}

/// Scopes' broadcasts (here, not in `scope.rs`: a scope knows nothing of broadcasts).
impl<'scope> Scope<'scope> {
    /// Runs `body` once on every worker of the scope's pool, each with its
    /// [`BroadcastContext`](crate::BroadcastContext), without waiting (rayon's
    /// `Scope::spawn_broadcast`); the scope waits for all of them. Each share is queued in
    /// its worker's inbox (never stolen) and runs when that worker next looks for work.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(4).build()?;
    /// let runs = AtomicUsize::new(0);
    /// pool.scope(|s| {
    ///     s.spawn_broadcast(|_, ctx| {
    ///         assert_eq!(zonal::current_thread_index(), Some(ctx.index()));
    ///         runs.fetch_add(1, Ordering::Relaxed);
    ///     })
    /// });
    /// assert_eq!(runs.into_inner(), 4);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, crate::BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        let n = self.registry.num_workers();
        let body = Arc::new(body);
        for index in 0..n {
            let body = Arc::clone(&body);
            self.spawn_pinned(index, move |s| {
                body(s, crate::BroadcastContext::new(index, n));
            });
        }
    }
}
