//! [`ThreadPool`]: the handle users hold.

use std::future::Future;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use zonal_policy::{Policy, PolicyConfig, PolicyError};
use zonal_topology::{NodeId, NodeKind, Topology};

use crate::balance::{self, PassReport};

use crate::async_task::{CallOnce, JoinHandle};
use crate::broadcast::{broadcast_in_worker, spawn_broadcast_in, BroadcastContext};
use crate::error::SpawnError;
use crate::handle::MetricsHandle;
use crate::metrics::{PoolFacts, PoolMetrics};
use crate::node_workers::NodeWorkers;
use crate::parallel::{split, SendPtr};
use crate::registry::Registry;
use crate::route::Target;
use crate::scope::{in_place_scope_in, scope_in_worker, Scope};
use crate::scope_fifo::{in_place_scope_fifo_in, scope_fifo_in_worker, ScopeFifo};
use crate::task_meta::{TaskInfo, TaskOptions};
use crate::thread_builder::Exits;
use crate::worker::WorkerThread;
use crate::yield_now::Yield;

mod configuration;
#[allow(deprecated)]
pub use configuration::{initialize, Configuration};

/// A NUMA-aware work-stealing pool.
///
/// Dropping it terminates it and returns at once, as rayon's: the workers run every task
/// still pending (and what those spawn), then exit on their own; async tasks that nobody
/// can wake any more are cancelled at the drop (`async_task/mod.rs`, "Shutdown"). To wait
/// for all of that — every pending task run, every worker thread gone, every exit handler
/// called —, end the pool with [`shutdown_and_wait`](Self::shutdown_and_wait) instead.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let (a, b) = pool.join(|| 1 + 1, || 2 + 2);
/// assert_eq!((a, b), (2, 4));
/// # Ok::<(), zonal::BuildError>(())
/// ```
pub struct ThreadPool {
    pub(crate) registry: Arc<Registry>,
    /// The worker threads that have not exited, however they were spawned
    /// (`thread_builder.rs`).
    exits: Arc<Exits>,
    layout: Layout,
    /// Set by the first [`terminate`](Self::terminate).
    terminated: bool,
}

/// Where a pool's workers run, as the builder decided and the build found.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) pinning: Pinning,
    pub(crate) is_virtual: bool,
    /// Workers bound to no CPU (those whose pinning failed included).
    pub(crate) unpinned_workers: usize,
    /// Workers beyond one per CPU (`num_threads`), on virtual CPUs.
    pub(crate) extra_workers: usize,
    /// The topology's kind (discovered, fallback, virtual) and the pinning fallback, as every
    /// snapshot reports them.
    pub(crate) facts: Arc<PoolFacts>,
}

impl std::fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadPool")
            .field("workers", &self.registry.num_workers())
            .field("policy", &self.registry.policy.name())
            .field("pinning", &self.layout.pinning)
            .finish_non_exhaustive()
    }
}

impl ThreadPool {
    /// The pool's registry, for unit tests of the runtime's internals.
    #[cfg(test)]
    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    pub(crate) fn from_parts(registry: Arc<Registry>, exits: Arc<Exits>, layout: Layout) -> Self {
        Self {
            registry,
            exits,
            layout,
            terminated: false,
        }
    }

    /// Calls `f` with the current thread's worker if it is one of this pool's.
    pub(crate) fn with_worker<R>(&self, f: impl FnOnce(Option<&WorkerThread>) -> R) -> R {
        WorkerThread::with_current_in(&self.registry, f)
    }

    /// Runs `op` on a worker of this pool and returns its result; from one of its workers,
    /// runs it in place. A panic in `op` resumes here.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// assert!(pool.install(|| pool.current_worker_index()).is_some());
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn install<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce() -> R + Send,
        R: Send,
    {
        crate::enter::in_worker(&self.registry, |_, _| op())
    }

