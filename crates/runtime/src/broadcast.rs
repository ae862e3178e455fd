//! `broadcast` and `spawn_broadcast` (rayon's): run an operation once on every worker of a
//! pool, waiting for the results or not.
//!
//! The operation is entered on a worker of the pool (as `install`), which opens a scope and
//! spawns one job per worker through the pinned route (`Target::Worker`: the worker's inbox,
//! which only that worker pops and no thief sees), then waits for them as a scope does
//! (working meanwhile, so it runs its own share from its inbox). Each job writes its result
//! to its worker's slot. The inbox is an existing queue: broadcast adds no queue of its own.

use std::marker::PhantomData;
use std::sync::Mutex;

use crate::global::current_or_global;
use crate::pool::ThreadPool;
use crate::registry::Registry;
use crate::route::Target;
use crate::scope::scope_in_worker;
use crate::task_meta::TaskOptions;
use crate::worker::WorkerThread;

/// Where a [`broadcast`](ThreadPool::broadcast) operation runs (rayon's
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
fn broadcast_in_worker<OP, R>(wt: &WorkerThread, op: &OP) -> Vec<R>
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

impl ThreadPool {
    /// Runs `op` once on every worker of the pool, each with its
    /// [`BroadcastContext`]; returns the results by worker index. The first panic among
    /// them resumes here, once all have finished. Each worker runs its share when it next
    /// looks for work: a worker busy with a long task delays the broadcast.
    ///
    /// ```
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let seen = pool.broadcast(|ctx| (ctx.index(), zonal_runtime::current_thread_index()));
    /// assert_eq!(seen.len(), 32);
    /// assert!(seen.iter().enumerate().all(|(i, &(idx, cur))| idx == i && cur == Some(i)));
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let op = &op;
        self.registry.in_worker(|wt, _| broadcast_in_worker(wt, op))
    }
}

/// [`ThreadPool::broadcast`] on the current pool: the current worker's, or outside every
/// pool the global pool (built if needed).
///
/// ```
/// let n = zonal_runtime::broadcast(|ctx| ctx.num_threads());
/// assert_eq!(n.len(), zonal_runtime::current_num_threads());
/// ```
pub fn broadcast<OP, R>(op: OP) -> Vec<R>
where
    OP: Fn(BroadcastContext<'_>) -> R + Sync,
    R: Send,
{
    current_or_global(
        &op,
        |w, op| broadcast_in_worker(w, op),
        |pool, op| pool.broadcast(op),
    )
}

/// Queues `op` once on every worker of `registry` through its inbox (`Target::Worker`), as
/// `'static` tasks the pool counts as pending; returns without waiting.
fn spawn_broadcast_in<OP>(registry: &Registry, op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    let n = registry.num_workers();
    let op = std::sync::Arc::new(op);
    for index in 0..n {
        let op = std::sync::Arc::clone(&op);
        registry.spawn_static(TaskOptions::new(), Target::Worker(index), move || {
            op(BroadcastContext {
                index,
                num_threads: n,
                marker: PhantomData,
            });
        });
    }
}

impl ThreadPool {
    /// Runs `op` once on every worker of the pool, asynchronously (rayon's
    /// `spawn_broadcast`): each worker runs its share when it next looks for work, and the
    /// call returns at once. A panic goes to the pool's panic handler, as a `spawn`'s.
    ///
    /// ```
    /// use std::sync::mpsc::channel;
    /// let pool = zonal_runtime::ThreadPoolBuilder::new().preset("s1").num_threads(4).build()?;
    /// let (tx, rx) = channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut seen: Vec<usize> = rx.iter().take(4).collect();
    /// seen.sort_unstable();
    /// assert_eq!(seen, [0, 1, 2, 3]);
    /// # Ok::<(), zonal_runtime::BuildError>(())
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        spawn_broadcast_in(&self.registry, op);
    }
}

/// [`ThreadPool::spawn_broadcast`] on the current pool: the current worker's, or outside
/// every pool the global pool (built if needed).
pub fn spawn_broadcast<OP>(op: OP)
where
    OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
{
    current_or_global(
        op,
        |w, op| spawn_broadcast_in(&w.registry, op),
        |pool, op| pool.spawn_broadcast(op),
    );
}
