//! rayon-core's public API (1.13) on Zonal's pool, for `[patch.crates-io]`.
//!
//! A dependency tree patched with this package (and, if it chooses, the `rayon` package
//! beside it) runs every `rayon_core::` call on Zonal: one pool for the whole process,
//! Zonal's global pool — the very one `zonal::join`, `zonal::spawn_on` and the metrics
//! reach — or the pools built with this crate's [`ThreadPoolBuilder`]. The README's "A
//! whole dependency tree on Zonal" has the lines to write.
//!
//! Every item of rayon-core is here, under its name and path. [`ThreadPool`],
//! [`ThreadPoolBuilder`], [`ThreadPoolBuildError`], [`Scope`], [`ScopeFifo`] and the
//! deprecated [`Configuration`] are this crate's own types, wrapping Zonal's: each has
//! rayon-core's inherent methods and no other, so a method that someone's extension trait
//! adds to rayon's type resolves to that trait here as it does on rayon (Zonal's own
//! `ThreadPool::spawn_async` takes a future; a trait's `spawn_async` taking a closure
//! would lose to it). The other items ([`BroadcastContext`], [`FnContext`],
//! [`ThreadBuilder`], [`Yield`] and the free functions) are Zonal's, which have exactly
//! rayon's methods.
//!
//! Zonal's extras stay reachable: [`AsZonal::as_zonal`] gives the Zonal pool or scope
//! under one of these (`pool.as_zonal().spawn_on(node, f)`, `pool.as_zonal().metrics()`),
//! and `From` converts pools and builders both ways, so a pool built with Zonal's
//! builder (a preset, a policy) can be handed to code that takes rayon's.
//!
//! ```
//! use rayon_core::AsZonal;
//!
//! let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
//! assert_eq!(pool.install(rayon_core::current_num_threads), 2);
//! // Zonal's side of the same pool.
//! assert_eq!(pool.as_zonal().num_workers(), 2);
//! let metrics = pool.as_zonal().metrics();
//! assert_eq!(metrics.workers.len(), 2);
//! # Ok::<(), rayon_core::ThreadPoolBuildError>(())
//! ```
//!
//! The pool's size: a builder given no [`num_threads`](ThreadPoolBuilder::num_threads),
//! and the global pool, take `ZONAL_NUM_THREADS` when it is a non-zero count, otherwise
//! `RAYON_NUM_THREADS` (then rayon-core's deprecated `RAYON_RS_NUM_CPUS`) when it is one,
//! otherwise one worker per allowed CPU. A value that is not a count is skipped, as rayon
//! skips it (`zonal::runtime::env_num_threads`).

use std::any::Any;
use std::error::Error;
use std::fmt;

/// rayon-core's items that are Zonal's own: the same methods as rayon's.
pub use zonal::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index, join,
    join_context, max_num_threads, spawn, spawn_broadcast, spawn_fifo, yield_local, yield_now,
    BroadcastContext, FnContext, ThreadBuilder, Yield,
};

use zonal::runtime::{CustomSpawn, DefaultSpawn, ThreadSpawn};

/// Zonal's type under one of rayon-core's: the way to Zonal's own methods (node
/// placement, metrics, async tasks, …) from a rayon-core pool or scope, without adding
/// them to rayon's type.
///
/// ```
/// use rayon_core::AsZonal;
///
/// let pool = rayon_core::ThreadPoolBuilder::new().num_threads(2).build()?;
/// let node = pool.as_zonal().worker_node(0);
/// pool.scope(|s| s.as_zonal().spawn_on(node, |_| assert!(zonal::runtime::current_node().is_some())));
/// # Ok::<(), rayon_core::ThreadPoolBuildError>(())
/// ```
pub trait AsZonal {
    /// The Zonal type wrapped.
    type Zonal: ?Sized;
    /// The Zonal value this one wraps.
    fn as_zonal(&self) -> &Self::Zonal;
}

// --- ThreadPool -------------------------------------------------------------------------

/// rayon-core's `ThreadPool`: a pool of Zonal's ([`zonal::ThreadPool`]) with rayon's
/// inherent methods only. Dropping it returns at once, as rayon's: the workers finish the
/// pending tasks, then exit.
#[repr(transparent)]
pub struct ThreadPool(zonal::ThreadPool);