    /// Runs `a` and `b`, potentially in parallel; panics resume here once both are done.
    pub fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        crate::enter::in_worker(&self.registry, |wt, _| {
            crate::join::join_in_worker(wt, a, b)
        })
    }

    /// Creates a scope whose spawned tasks may borrow from the caller; returns once all of
    /// them have finished. The first panic among them (or of `op`) resumes here.
    pub fn scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R + Send,
        R: Send,
    {
        crate::enter::in_worker(&self.registry, |wt, _| scope_in_worker(wt, op))
    }

    /// A scope whose body `op` runs on the *current* thread, even outside the pool (rayon's
    /// `in_place_scope`); its spawns go to this pool, and the call returns once all of them
    /// have finished. The first panic among them (or of `op`) resumes here.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let caller = std::thread::current().id();
    /// let mut v = [0; 3];
    /// pool.in_place_scope(|s| {
    ///     assert_eq!(std::thread::current().id(), caller);
    ///     for x in &mut v {
    ///         s.spawn(|_| *x = zonal::current_thread_index().map_or(0, |_| 1));
    ///     }
    /// });
    /// assert_eq!(v, [1, 1, 1]);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn in_place_scope<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&Scope<'scope>) -> R,
    {
        in_place_scope_in(&self.registry, op)
    }

    /// Spawns a `'static` task. From a worker of this pool it is a child of the task running
    /// there and inherits its origin; from outside the pool it is rooted on the next node
    /// with workers, round-robin (queued on that node's injector). A panic goes to the panic
    /// handler.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::mpsc;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let (tx, rx) = mpsc::channel();
    /// pool.spawn(move || tx.send(7).unwrap());
    /// assert_eq!(rx.recv().unwrap(), 7);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn<F: FnOnce() + Send + 'static>(&self, f: F) {
        if self.registry.breadth_first {
            crate::spawn::spawn_static_fifo(&self.registry, f);
        } else {
            self.spawn_with(TaskOptions::new(), f);
        }
    }

    /// Spawns with explicit [`TaskOptions`]. With an origin and from outside the pool, the
    /// task goes to that node's injector.
    ///
    /// # Panics
    /// If the options name an origin outside the pool's topology; see
    /// [`try_spawn_with`](Self::try_spawn_with).
    pub fn spawn_with<F: FnOnce() + Send + 'static>(&self, opts: TaskOptions, f: F) {
        if let Err(e) = self.try_spawn_with(opts, f) {
            panic!("{e}");
        }
    }

    /// [`spawn_with`](Self::spawn_with), or an error (and the task not accepted) if the
    /// options name an origin outside the pool's topology.
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`] for such an origin.
    pub fn try_spawn_with<F: FnOnce() + Send + 'static>(
        &self,
        opts: TaskOptions,
        f: F,
    ) -> Result<(), SpawnError> {
        self.registry.check_options(&opts)?;
        crate::spawn::spawn_static(&self.registry, opts, Target::Here, f);
        Ok(())
    }

    /// Spawns onto `node`: the task's origin is `node` — it is the root of a computation
    /// placed there, whose every task carries that origin and stays in `node`'s
    /// load-balancing zone — and it is queued where that zone takes it, whoever calls.
    /// The same rule holds for [`spawn_with`](Self::spawn_with) with an origin, the free
    /// [`spawn_with`](crate::spawn_with), a scope's [`spawn_on`](crate::Scope::spawn_on) and
    /// the node parts of [`par_for`](Self::par_for):
    ///
    /// | placed on `N` | queued on |
    /// |---|---|
    /// | `N` has workers, spawned by a worker of `N` | that worker's own queues (its deque, fresh at home: `N`'s workers and thieves of `N`'s zone take it from there) |
    /// | `N` has workers, spawned anywhere else (outside the pool, a worker of another node, any computation) | `N`'s injector |
    /// | `N` has no workers | the injector of the nearest node with workers (smallest distance to `N`, lowest id on ties; `Registry::placed_on`); the task keeps `N` as its origin, and its executions count in `executions_outside_zone` where that node's zone does not hold `N` |
    ///
    /// [`PoolMetrics`]'s `executions_outside_zone` counts the executions of tasks outside
    /// their root's zone.
    ///
    /// `node` is a [`NodeId`], or its dense index as a `usize`:
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn_on(1, move || tx.send("ran").unwrap());
    /// pool.spawn_on(zonal::topology::NodeId(2), move || {});
    /// assert_eq!(rx.recv().unwrap(), "ran");
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// # Panics
    /// If `node` is not a node of the pool's topology; see
    /// [`try_spawn_on`](Self::try_spawn_on).
    pub fn spawn_on<F: FnOnce() + Send + 'static>(&self, node: impl Into<NodeId>, f: F) {
        if let Err(e) = self.try_spawn_on(node.into(), f) {
            panic!("{e}");
        }
    }

    /// [`spawn_on`](Self::spawn_on), or an error (and the task not accepted) if `node` is not
    /// a node of the pool's topology.
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`].
    pub fn try_spawn_on<F: FnOnce() + Send + 'static>(
        &self,
        node: NodeId,
        f: F,
    ) -> Result<(), SpawnError> {
        self.registry.check_node(node)?;
        crate::spawn::spawn_static(&self.registry, TaskOptions::new(), Target::Node(node), f);
        Ok(())
    }

    /// Spawns a task that only worker `worker` may run (never stolen).
    ///
    /// # Panics
    /// If `worker >= num_workers()`; see [`try_spawn_pinned`](Self::try_spawn_pinned).
    pub fn spawn_pinned<F: FnOnce() + Send + 'static>(&self, worker: usize, f: F) {
        if let Err(e) = self.try_spawn_pinned(worker, f) {
            panic!("{e}");
        }
    }

    /// [`spawn_pinned`](Self::spawn_pinned), or an error (and the task not accepted) if
    /// there is no such worker.
    ///
    /// # Errors
    /// [`SpawnError::UnknownWorker`].
    pub fn try_spawn_pinned<F: FnOnce() + Send + 'static>(
        &self,
        worker: usize,
        f: F,
    ) -> Result<(), SpawnError> {
        let workers = self.num_workers();
        if worker >= workers {
            return Err(SpawnError::UnknownWorker { worker, workers });
        }
        crate::spawn::spawn_static(
            &self.registry,
            TaskOptions::new(),
            Target::Worker(worker),
            f,
        );
        Ok(())
    }

    /// The index of the current thread's worker, if it is one of this pool's.
    #[must_use]
    pub fn current_worker_index(&self) -> Option<usize> {
        self.with_worker(|w| w.map(|w| w.index))
    }

    /// The index of the current thread's worker, if it is one of this pool's (rayon's name
    /// for [`current_worker_index`](Self::current_worker_index)).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// assert_eq!(pool.current_thread_index(), None);
    /// assert!(pool.install(|| pool.current_thread_index()).is_some());
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn current_thread_index(&self) -> Option<usize> {
        self.current_worker_index()
    }

    /// The number of workers (rayon's name for [`num_workers`](Self::num_workers)).
    #[must_use]
    pub fn current_num_threads(&self) -> usize {
        self.num_workers()
    }

    /// Number of workers.
    #[must_use]
    pub fn num_workers(&self) -> usize {
        self.registry.num_workers()
    }

    /// The topology the pool was built over.
    #[must_use]
    pub fn topology(&self) -> &Topology {
        &self.registry.topo
    }

    /// The current policy's name (it changes with [`set_policy`](Self::set_policy)).
    #[must_use]
    pub fn policy_name(&self) -> String {
        self.registry.policy.name()
    }

    /// Switches the pool to the policy named `name` (default parameters) while it runs; see
    /// [`set_policy_object`](Self::set_policy_object).
    ///
    /// # Errors
    /// [`PolicyError::UnknownPolicy`] for a name no policy has (the pool keeps its policy).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").build()?;
    /// assert_eq!(pool.metrics().last_policy_switch_us, None);
    /// pool.set_policy("linux")?;
    /// assert_eq!(pool.policy_name(), "linux");
    /// assert!(pool.set_policy("no-such-policy").is_err());
    /// let m = pool.metrics();
    /// assert_eq!(m.policy_switches, 1);
    /// assert!(m.last_policy_switch_us.is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_policy(&self, name: &str) -> Result<(), PolicyError> {
        self.set_policy_config(&PolicyConfig::named(name)?)
    }

    /// Switches the pool to the policy `cfg` describes; see
    /// [`set_policy_object`](Self::set_policy_object).
    ///
    /// # Errors
    /// [`PolicyError::BadValue`] for a parameter out of range (the pool keeps its policy).
    pub fn set_policy_config(&self, cfg: &PolicyConfig) -> Result<(), PolicyError> {
        self.set_policy_object(cfg.build()?);
        Ok(())
    }

    /// Switches the pool to `policy` while it runs. It takes effect between decisions: each
    /// worker picks it up (its steal walk and ageing rule) at its next search, without a
    /// lock on its hot path, and the next balancing pass uses it; no queued task is lost or
    /// run twice, and aged tasks already kept by a worker stay there. Counted in
    /// [`PoolMetrics::policy_switches`].
    pub fn set_policy_object(&self, policy: Arc<dyn Policy>) {
        self.registry.switch_policy(policy);
    }

    /// Runs one periodic balancing pass of the current policy's balance side now, on this
    /// thread (the control plane runs them periodically): the CPUs whose levels are due
    /// balance, and the migrations they ask for move queued tasks between workers' away
    /// queues. A steal-only policy makes it do nothing. See `src/balance/mod.rs`.
    pub fn balance_now(&self) -> PassReport {
        balance::pass(&self.registry, self.registry.now_us())
    }

    /// Queues `f` on `worker`'s away queue as a task of `origin` living away from it (never
    /// migrated) — the state a balancing pass moves tasks out of — without the routing
    /// rule: for tests
    /// and benchmarks of balancing passes ([`balance_at`](Self::balance_at)). Applications
    /// place work with [`spawn_on`](Self::spawn_on).
    ///
    /// # Panics
    /// If `worker` is not a worker of the pool or `origin` not a node of its topology.
    #[doc(hidden)]
    pub fn spawn_away<F: FnOnce() + Send + 'static>(&self, worker: usize, origin: NodeId, f: F) {
        assert!(worker < self.registry.num_workers(), "no worker {worker}");
        if let Err(e) = self.registry.check_node(origin) {
            panic!("{e}");
        }
        crate::spawn::spawn_away(&self.registry, worker, origin.0, f);
    }

    /// [`balance_now`](Self::balance_now) as if at `now_us` µs of the pool's clock (since
    /// it was built; never earlier than the previous pass): for tests and benchmarks that
    /// need levels to be due without waiting for them.
    pub fn balance_at(&self, now_us: u64) -> PassReport {
        balance::pass(&self.registry, now_us)
    }

    /// Where the workers run (pinned, unpinned, spread).
    #[must_use]
    pub fn pinning(&self) -> Pinning {
        self.layout.pinning
    }

    /// How many workers are bound to no CPU: all of them in an unpinned pool, and the
    /// [`extra_workers`](Self::extra_workers) of a pinned or spread one, and the
    /// [`pin_fallback_workers`](Self::pin_fallback_workers).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").build()?;
    /// assert_eq!(pool.unpinned_workers(), 32); // a virtual pool is unpinned by default
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn unpinned_workers(&self) -> usize {
        self.layout.unpinned_workers
    }

    /// How many workers the pool has beyond one per CPU of its source topology
    /// ([`ThreadPoolBuilder::num_threads`](crate::ThreadPoolBuilder::num_threads) above
    /// the CPUs): each runs, unpinned, on a virtual CPU added to [`topology`](Self::topology)
    /// on its node.
    #[must_use]
    pub fn extra_workers(&self) -> usize {
        self.layout.extra_workers
    }

    /// Whether the topology is not this machine's (one worker per virtual CPU). The flat
    /// fallback over a machine that cannot be discovered is virtual too: see
    /// [`is_topology_discovered`](Self::is_topology_discovered).
    #[must_use]
    pub fn is_virtual(&self) -> bool {
        self.layout.is_virtual
    }

    /// Whether the topology is this machine's, discovered; `false` for the flat fallback
    /// (one node of `available_parallelism` CPUs, where this machine cannot be discovered:
    /// neither Linux nor the `hwloc` feature) and for a virtual pool. As
    /// [`PoolMetrics::topology_discovered`].
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").build()?;
    /// assert!(!pool.is_topology_discovered()); // a preset is not this machine
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn is_topology_discovered(&self) -> bool {
        self.layout.facts.topology_discovered
    }

    /// How many workers run unpinned because pinning them failed (the default pinning
    /// mode of [`ThreadPoolBuilder::pin`](crate::ThreadPoolBuilder::pin); the build logged
    /// a warning). As [`PoolMetrics::pin_fallback_workers`], whose
    /// [`pin_fallback_reason`](PoolMetrics::pin_fallback_reason) says why.
    #[must_use]
    pub fn pin_fallback_workers(&self) -> usize {
        self.layout.facts.pin_fallback_workers
    }

    /// The share of this machine's CPUs the pool took as one of several ranks on it
    /// (an MPI job's ranks on one machine,
    /// [`ThreadPoolBuilder::local_ranks`](crate::ThreadPoolBuilder::local_ranks)): the
    /// local rank and size, where they came from, whether the allowed CPUs were split and
    /// whether the ranks oversubscribe them. As [`PoolMetrics::local_share`].
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use zonal::runtime::{LocalRanks, ShareSource, ThreadPoolBuilder};
    /// let pool = ThreadPoolBuilder::new().local_ranks(LocalRanks::Ignore).build()?;
    /// assert_eq!(pool.local_share().source, ShareSource::None);
    /// assert_eq!(pool.local_share().local_ranks, 1);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn local_share(&self) -> &crate::launcher::LocalShare {
        &self.layout.facts.local_share
    }

    /// The node (dense index) of worker `worker`.
    ///
    /// # Panics
    /// If `worker >= num_workers()`.
    #[must_use]
    pub fn worker_node(&self, worker: usize) -> NodeId {
        NodeId(self.registry.worker_node[worker])
    }

    /// The nodes that have at least one worker, ascending.
    #[must_use]
    pub fn worker_nodes(&self) -> Vec<NodeId> {
        let mut v: Vec<u32> = self.registry.worker_node.to_vec();
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(NodeId).collect()
    }

    /// A snapshot of the metrics (cheap: a few relaxed loads per worker).
    #[must_use]
    pub fn metrics(&self) -> PoolMetrics {
        self.layout.facts.snapshot(&self.registry)
    }

    /// A cloneable, `Send` handle that takes metric snapshots from any thread, even after
    /// the pool is dropped (its snapshot stays frozen once the workers have exited, as
    /// after [`shutdown_and_wait`](Self::shutdown_and_wait)).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let h = pool.metrics_handle();
    /// std::thread::spawn(move || assert_eq!(h.snapshot().workers.len(), 32)).join().unwrap();
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn metrics_handle(&self) -> MetricsHandle {
        MetricsHandle::new(Arc::clone(&self.registry), Arc::clone(&self.layout.facts))
    }
}

