//! rayon's free functions ([`join`], [`scope`], [`spawn`], [`broadcast`], …): each runs on
//! the current thread's worker (of any pool), and on any other thread on the global pool
//! (`global.rs`, built if needed). Above the features and the pool: a feature file works
//! on the registry it is given, never on "the current or global pool".

use std::future::Future;
use std::ops::Range;
use std::sync::Arc;

use zonal_topology::NodeId;

use crate::async_task::JoinHandle;
use crate::broadcast::{broadcast_in_worker, spawn_broadcast_in, BroadcastContext};
use crate::global::current_or_global;
use crate::join::{join_context_in_worker, join_in_worker, FnContext};
use crate::pool::ThreadPool;
use crate::route::Target;
use crate::scope::{in_place_scope_in, scope_in_worker, Scope};
use crate::scope_fifo::{in_place_scope_fifo_in, scope_fifo_in_worker, ScopeFifo};
use crate::task_meta::TaskOptions;
use crate::worker::WorkerThread;

/// Runs `a` and `b`, potentially in parallel, on the pool of the current worker; outside
/// every pool, on the global pool (built if needed; the calling thread blocks until both
/// are done). A panic in either resumes here (after both have finished).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// fn fib(n: u64) -> u64 {
///     if n < 2 { return n; }
///     let (a, b) = zonal::join(|| fib(n - 1), || fib(n - 2));
///     a + b
/// }
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// assert_eq!(pool.install(|| fib(20)), 6765);
/// assert_eq!(fib(10), 55); // outside a pool: on the global pool
/// let (a, _) = zonal::join(zonal::current_thread_index, || ());
/// assert!(a.is_some());
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    crate::global::current_or_global(
        (a, b),
        |w, (a, b)| join_in_worker(w, a, b),
        |pool, (a, b)| pool.join(a, b),
    )
}

/// [`join`], with each closure told whether it was migrated ([`FnContext::migrated`],
/// rayon's `join_context`): the first closure runs on the calling thread when it is a
/// worker (migrated only when the call came from outside every pool and was injected into
/// the global pool), the second one is migrated when another worker stole it.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let (a, b) = pool.install(|| {
///     zonal::join_context(|ctx| ctx.migrated(), |ctx| ctx.migrated())
/// });
/// assert!(!a); // on the worker that called it
/// let _stolen_or_not = b;
/// let (a, _) = zonal::join_context(|ctx| ctx.migrated(), |_| ());
/// assert!(a); // injected into the global pool from this thread
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn join_context<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce(FnContext) -> RA + Send,
    B: FnOnce(FnContext) -> RB + Send,
    RA: Send,
    RB: Send,
{
    crate::global::current_or_global(
        (a, b),
        |w, (a, b)| join_context_in_worker(w, false, a, b),
        |pool, (a, b)| {
            crate::enter::in_worker(&pool.registry, |w, injected| {
                join_context_in_worker(w, injected, a, b)
            })
        },
    )
}

/// Spawns a `'static` task on the current pool: the current worker's, or outside every
/// pool the global pool (built if needed). See [`ThreadPool::spawn`].
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let (tx, rx) = std::sync::mpsc::channel();
/// zonal::spawn(move || tx.send(zonal::current_thread_index()).unwrap());
/// assert!(rx.recv().unwrap().is_some()); // it ran on a worker of the global pool
/// ```
pub fn spawn<F: FnOnce() + Send + 'static>(f: F) {
    current_or_global(
        f,
        |w, f| {
            if w.registry.breadth_first {
                crate::spawn::spawn_static_fifo(&w.registry, f);
            } else {
                crate::spawn::spawn_static(&w.registry, TaskOptions::new(), Target::Here, f);
            }
        },
        ThreadPool::spawn,
    );
}

/// Spawns with [`TaskOptions`] on the current pool (the global pool outside every pool);
/// see [`ThreadPool::spawn_with`].
///
/// # Panics
/// If the options name an origin outside the pool's topology.
pub fn spawn_with<F: FnOnce() + Send + 'static>(opts: TaskOptions, f: F) {
    current_or_global(
        f,
        |w, f| {
            if let Err(e) = w.registry.check_options(&opts) {
                panic!("{e}");
            }
            crate::spawn::spawn_static(&w.registry, opts, Target::Here, f);
        },
        |pool, f| pool.spawn_with(opts, f),
    );
}