impl ThreadPool {
    /// Wraps a reference to a Zonal pool.
    fn from_zonal(pool: &zonal::ThreadPool) -> &ThreadPool {
        // SAFETY: `ThreadPool` is `#[repr(transparent)]` over `zonal::ThreadPool`, so both
        // have the same layout, and the reference keeps the lifetime it came with.
        unsafe { &*(pool as *const zonal::ThreadPool as *const ThreadPool) }
    }

    /// rayon-core's deprecated constructor: [`Configuration::build`].
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    #[deprecated(note = "Use `ThreadPoolBuilder::build`")]
    #[allow(deprecated)]
    pub fn new(configuration: Configuration) -> Result<ThreadPool, Box<dyn Error>> {
        configuration.build()
    }

    /// Runs `op` on a worker of this pool and returns its result; parallel work inside it
    /// (`join`, `scope`, parallel iterators) runs on this pool.
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        self.0.install(op)
    }

    /// Runs `op` once on every worker of this pool; the results in worker order.
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        self.0.broadcast(op)
    }

    /// The number of workers of this pool.
    pub fn current_num_threads(&self) -> usize {
        self.0.current_num_threads()
    }

    /// The current thread's worker index in this pool, if it is one of its workers.
    pub fn current_thread_index(&self) -> Option<usize> {
        self.0.current_thread_index()
    }

    /// Whether the current thread's worker has tasks queued; `None` if it is no worker of
    /// this pool.
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        self.0.current_thread_has_pending_tasks()
    }

    /// [`join`] in this pool.
    pub fn join<A, B, RA, RB>(&self, oper_a: A, oper_b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        self.0.join(oper_a, oper_b)
    }

    /// [`scope`] in this pool.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        self.0.scope(|s| op(Scope::from_zonal(s)))
    }

    /// [`scope_fifo`] in this pool.
    pub fn scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
        R: Send,
    {
        self.0.scope_fifo(|s| op(ScopeFifo::from_zonal(s)))
    }

    /// [`in_place_scope`] in this pool: `op` runs on the calling thread, its spawns on the
    /// pool.
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        self.0.in_place_scope(|s| op(Scope::from_zonal(s)))
    }

    /// [`in_place_scope_fifo`] in this pool.
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        self.0.in_place_scope_fifo(|s| op(ScopeFifo::from_zonal(s)))
    }

    /// Runs `op` on this pool, detached.
    pub fn spawn<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.0.spawn(op)
    }

    /// Runs `op` on this pool, detached, in FIFO order among the spawns of one worker.
    pub fn spawn_fifo<OP>(&self, op: OP)
    where
        OP: FnOnce() + Send + 'static,
    {
        self.0.spawn_fifo(op)
    }

    /// Runs `op` once on every worker of this pool, detached.
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        self.0.spawn_broadcast(op)
    }

    /// On a worker of this pool: runs one pending task if there is one. `None` elsewhere.
    pub fn yield_now(&self) -> Option<Yield> {
        self.0.yield_now()
    }

    /// On a worker of this pool: runs one task of its own queue if there is one. `None`
    /// elsewhere.
    pub fn yield_local(&self) -> Option<Yield> {
        self.0.yield_local()
    }
}

impl fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ThreadPool").field(&self.0).finish()
    }
}

impl AsZonal for ThreadPool {
    type Zonal = zonal::ThreadPool;
    fn as_zonal(&self) -> &zonal::ThreadPool {
        &self.0
    }
}

impl From<zonal::ThreadPool> for ThreadPool {
    /// A Zonal pool (built with Zonal's builder: a preset, a policy, …) as rayon-core's.
    fn from(pool: zonal::ThreadPool) -> Self {
        ThreadPool(pool)
    }
}

impl From<ThreadPool> for zonal::ThreadPool {
    /// The Zonal pool under rayon-core's.
    fn from(pool: ThreadPool) -> Self {
        pool.0
    }
}

// --- Scope, ScopeFifo -------------------------------------------------------------------

/// rayon-core's `Scope`: Zonal's ([`zonal::Scope`]) with rayon's inherent methods only.
#[repr(transparent)]
pub struct Scope<'scope>(zonal::Scope<'scope>);