impl ThreadPool {
    /// Terminates the pool (as dropping it does) and waits until every worker thread has
    /// exited: every pending `'static` task ([`spawn`](Self::spawn) and its kin, and
    /// whatever they spawn meanwhile) has run, every async task has completed or been
    /// cancelled (its [`JoinHandle`](crate::JoinHandle) is finished), and every
    /// [`exit_handler`](crate::ThreadPoolBuilder::exit_handler) has returned. A
    /// [`MetricsHandle`]'s snapshots are final from then on.
    ///
    /// rayon has no such call (its pool's drop, like this one's, returns at once): it is
    /// the join of the worker threads that dropping a pool does not do.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let n = Arc::new(AtomicUsize::new(0));
    /// for _ in 0..100 {
    ///     let n = Arc::clone(&n);
    ///     pool.spawn(move || {
    ///         n.fetch_add(1, Ordering::Relaxed);
    ///     });
    /// }
    /// pool.shutdown_and_wait();
    /// assert_eq!(n.load(Ordering::Relaxed), 100);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// The workers' threads are waited for however they were started — by the pool, or by
    /// a [`spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) (each worker's body
    /// signals its exit): no `JoinHandle` is needed. A thread adopted as worker 0
    /// ([`use_current_thread`](crate::ThreadPoolBuilder::use_current_thread)) may call it:
    /// it then works with the other workers until no task is pending, and waits for them;
    /// it stays the pool's worker 0 (as in rayon, for the rest of its life), running
    /// nothing any more.
    ///
    /// # Panics
    /// On one of the pool's own workers while it runs a task (on a worker of the pool's
    /// loop, always), which cannot wait for itself: the pool is then dropped (terminated,
    /// without waiting) as the panic unwinds.
    pub fn shutdown_and_wait(mut self) {
        let adopted = self.with_worker(|w| match w {
            None => Ok(false),
            Some(w) if w.is_adopted() && !w.in_task() => Ok(true),
            Some(_) => Err(()),
        });
        assert!(
            adopted.is_ok(),
            "`ThreadPool::shutdown_and_wait` on one of the pool's own workers, which cannot \
             wait for itself (drop the pool instead: its workers stop once idle)"
        );
        self.terminate();
        if adopted == Ok(true) {
            self.with_worker(|w| {
                if let Some(w) = w {
                    w.work_until_done();
                }
            });
        }
        self.exits.wait();
    }