/// A scope on the current pool: the current worker's, or outside every pool the global
/// pool (built if needed), whose worker runs `op`. See [`ThreadPool::scope`].
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let n = pool.install(|| {
///     let mut n = [0; 3];
///     zonal::scope(|s| for x in n.iter_mut() { s.spawn(move |_| *x += 1) });
///     n
/// });
/// assert_eq!(n, [1, 1, 1]);
/// // Outside a pool: on the global pool.
/// let on_worker = zonal::scope(|_| zonal::current_thread_index().is_some());
/// assert!(on_worker);
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    current_or_global(op, scope_in_worker, ThreadPool::scope)
}

/// The number of workers of the current thread's pool; outside every pool, the global
/// pool's (building it if needed, as rayon).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// assert_eq!(pool.install(zonal::current_num_threads), pool.num_workers());
/// assert!(zonal::current_num_threads() >= 1);
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[must_use]
pub fn current_num_threads() -> usize {
    current_or_global(
        (),
        |w, ()| w.registry.num_workers(),
        |pool, ()| pool.num_workers(),
    )
}

/// [`ThreadPool::spawn_fifo`] on the current pool: the current worker's, or outside every
/// pool the global pool (built if needed).
pub fn spawn_fifo<F: FnOnce() + Send + 'static>(f: F) {
    current_or_global(
        f,
        |w, f| crate::spawn::spawn_static_fifo(&w.registry, f),
        ThreadPool::spawn_fifo,
    );
}

/// Spawns a future on the current pool — the current worker's, or outside every pool the
/// global pool (built if needed) — and returns its [`JoinHandle`]. See
/// [`ThreadPool::spawn_async`].
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let h = zonal::spawn_async(async { 1 + 1 });
/// assert_eq!(h.join().unwrap(), 2);
/// ```
pub fn spawn_async<F>(fut: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    current_or_global(
        fut,
        |w, fut| crate::async_task::spawn_async(&w.registry, TaskOptions::new(), Target::Here, fut),
        |pool, fut| pool.spawn_async(fut),
    )
}

/// [`ThreadPool::broadcast`] on the current pool: the current worker's, or outside every
/// pool the global pool (built if needed).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let n = zonal::broadcast(|ctx| ctx.num_threads());
/// assert_eq!(n.len(), zonal::current_num_threads());
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

/// [`ThreadPool::in_place_scope_fifo`] on the current pool: the current worker's, or outside
/// every pool the global pool (built if needed). `op` runs on the calling thread.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let mut v = vec![0; 4];
/// zonal::in_place_scope_fifo(|s| {
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
/// # use zonal_runtime::doc_facade as zonal;
/// let mut v = vec![0; 8];
/// zonal::scope_fifo(|s| {
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

/// Creates a scope whose spawned tasks may borrow from the caller, running its body `op`
/// on the *current* thread (rayon's `in_place_scope`); returns once all the spawned tasks
/// have finished. Spawns go to the current pool on one of its workers, and to the global
/// pool (built if needed) on any other thread. The first panic among the tasks (or of
/// `op`) resumes here. `op` need not be `Send`: it never leaves this thread.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let caller = std::thread::current().id();
/// let mut v = vec![0; 4];
/// let body_thread = zonal::in_place_scope(|s| {
///     for (i, x) in v.iter_mut().enumerate() {
///         s.spawn(move |_| *x = i * 10);
///     }
///     std::thread::current().id()
/// });
/// assert_eq!(body_thread, caller);
/// assert_eq!(v, [0, 10, 20, 30]);
/// ```
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    let registry = WorkerThread::with_current(|w| w.map(|w| Arc::clone(&w.registry)));
    match registry {
        Some(r) => in_place_scope_in(&r, op),
        None => in_place_scope_in(&crate::global::global_pool().registry, op),
    }
}

/// How the current pool cuts `range` by node ([`ThreadPool::node_partition`]): on a worker,
/// its pool's partition; on any other thread, the global pool's (built if needed).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let parts = pool.install(|| zonal::runtime::current_node_partition(0..1600));
/// assert_eq!(parts, pool.node_partition(0..1600));
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[must_use]
pub fn current_node_partition(range: Range<usize>) -> Vec<(NodeId, Range<usize>)> {
    crate::global::current_or_global(
        range,
        |w, range| crate::parallel::node_partition(&w.registry, range),
        ThreadPool::node_partition,
    )
}