impl<'scope> Scope<'scope> {
    fn from_zonal<'a>(scope: &'a zonal::Scope<'scope>) -> &'a Scope<'scope> {
        // SAFETY: `Scope` is `#[repr(transparent)]` over `zonal::Scope`, so both have the
        // same layout; the lifetimes (`'a` of the reference, `'scope`, invariant in both)
        // are kept as they came.
        unsafe { &*(scope as *const zonal::Scope<'scope> as *const Scope<'scope>) }
    }

    /// Spawns `body` into this scope: the scope returns once it (and every task spawned
    /// into the scope) has run. `body` may borrow what outlives the scope.
    pub fn spawn<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&Scope<'scope>) + Send + 'scope,
    {
        self.0.spawn(move |s| body(Scope::from_zonal(s)))
    }

    /// Spawns `body` into this scope once per worker of the pool.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&Scope<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.0
            .spawn_broadcast(move |s, ctx| body(Scope::from_zonal(s), ctx))
    }
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Scope").field(&self.0).finish()
    }
}

impl<'scope> AsZonal for Scope<'scope> {
    type Zonal = zonal::Scope<'scope>;
    fn as_zonal(&self) -> &zonal::Scope<'scope> {
        &self.0
    }
}

/// rayon-core's `ScopeFifo`: Zonal's ([`zonal::ScopeFifo`]) with rayon's inherent methods
/// only.
#[repr(transparent)]
pub struct ScopeFifo<'scope>(zonal::ScopeFifo<'scope>);

impl<'scope> ScopeFifo<'scope> {
    fn from_zonal<'a>(scope: &'a zonal::ScopeFifo<'scope>) -> &'a ScopeFifo<'scope> {
        // SAFETY: `ScopeFifo` is `#[repr(transparent)]` over `zonal::ScopeFifo`, so both
        // have the same layout; the lifetimes are kept as they came.
        unsafe { &*(scope as *const zonal::ScopeFifo<'scope> as *const ScopeFifo<'scope>) }
    }

    /// Spawns `body` into this scope, in FIFO order among the spawns of one worker.
    pub fn spawn_fifo<BODY>(&self, body: BODY)
    where
        BODY: FnOnce(&ScopeFifo<'scope>) + Send + 'scope,
    {
        self.0.spawn_fifo(move |s| body(ScopeFifo::from_zonal(s)))
    }

    /// Spawns `body` into this scope once per worker of the pool.
    pub fn spawn_broadcast<BODY>(&self, body: BODY)
    where
        BODY: Fn(&ScopeFifo<'scope>, BroadcastContext<'_>) + Send + Sync + 'scope,
    {
        self.0
            .spawn_broadcast(move |s, ctx| body(ScopeFifo::from_zonal(s), ctx))
    }
}

impl fmt::Debug for ScopeFifo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ScopeFifo").field(&self.0).finish()
    }
}

impl<'scope> AsZonal for ScopeFifo<'scope> {
    type Zonal = zonal::ScopeFifo<'scope>;
    fn as_zonal(&self) -> &zonal::ScopeFifo<'scope> {
        &self.0
    }
}

// --- the free scopes --------------------------------------------------------------------

/// Runs `op` with a [`Scope`] on the current pool (the global pool outside every pool)
/// and returns once every task spawned into the scope has run.
pub fn scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R + Send,
    R: Send,
{
    zonal::scope(|s| op(Scope::from_zonal(s)))
}

/// [`scope`] with a [`ScopeFifo`].
pub fn scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R + Send,
    R: Send,
{
    zonal::scope_fifo(|s| op(ScopeFifo::from_zonal(s)))
}

/// [`scope`] with `op` run on the calling thread, its spawns on the current pool.
pub fn in_place_scope<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&Scope<'scope>) -> R,
{
    zonal::in_place_scope(|s| op(Scope::from_zonal(s)))
}