    /// Shutdown, without waiting (sleep/README.md, step 7): no new work keeps the workers
    /// once they are idle; the pending tasks still run. Idempotent.
    fn terminate(&mut self) {
        if std::mem::replace(&mut self.terminated, true) {
            return;
        }
        let r = &*self.registry;
        // SeqCst: pairs with `spawn::task_done` and the workers' exit check
        // (sleep/README.md, step 7).
        r.terminate.store(true, Ordering::SeqCst);
        // Async tasks nobody may wake are cancelled now, the others when they next run
        // (`async_task/mod.rs`, "Shutdown"): the workers stay for queued work only.
        crate::async_task::shutdown_async(r);
        r.sleep.wake_all();
    }
}

// --- from the feature in `fifo.rs` ----------------------------------------------

impl ThreadPool {
    /// Spawns a `'static` task like [`spawn`](Self::spawn), but in FIFO order relative to
    /// the other `spawn_fifo`s of the same worker (rayon's `spawn_fifo`): where `spawn`s of
    /// one worker run newest first, its `spawn_fifo`s run oldest first. From outside the
    /// pool both queue FIFO.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::{Arc, Mutex};
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
    /// let order = Arc::new(Mutex::new(Vec::new()));
    /// let o = Arc::clone(&order);
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// pool.spawn(move || {
    ///     for i in 0..4 {
    ///         let (o, tx) = (Arc::clone(&o), tx.clone());
    ///         zonal::spawn_fifo(move || {
    ///             o.lock().unwrap().push(i);
    ///             tx.send(()).unwrap();
    ///         });
    ///     }
    /// });
    /// for _ in 0..4 {
    ///     rx.recv().unwrap();
    /// }
    /// assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3]);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn_fifo<F: FnOnce() + Send + 'static>(&self, f: F) {
        crate::spawn::spawn_static_fifo(&self.registry, f);
    }
}

// --- from the feature in `yield_now.rs` -----------------------------------------

impl ThreadPool {
    /// [`yield_now`](fn@crate::yield_now) if the current thread is a worker of this pool; `None` otherwise.
    #[must_use = "the answer says whether a task ran"]
    pub fn yield_now(&self) -> Option<Yield> {
        WorkerThread::with_current_in(&self.registry, |w| w.map(crate::yield_now::run_one))
    }
}

// --- from the feature in `yield_now.rs` -----------------------------------------

impl ThreadPool {
    /// [`yield_local`](crate::yield_local) if the current thread is a worker of this pool; `None` otherwise.
    #[must_use = "the answer says whether a task ran"]
    pub fn yield_local(&self) -> Option<Yield> {
        WorkerThread::with_current_in(&self.registry, |w| w.map(crate::yield_now::run_one_local))
    }

    /// [`current_thread_has_pending_tasks`](crate::current_thread_has_pending_tasks) if the current thread is a worker of this pool;
    /// `None` otherwise.
    #[must_use]
    pub fn current_thread_has_pending_tasks(&self) -> Option<bool> {
        WorkerThread::with_current_in(&self.registry, |w| w.map(WorkerThread::has_local_work))
    }
}

// --- from the feature in `async_task/mod.rs` ------------------------------------