/// [`in_place_scope`] with a [`ScopeFifo`].
pub fn in_place_scope_fifo<'scope, OP, R>(op: OP) -> R
where
    OP: FnOnce(&ScopeFifo<'scope>) -> R,
{
    zonal::in_place_scope_fifo(|s| op(ScopeFifo::from_zonal(s)))
}

// --- ThreadPoolBuilder ------------------------------------------------------------------

/// rayon-core's `ThreadPoolBuilder`: Zonal's ([`zonal::ThreadPoolBuilder`]) with rayon's
/// inherent methods only. Zonal's own options (a topology, a policy, pinning): build
/// Zonal's builder and convert it (`ThreadPoolBuilder::from(zonal_builder)`).
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    inner: zonal::ThreadPoolBuilder<S>,
    /// Whether a worker count was chosen (a non-zero `num_threads`, or a Zonal builder
    /// converted): otherwise the environment's count applies, as in rayon.
    count_given: bool,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ThreadPoolBuilder {
    /// A builder with the defaults: one worker per allowed CPU (or the environment's
    /// count, see the crate docs), Zonal's default policy.
    pub fn new() -> Self {
        ThreadPoolBuilder {
            inner: zonal::ThreadPoolBuilder::new(),
            count_given: false,
        }
    }

    /// Builds a pool whose workers are scoped threads of the calling thread, each started
    /// by `wrapper` (which must call [`ThreadBuilder::run`]), runs `with_pool` with it,
    /// then waits for the workers to exit.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        self.sized()
            .build_scoped(wrapper, |pool| with_pool(ThreadPool::from_zonal(pool)))
            .map_err(ThreadPoolBuildError)
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Builds the pool.
    ///
    /// # Errors
    /// A [`ThreadPoolBuildError`] when the pool cannot be built: a thread cannot be
    /// spawned, the calling thread already a worker with
    /// [`use_current_thread`](Self::use_current_thread), the machine's topology
    /// unreadable ([`AsZonal::as_zonal`] on the error gives Zonal's [`zonal::BuildError`]).
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        self.sized()
            .build()
            .map(ThreadPool)
            .map_err(ThreadPoolBuildError)
    }

    /// Builds the pool and installs it as the global pool (Zonal's: the one `zonal::`'s
    /// free functions use too).
    ///
    /// # Errors
    /// When the global pool exists already (built by an earlier call, or lazily by a free
    /// function), or as [`build`](Self::build).
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        // Zonal's `build_global` applies the environment's count itself.
        self.inner.build_global().map_err(ThreadPoolBuildError)
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// Zonal's builder, with the environment's worker count where none was given.
    fn sized(self) -> zonal::ThreadPoolBuilder<S> {
        match (self.count_given, zonal::runtime::env_num_threads()) {
            (false, Some(n)) => self.inner.num_threads(n),
            _ => self.inner,
        }
    }

    fn map(
        self,
        f: impl FnOnce(zonal::ThreadPoolBuilder<S>) -> zonal::ThreadPoolBuilder<S>,
    ) -> Self {
        ThreadPoolBuilder {
            inner: f(self.inner),
            count_given: self.count_given,
        }
    }

    /// Starts the worker threads with `spawn` (called once per worker with a
    /// [`ThreadBuilder`], it must start a thread that calls [`ThreadBuilder::run`]).
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> std::io::Result<()>,
    {
        ThreadPoolBuilder {
            inner: self.inner.spawn_handler(spawn),
            count_given: self.count_given,
        }
    }

    /// Names the worker threads: `closure` is called with each worker's index.
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.map(|b| b.thread_name(closure))
    }

    /// The number of workers; `0` means the default (the environment's count, otherwise
    /// one per allowed CPU). A count above [`max_num_threads`] is reduced to it, as in
    /// rayon (Zonal's own builder refuses it).
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        let num_threads = num_threads.min(max_num_threads());
        self.count_given = num_threads > 0;
        self.map(|b| b.num_threads(num_threads))
    }

    /// Makes the calling thread worker 0 of the pool.
    pub fn use_current_thread(self) -> Self {
        self.map(|b| b.use_current_thread())
    }

    /// Receives the panics of spawned tasks.
    pub fn panic_handler<H>(self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.map(|b| b.panic_handler(panic_handler))
    }

    /// Stack size of the worker threads, bytes.
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.map(|b| b.stack_size(stack_size))
    }

    /// rayon's deprecated `breadth_first`: the pool's `spawn` behaves as `spawn_fifo`.
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    pub fn breadth_first(self) -> Self {
        #[allow(deprecated)]
        self.map(|b| b.breadth_first())
    }

    /// Called on each worker thread when it starts, with its index.
    pub fn start_handler<H>(self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.start_handler(start_handler))
    }

    /// Called on each worker thread before it exits, with its index.
    pub fn exit_handler<H>(self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.exit_handler(exit_handler))
    }
}

impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ThreadPoolBuilder")
            .field(&self.inner)
            .finish()
    }
}

impl<S> From<zonal::ThreadPoolBuilder<S>> for ThreadPoolBuilder<S> {
    /// Zonal's builder (with Zonal's options: a topology, a policy, pinning, …) as
    /// rayon-core's. Its worker count is Zonal's choice: the environment's count applies
    /// only to the global pool, as with Zonal's own builder.
    fn from(inner: zonal::ThreadPoolBuilder<S>) -> Self {
        ThreadPoolBuilder {
            inner,
            count_given: true,
        }
    }
}

impl<S> From<ThreadPoolBuilder<S>> for zonal::ThreadPoolBuilder<S> {
    /// Zonal's builder under rayon-core's (the environment's count not applied).
    fn from(builder: ThreadPoolBuilder<S>) -> Self {
        builder.inner
    }
}

// --- ThreadPoolBuildError ---------------------------------------------------------------

/// rayon-core's error when a pool cannot be built: Zonal's [`zonal::BuildError`] (through
/// [`AsZonal::as_zonal`]), with rayon's trait implementations only.
pub struct ThreadPoolBuildError(zonal::BuildError);

impl fmt::Debug for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ThreadPoolBuildError")
            .field(&self.0)
            .finish()
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl AsZonal for ThreadPoolBuildError {
    type Zonal = zonal::BuildError;
    fn as_zonal(&self) -> &zonal::BuildError {
        &self.0
    }
}

impl From<ThreadPoolBuildError> for zonal::BuildError {
    fn from(e: ThreadPoolBuildError) -> Self {
        e.0
    }
}

// --- the deprecated Configuration -------------------------------------------------------

/// rayon-core's deprecated builder: each method forwards to [`ThreadPoolBuilder`]'s.
#[deprecated(note = "Use `ThreadPoolBuilder`")]
#[derive(Debug, Default)]
pub struct Configuration {
    builder: ThreadPoolBuilder,
}

#[allow(deprecated)]
impl Configuration {
    /// A configuration with the defaults.
    pub fn new() -> Configuration {
        Configuration::default()
    }

    /// Builds a pool.
    ///
    /// # Errors
    /// As [`ThreadPoolBuilder::build`], boxed.
    pub fn build(self) -> Result<ThreadPool, Box<dyn Error + 'static>> {
        self.builder.build().map_err(Box::from)
    }

    /// [`ThreadPoolBuilder::thread_name`].
    pub fn thread_name<F>(self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.map(|b| b.thread_name(closure))
    }

    /// [`ThreadPoolBuilder::num_threads`].
    pub fn num_threads(self, num_threads: usize) -> Configuration {
        self.map(|b| b.num_threads(num_threads))
    }

    /// [`ThreadPoolBuilder::panic_handler`].
    pub fn panic_handler<H>(self, panic_handler: H) -> Configuration
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.map(|b| b.panic_handler(panic_handler))
    }

    /// [`ThreadPoolBuilder::stack_size`].
    pub fn stack_size(self, stack_size: usize) -> Self {
        self.map(|b| b.stack_size(stack_size))
    }

    /// [`ThreadPoolBuilder::breadth_first`].
    pub fn breadth_first(self) -> Self {
        self.map(|b| b.breadth_first())
    }

    /// [`ThreadPoolBuilder::start_handler`].
    pub fn start_handler<H>(self, start_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.start_handler(start_handler))
    }

    /// [`ThreadPoolBuilder::exit_handler`].
    pub fn exit_handler<H>(self, exit_handler: H) -> Configuration
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.map(|b| b.exit_handler(exit_handler))
    }

    fn map(self, f: impl FnOnce(ThreadPoolBuilder) -> ThreadPoolBuilder) -> Self {
        Configuration {
            builder: f(self.builder),
        }
    }
}

/// rayon-core's deprecated `initialize`: [`ThreadPoolBuilder::build_global`].
///
/// # Errors
/// As [`ThreadPoolBuilder::build_global`], boxed.
#[deprecated(note = "use `ThreadPoolBuilder::build_global`")]
#[allow(deprecated)]
pub fn initialize(config: Configuration) -> Result<(), Box<dyn Error>> {
    config.builder.build_global().map_err(Box::from)
}