impl ThreadPool {
    /// Spawns a future as a task of this pool and returns its [`JoinHandle`]. The future is
    /// polled on the pool's workers; whenever it is woken (from any thread) it is queued
    /// again on the worker that polled it last (aged: never to be stolen again). Its origin
    /// is the spawning task's (from outside the pool: the next node with workers).
    ///
    /// tokio's timers and sockets (`tokio::time`, `tokio::net`) and `tokio::spawn` work in
    /// the future with the feature `tokio`, with no set-up when it is spawned inside a
    /// tokio runtime (in `#[tokio::main]`, `#[tokio::test]`, or a task of that runtime):
    /// the task keeps that runtime's handle and enters it around each poll (per task: the
    /// global pool outlives the runtime of each `#[tokio::test]`). Under a multi-thread
    /// runtime everything works, whether the task is awaited or joined. Under a
    /// current-thread runtime (`#[tokio::test]`'s default, `flavor = "current_thread"`) the
    /// runtime's timers and sockets advance only while its thread is inside `block_on`
    /// and not blocked: `.await` the [`JoinHandle`] there (a blocking
    /// [`join`](JoinHandle::join) would wait for a timer nobody drives). A pool built with
    /// `ThreadPoolBuilder::tokio_handle` uses that runtime for every task instead. With
    /// neither, tokio panics, and the task completes with a [`JoinError`](crate::JoinError)
    /// that names `ThreadPoolBuilder::tokio_handle` (the module's "tokio's reactor and
    /// timers").
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let h = pool.spawn_async(async {
    ///     zonal::task::yield_now().await;
    ///     zonal::runtime::current_node().is_some()
    /// });
    /// assert!(h.join().unwrap());
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn_async<F>(&self, fut: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        crate::async_task::spawn_async(&self.registry, TaskOptions::new(), Target::Here, fut)
    }

    /// [`spawn_async`](Self::spawn_async) with [`TaskOptions`] (an origin, a group, a
    /// weight, or a continuation of the running task's metadata).
    ///
    /// # Panics
    /// If the options name an origin outside the pool's topology; see
    /// [`try_spawn_async_with`](Self::try_spawn_async_with).
    pub fn spawn_async_with<F>(&self, opts: TaskOptions, fut: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.try_spawn_async_with(opts, fut)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`spawn_async_with`](Self::spawn_async_with), or an error (the future dropped
    /// unpolled) if the options name an origin outside the pool's topology.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use zonal::runtime::{SpawnError, TaskOptions};
    /// use zonal::topology::NodeId;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let h = pool.try_spawn_async_with(TaskOptions::new().origin(NodeId(3)), async {
    ///     zonal::runtime::current_task().map(|t| t.origin)
    /// })?;
    /// assert_eq!(h.join().unwrap(), Some(NodeId(3)));
    /// let bad = pool.try_spawn_async_with(TaskOptions::new().origin(NodeId(99)), async {});
    /// assert!(matches!(bad, Err(SpawnError::UnknownNode { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`SpawnError::UnknownNode`] for such an origin.
    pub fn try_spawn_async_with<F>(
        &self,
        opts: TaskOptions,
        fut: F,
    ) -> Result<JoinHandle<F::Output>, SpawnError>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.registry.check_options(&opts)?;
        Ok(crate::async_task::spawn_async(
            &self.registry,
            opts,
            Target::Here,
            fut,
        ))
    }

    /// Spawns a `'static` closure as a task of this pool, with a [`JoinHandle`] of its
    /// result (a task that completes in its one run; a panic becomes a [`JoinError`](crate::JoinError)).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let h = pool.spawn_handle(|| zonal::runtime::current_worker_index().is_some());
    /// assert!(h.join().unwrap());
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn_handle<F, T>(&self, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_async(CallOnce(Some(f)))
    }
}

// --- from the feature in `broadcast.rs` -----------------------------------------

impl ThreadPool {
    /// Runs `op` once on every worker of the pool, each with its
    /// [`BroadcastContext`]; returns the results by worker index. The first panic among
    /// them resumes here, once all have finished. Each worker runs its share when it next
    /// looks for work: a worker busy with a long task delays the broadcast.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let seen = pool.broadcast(|ctx| (ctx.index(), zonal::current_thread_index()));
    /// assert_eq!(seen.len(), 32);
    /// assert!(seen.iter().enumerate().all(|(i, &(idx, cur))| idx == i && cur == Some(i)));
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn broadcast<OP, R>(&self, op: OP) -> Vec<R>
    where
        OP: Fn(BroadcastContext<'_>) -> R + Sync,
        R: Send,
    {
        let op = &op;
        crate::enter::in_worker(&self.registry, |wt, _| broadcast_in_worker(wt, op))
    }
}

// --- from the feature in `broadcast.rs` -----------------------------------------

impl ThreadPool {
    /// Runs `op` once on every worker of the pool, asynchronously (rayon's
    /// `spawn_broadcast`): each worker runs its share when it next looks for work, and the
    /// call returns at once. A panic goes to the pool's panic handler, as a `spawn`'s.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::mpsc::channel;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(4).build()?;
    /// let (tx, rx) = channel();
    /// let tx = std::sync::Mutex::new(tx);
    /// pool.spawn_broadcast(move |ctx| tx.lock().unwrap().send(ctx.index()).unwrap());
    /// let mut seen: Vec<usize> = rx.iter().take(4).collect();
    /// seen.sort_unstable();
    /// assert_eq!(seen, [0, 1, 2, 3]);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn_broadcast<OP>(&self, op: OP)
    where
        OP: Fn(BroadcastContext<'_>) + Send + Sync + 'static,
    {
        spawn_broadcast_in(&self.registry, op);
    }
}

// --- from the feature in `node_workers.rs` --------------------------------------

impl ThreadPool {
    /// Per node of the pool's topology (dense order, as
    /// [`NodeId`](zonal_topology::NodeId)): the workers on it, or why it has none.
    #[must_use]
    pub fn node_workers(&self) -> Vec<NodeWorkers> {
        let r = &*self.registry;
        let m = r.topo.machine();
        m.nodes()
            .iter()
            .enumerate()
            .map(|(k, node)| {
                let workers: Vec<usize> = (0..r.num_workers())
                    .filter(|&w| r.worker_node[w] as usize == k)
                    .collect();
                if !workers.is_empty() {
                    return NodeWorkers::Workers { workers };
                }
                match node.kind() {
                    NodeKind::CpusNotAllowed => NodeWorkers::CpusNotAllowed {
                        cpus: node.withheld_cpus.clone(),
                    },
                    NodeKind::CpusOffline => NodeWorkers::CpusOffline {
                        cpus: node.offline_cpus.clone(),
                    },
                    NodeKind::MemoryOnly => NodeWorkers::MemoryOnly,
                    _ => NodeWorkers::NotChosen,
                }
            })
            .collect()
    }
}

// --- from the feature in `scope_fifo.rs` ----------------------------------------

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
        crate::enter::in_worker(&self.registry, |wt, _| scope_fifo_in_worker(wt, op))
    }
}

// --- from the feature in `scope_fifo.rs` ----------------------------------------

impl ThreadPool {
    /// [`scope_fifo`](Self::scope_fifo), but `op` runs on the *calling* thread (rayon's
    /// `in_place_scope_fifo`); its spawns go to this pool.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::Mutex;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").num_threads(1).build()?;
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
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn in_place_scope_fifo<'scope, OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&ScopeFifo<'scope>) -> R,
    {
        in_place_scope_fifo_in(&self.registry, op)
    }
}

// --- from the feature in `parallel.rs` ------------------------------------------

impl ThreadPool {
    /// Calls `f` on sub-ranges of `range` of at most `grain` items, in parallel. The range is
    /// first cut into one contiguous part per node (in proportion to its workers), each
    /// spawned on its node (a placed computation of its own); each part is then split by
    /// recursive `join`. Called from a task of a placed computation of this pool (rooted
    /// with `spawn_on`, an origin option or `spawn_pinned`), there is no cut: the range is
    /// split by `join` inside that computation's zone.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let n = AtomicUsize::new(0);
    /// pool.par_for(0..1000, 10, |r| { n.fetch_add(r.len(), Ordering::Relaxed); });
    /// assert_eq!(n.into_inner(), 1000);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn par_for<F>(&self, range: Range<usize>, grain: usize, f: F)
    where
        F: Fn(Range<usize>) + Sync + Send,
    {
        self.par_reduce(range, grain, || (), &f, |(), ()| ());
    }

    /// Calls `f(offset, chunk)` on chunks of `slice` of at most `grain` items, split by node
    /// as [`par_for`](Self::par_for).
    pub fn par_chunks<T, F>(&self, slice: &[T], grain: usize, f: F)
    where
        T: Sync,
        F: Fn(usize, &[T]) + Sync + Send,
    {
        self.par_for(0..slice.len(), grain, |r| f(r.start, &slice[r]));
    }

    /// Calls `f(offset, chunk)` on disjoint mutable chunks of `slice`, split by node.
    pub fn par_chunks_mut<T, F>(&self, slice: &mut [T], grain: usize, f: F)
    where
        T: Send + Sync,
        F: Fn(usize, &mut [T]) + Sync + Send,
    {
        let base = SendPtr(slice.as_mut_ptr());
        let len = slice.len();
        self.par_for(0..len, grain, move |r| {
            let base = &base;
            // SAFETY: `par_for` hands out disjoint sub-ranges of 0..len, each exactly once,
            // and `slice` is mutably borrowed for the whole call.
            let chunk = unsafe { std::slice::from_raw_parts_mut(base.0.add(r.start), r.len()) };
            f(r.start, chunk);
        });
    }

    /// How [`par_for`](Self::par_for) and friends cut `range` by node: one contiguous part
    /// per node with workers, in proportion to its workers, nodes ascending. Use it to place
    /// the data each part works on (e.g. a [`NodeBuffer`](crate::NodeBuffer) per part).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let parts = pool.node_partition(0..1600);
    /// assert_eq!(parts.len(), 16);
    /// assert_eq!(parts[1], (zonal::topology::NodeId(1), 100..200));
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn node_partition(&self, range: Range<usize>) -> Vec<(NodeId, Range<usize>)> {
        crate::parallel::node_partition(&self.registry, range)
    }

    /// A parallel map-reduce over `range`, split by node then by `join` down to `grain`.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
    /// let s = pool.par_reduce(0..101, 8, || 0u64, |r| r.map(|i| i as u64).sum(), |a, b| a + b);
    /// assert_eq!(s, 5050);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn par_reduce<R, ID, M, RED>(
        &self,
        range: Range<usize>,
        grain: usize,
        identity: ID,
        map: M,
        reduce: RED,
    ) -> R
    where
        R: Send,
        ID: Fn() -> R + Sync + Send,
        M: Fn(Range<usize>) -> R + Sync + Send,
        RED: Fn(R, R) -> R + Sync + Send,
    {
        let grain = grain.max(1);
        let parts = self.node_partition(range.clone());
        // Inside a placed computation of this pool, no cut: its parts would be rooted on
        // every node, out of its origin's zone (`task_meta.rs`, "Whole computations").
        let placed = self.with_worker(|w| w.is_some_and(|w| w.current.get().placed()));
        if parts.len() <= 1 || range.len() <= grain || placed {
            return self.install(|| split(range, grain, &map, &reduce));
        }
        let slots: Vec<Mutex<Option<R>>> = parts.iter().map(|_| Mutex::new(None)).collect();
        self.scope(|s| {
            for ((node, part), slot) in parts.into_iter().zip(&slots) {
                let (map, reduce) = (&map, &reduce);
                s.spawn_on(node, move |_| {
                    let v = split(part, grain, map, reduce);
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
                });
            }
        });
        slots
            .into_iter()
            .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .fold(identity(), &reduce)
    }
}

impl Drop for ThreadPool {
    /// Terminates the pool and returns at once, as rayon's: the workers finish the pending
    /// tasks and exit on their own (each holds the registry), also when the pool is dropped
    /// on one of them. [`shutdown_and_wait`](ThreadPool::shutdown_and_wait) waits for them.
    fn drop(&mut self) {
        // Not waited for: a worker thread ends when the pool has no task left.
        self.terminate();
        // An adopted caller (`use_current_thread`) gets its CPUs back (`construct/caller.rs`).
        crate::construct::give_back_caller(&self.registry);
    }
}

/// The index of the current thread's worker in its pool (of any pool), if it is a worker;
/// rayon's name for [`current_worker_index`].
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// assert_eq!(zonal::current_thread_index(), None);
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// assert!(pool.install(zonal::current_thread_index).is_some());
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[must_use]
pub fn current_thread_index() -> Option<usize> {
    current_worker_index()
}

/// The index of the current thread's worker in its pool, if it is a worker.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// assert_eq!(zonal::runtime::current_worker_index(), None);
/// ```
#[must_use]
pub fn current_worker_index() -> Option<usize> {
    WorkerThread::with_current(|w| w.map(|w| w.index))
}

/// The node (dense index) of the current thread's worker, if it is a worker.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// assert!(pool.install(zonal::runtime::current_node).is_some());
/// assert_eq!(zonal::runtime::current_node(), None);
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[must_use]
pub fn current_node() -> Option<NodeId> {
    WorkerThread::with_current(|w| w.map(|w| NodeId(w.node)))
}

/// Metadata of the task running on the current worker (origin, migrations, group, weight).
#[must_use]
pub fn current_task() -> Option<TaskInfo> {
    WorkerThread::with_current(|w| w.map(|w| TaskInfo::from_meta(w.current.get())))
}

/// Where the workers of a pool run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum Pinning {
    /// One worker per CPU of this machine, each bound to its CPU (but the
    /// [`ThreadPool::pin_fallback_workers`], if pinning failed for some only).
    Pinned,
    /// Not bound (pinning turned off, a virtual topology left unpinned, the flat fallback
    /// over an undiscovered machine, or pinning failed for every worker).
    Unpinned,
    /// A virtual topology (not this machine's): one worker per virtual CPU, bound round-robin
    /// over this process's allowed CPUs.
    Spread,
}
