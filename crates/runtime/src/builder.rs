//! [`ThreadPoolBuilder`]: topology, policy, worker CPUs, pinning, threads and handlers.

use std::any::Any;
use std::path::PathBuf;
use std::sync::Arc;

use zonal_policy::{Policy, PolicyConfig};
use zonal_topology::{CpuId, Topology};

use crate::construct::{Hooks, NameFn, Threads};
use crate::discovery::TopologyKind;
use crate::error::{BuildError, ErrorKind};
use crate::launcher::{LocalRanks, LocalShare, ShareSource};
use crate::pool::Pinning;
use crate::pool::ThreadPool;
use crate::thread_builder::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
use crate::StealRecord;

/// The policy a pool is built with when none is named.
pub const DEFAULT_POLICY: &str = "conservative-hard";

enum Source {
    ThisMachine,
    Topology(Box<Topology>),
    Preset(String),
    Xml(PathBuf),
    #[cfg(feature = "json")]
    Nodes(PathBuf),
}

enum PolicyChoice {
    Default,
    Name(String),
    Config(PolicyConfig),
    Object(Arc<dyn Policy>),
}

/// [`ThreadPoolBuilder::pin`]'s three modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PinMode {
    /// Not set: pin where possible, run unpinned where not (the default).
    WherePossible,
    /// `pin(true)`: a worker that cannot be pinned fails the build.
    Required,
    /// `pin(false)`: never pin.
    Off,
}

enum WorkerCpus {
    All,
    Subset(Vec<u32>),
    PerNode(usize),
}

/// How a pool over a topology that is not this machine's places its workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum VirtualPinning {
    /// Leave the workers unpinned (the default).
    #[default]
    Unpinned,
    /// Bind them round-robin over the allowed CPUs.
    Spread,
}

/// Builds a [`ThreadPool`].
///
/// Defaults: this machine's topology (sysfs on Linux, else hwloc with the `hwloc` feature,
/// restricted to the calling thread's allowed CPUs), the
/// [`DEFAULT_POLICY`], a worker on every allowed CPU, each pinned to it where possible,
/// threads named `zonal-worker-{i}`.
///
/// # Runs anywhere
///
/// Pinning has three modes ([`pin`](Self::pin)):
/// - **unset** (the default): pin where possible. A worker that cannot be pinned (a
///   platform without thread affinity, a CPU the cpuset refuses) runs unpinned, and the
///   pool builds: one `tracing` warning per pool names how many workers and the first CPU
///   and reason, and [`ThreadPool::pin_fallback_workers`] /
///   [`PoolMetrics::pin_fallback_reason`](crate::PoolMetrics::pin_fallback_reason) (and
///   the Prometheus gauge `zonal_pin_fallback_workers`) report it;
/// - **`pin(true)`**: required. A worker that cannot be pinned makes
///   [`build`](Self::build) fail with a [`BuildError`] naming the worker, the CPU and the
///   reason ([`BuildError::is_pinning_error`]);
/// - **`pin(false)`**: off. Workers are left to the OS scheduler.
///
/// Where this machine cannot be discovered (neither Linux nor the `hwloc` feature, or a
/// Linux whose sysfs is not mounted), the pool runs over one flat node of `available_parallelism` CPUs, unpinned (those CPU
/// numbers are not known to be the OS's), with a `tracing` warning;
/// [`ThreadPool::is_topology_discovered`] (the gauge `zonal_topology_discovered`) says
/// so, and `pin(true)` is then a pinning error. So a default pool, the global pool
/// included, builds on any platform.
///
/// A pool built over another topology ([`preset`](Self::preset), [`xml_file`](Self::xml_file),
/// `nodes_file` (feature `json`), [`topology`](Self::topology)) is *virtual*: one worker
/// per virtual CPU, unpinned or spread over the allowed CPUs ([`ThreadPool::pinning`]
/// says which, and the build logs it). That is how behaviour on big machines is tested here.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::ThreadPoolBuilder;
/// let pool = ThreadPoolBuilder::new()
///     .preset("s1")
///     .no_policy()
///     .thread_name(|i| format!("s1-{i}"))
///     .build()?;
/// assert_eq!(pool.num_workers(), 32);
/// assert!(pool.is_virtual());
/// # Ok::<(), zonal::BuildError>(())
/// ```
///
/// # Spawners
///
/// As rayon's, the builder is generic over how it starts its worker threads: `S` is
/// [`DefaultSpawn`] (a `std::thread::Builder` per worker) unless a
/// [`spawn_handler`](Self::spawn_handler) was given, which makes it a
/// `ThreadPoolBuilder<CustomSpawn<F>>`. Every option is available whatever `S` is.
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    source: Source,
    policy: PolicyChoice,
    cpus: WorkerCpus,
    num_threads: Option<usize>,
    pin: PinMode,
    virtual_pinning: VirtualPinning,
    local_ranks: LocalRanks,
    thread_name: Option<NameFn>,
    stack_size: Option<usize>,
    start_handler: Option<Box<crate::registry::ThreadHandler>>,
    exit_handler: Option<Box<crate::registry::ThreadHandler>>,
    panic_handler: Option<Box<crate::registry::PanicHandler>>,
    observer: Option<Box<crate::registry::StealObserver>>,
    /// The tokio runtime every worker enters (feature `tokio`).
    #[cfg(feature = "tokio")]
    tokio: Option<tokio::runtime::Handle>,
    /// The calling thread becomes worker 0 (`use_current_thread`).
    use_current_thread: bool,
    /// `spawn` behaves as `spawn_fifo` (`breadth_first`, deprecated).
    breadth_first: bool,
    spawn: S,
}

impl<S> std::fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("pin", &self.pin)
            .field("stack_size", &self.stack_size)
            .field("use_current_thread", &self.use_current_thread)
            .field("breadth_first", &self.breadth_first)
            .finish_non_exhaustive()
    }
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ThreadPoolBuilder {
    /// A builder with the defaults above.
    #[must_use]
    pub fn new() -> Self {
        Self {
            source: Source::ThisMachine,
            policy: PolicyChoice::Default,
            cpus: WorkerCpus::All,
            num_threads: None,
            pin: PinMode::WherePossible,
            virtual_pinning: VirtualPinning::default(),
            local_ranks: LocalRanks::Auto,
            thread_name: None,
            stack_size: None,
            start_handler: None,
            exit_handler: None,
            panic_handler: None,
            observer: None,
            #[cfg(feature = "tokio")]
            tokio: None,
            use_current_thread: false,
            breadth_first: false,
            spawn: DefaultSpawn,
        }
    }

    /// Builds a pool whose worker threads are scoped threads of the calling thread
    /// (`std::thread::scope`), each started by `wrapper`, which must call
    /// [`ThreadBuilder::run`]; runs `with_pool` with the pool, then drops it and returns
    /// once every worker thread has exited (rayon's `build_scoped`). So the workers may
    /// borrow from the caller's stack: `wrapper` need not be `'static`, nor `Send` (it is
    /// shared: `Sync`).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let here = String::from("borrowed");
    /// let seen = zonal::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| {
    ///             assert_eq!(here, "borrowed");
    ///             thread.run()
    ///         },
    ///         |pool| pool.install(|| zonal::current_thread_index().is_some()),
    ///     )?;
    /// assert!(seen);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// As [`build`](Self::build) (a scoped thread that cannot be spawned included).
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, BuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        std::thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    let mut b = std::thread::Builder::new();
                    if let Some(name) = thread.name() {
                        b = b.name(name.to_owned());
                    }
                    if let Some(size) = thread.stack_size() {
                        b = b.stack_size(size);
                    }
                    b.spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            Ok(with_pool(&pool))
        })
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// Starts the worker threads with `spawn` instead of `std::thread::Builder` (rayon's
    /// `spawn_handler`): it is called once per worker (in index order) with a
    /// [`ThreadBuilder`] and must start a thread that calls [`ThreadBuilder::run`], then
    /// return; an error it returns fails the build (the workers already started are
    /// stopped first). `spawn` need not be `'static`: with scoped threads (a
    /// `std::thread::scope`, crossbeam's), the workers may borrow from the caller; see also
    /// [`build_scoped`](Self::build_scoped). The thread it starts is a worker like any
    /// other: pinned to its CPU where the pool pins, named as it chooses (the
    /// [`ThreadBuilder::name`] is a suggestion). A thread it starts must not wait for
    /// `build` to return before calling `run`: `build` waits for every worker to start.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::sync::Mutex;
    /// let handles = Mutex::new(Vec::new());
    /// let pool = zonal::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         let h = std::thread::Builder::new().spawn(move || thread.run())?;
    ///         handles.lock().unwrap().push(h);
    ///         Ok(())
    ///     })
    ///     .build()?;
    /// assert_eq!(pool.install(|| 6 * 7), 42);
    /// pool.shutdown_and_wait(); // waits for the threads the handler started
    /// for h in handles.into_inner().unwrap() {
    ///     h.join().unwrap();
    /// }
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> std::io::Result<()>,
    {
        ThreadPoolBuilder {
            source: self.source,
            policy: self.policy,
            cpus: self.cpus,
            num_threads: self.num_threads,
            pin: self.pin,
            virtual_pinning: self.virtual_pinning,
            local_ranks: self.local_ranks,
            thread_name: self.thread_name,
            stack_size: self.stack_size,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            panic_handler: self.panic_handler,
            observer: self.observer,
            #[cfg(feature = "tokio")]
            tokio: self.tokio,
            use_current_thread: self.use_current_thread,
            breadth_first: self.breadth_first,
            spawn: CustomSpawn::new(spawn),
        }
    }

    /// Makes the calling thread (the one that calls [`build`](Self::build)) worker 0 of
    /// the pool (rayon's `use_current_thread`): only the other workers get threads. The
    /// thread does not run the worker loop: it runs the pool's work only when it waits in
    /// the pool (a `join`, `scope`, `install` or [`yield_now`](crate::yield_now) there),
    /// so tasks only it may run (a [`broadcast`](crate::ThreadPool::broadcast)'s share, a
    /// [`spawn_pinned`](crate::ThreadPool::spawn_pinned)`(0, ..)`) wait for that. It stays
    /// worker 0 for the rest of its life, as in rayon, even after the pool is dropped
    /// ([`current_thread_index`](crate::current_thread_index) is `Some(0)`), so it can
    /// never join another pool this way: building a second such pool from it, or from any
    /// pool's worker, fails ([`BuildError::is_current_thread_already_in_pool`]).
    ///
    /// Zonal's specifics: the thread is worker 0 with worker 0's CPU and node (the first
    /// CPU the pool chose), and it is pinned to that CPU as any worker is — in the default
    /// mode only if it can be (otherwise it runs unpinned and counts in
    /// [`ThreadPool::pin_fallback_workers`]), with `pin(true)` a failure is the build's
    /// error, with `pin(false)` it is left alone —, once every other worker has started
    /// (so a failed build leaves its affinity as it was). Its pinning lasts as long as the
    /// pool: when the pool is dropped (or shut down), from whichever thread, the thread
    /// gets back the affinity it had before the build (read with `sched_getaffinity` of the
    /// thread before anything was pinned), and the pool never pins it again. Its spawns, joins and scopes are a worker's (its node is their origin),
    /// but work from outside the pool is spread over the other workers' nodes only (a node
    /// whose only worker is this thread would keep it until the thread comes back). It runs
    /// no [`start_handler`](Self::start_handler) or [`exit_handler`](Self::exit_handler)
    /// and enters no [`tokio_handle`] runtime. [`ThreadPool::shutdown_and_wait`] called on
    /// it works off the pending tasks with the other workers, then waits for them.
    ///
    /// [`tokio_handle`]: Self#method.tokio_handle
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let pool = zonal::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .use_current_thread()
    ///     .build()?;
    /// assert_eq!(zonal::current_thread_index(), Some(0));
    /// assert_eq!(pool.join(|| 1, || 2), (1, 2));
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn use_current_thread(mut self) -> Self {
        self.use_current_thread = true;
        self
    }

    /// rayon's deprecated `breadth_first`: in rayon, every worker's deque becomes FIFO.
    /// Here, the pool's [`spawn`](crate::ThreadPool::spawn) and the free
    /// [`spawn`](crate::spawn) on it behave as [`spawn_fifo`](crate::ThreadPool::spawn_fifo)
    /// (the spawns of one worker run in the order they were made); `join`, scopes and the
    /// other spawns are unchanged, since the deques' LIFO order is what keeps fresh tasks
    /// at home and the steal protocol's batches cheap (`steal/README.md`).
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for similar effect")]
    #[must_use]
    pub fn breadth_first(mut self) -> Self {
        self.breadth_first = true;
        self
    }

    /// Uses a topology built elsewhere (a virtual pool).
    #[must_use]
    pub fn topology(mut self, topo: Topology) -> Self {
        self.source = Source::Topology(Box::new(topo));
        self
    }

    /// Uses a named preset (`s1`, `s2`, `s3`, …; a virtual pool).
    #[must_use]
    pub fn preset(mut self, name: &str) -> Self {
        self.source = Source::Preset(name.to_owned());
        self
    }

    /// Uses another machine's hwloc XML export (a virtual pool). Reading it needs the
    /// `hwloc` feature: without it, [`build`](Self::build) fails with an error naming the
    /// file and the feature.
    #[must_use]
    pub fn xml_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.source = Source::Xml(path.into());
        self
    }

    /// Uses a node dump in the `--nodes` JSON format (a virtual pool; feature `json`).
    #[cfg(feature = "json")]
    #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
    #[must_use]
    pub fn nodes_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.source = Source::Nodes(path.into());
        self
    }

    /// Chooses the policy by name (`conservative-hard`, `linux`, …) with default parameters.
    #[must_use]
    pub fn policy_name(mut self, name: &str) -> Self {
        self.policy = PolicyChoice::Name(name.to_owned());
        self
    }

    /// Chooses the policy by name and parameters.
    #[must_use]
    pub fn policy_config(mut self, cfg: PolicyConfig) -> Self {
        self.policy = PolicyChoice::Config(cfg);
        self
    }

    /// Uses a policy object.
    #[must_use]
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = PolicyChoice::Object(policy);
        self
    }

    /// No policy: plain nearest-first work stealing ([`NoPolicy`](crate::NoPolicy)).
    #[must_use]
    pub fn no_policy(self) -> Self {
        self.policy(Arc::new(crate::NoPolicy))
    }

    /// Workers on these CPUs only (OS indexes of this machine, or of the virtual machine).
    #[must_use]
    pub fn worker_cpus(mut self, cpus: impl IntoIterator<Item = u32>) -> Self {
        self.cpus = WorkerCpus::Subset(cpus.into_iter().collect());
        self
    }

    /// How the pool shares this machine with the other ranks of a job on it (an MPI job
    /// started by `mpirun`, `mpiexec` or `srun`; see [`LocalRanks`] and the launcher
    /// variables read in [`launcher_ranks`](crate::launcher_ranks)). The default,
    /// [`LocalRanks::Auto`], reads the launcher's local rank and size from the environment:
    /// where there are several ranks on this machine and the launcher did not bind this one
    /// (its allowed CPUs are every online CPU its cgroup allows), the pool takes this rank's
    /// contiguous, node-ordered share of the allowed CPUs ([`split_cpus`](crate::split_cpus))
    /// and builds its levels and zones over the nodes the share covers, so that two ranks
    /// never pin workers to one CPU; a bound rank keeps its CPUs. Without launcher variables
    /// nothing changes. [`LocalRanks::Split`] takes the share of an explicit rank and size;
    /// [`LocalRanks::Ignore`] uses every allowed CPU.
    ///
    /// Only a pool over this machine's discovered topology is split: explicit
    /// [`worker_cpus`](Self::worker_cpus) win over any split (the environment is then not
    /// read), and a virtual pool is never split. [`ThreadPool::local_share`] reports what was
    /// done.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use zonal::runtime::{LocalRanks, ShareSource, ThreadPoolBuilder};
    /// let pool = ThreadPoolBuilder::new()
    ///     .local_ranks(LocalRanks::Split { rank: 0, size: 1 })
    ///     .build()?;
    /// assert_eq!(pool.local_share().source, ShareSource::Explicit);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// A malformed launcher variable under [`LocalRanks::Auto`] (not a number, a rank not
    /// below the size, a size of 0), or an explicit rank not below its size, makes
    /// [`build`](Self::build) fail with a [`BuildError`] whose
    /// [`launcher_error`](BuildError::launcher_error) names the variable and its value.
    #[must_use]
    pub fn local_ranks(mut self, ranks: LocalRanks) -> Self {
        self.local_ranks = ranks;
        self
    }

    /// Workers on the first `n` CPUs of every node.
    #[must_use]
    pub fn workers_per_node(mut self, n: usize) -> Self {
        self.cpus = WorkerCpus::PerNode(n);
        self
    }

    /// `n` workers (rayon's `num_threads`). `0` means the default, one worker per CPU of the
    /// topology (for this machine: per allowed CPU). At most as many as the topology has
    /// CPUs: the first CPUs of each node, round-robin over the nodes, so that every node
    /// gets workers before any gets a second one. More: one worker per CPU, plus the extra
    /// ones dealt round-robin over the nodes on virtual CPUs added to the pool's topology
    /// (each sharing the core of one of its node's CPUs), never pinned
    /// ([`ThreadPool::extra_workers`], [`ThreadPool::unpinned_workers`]). Works for virtual
    /// pools too. The `num_threads` module doc in the source has the details.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use zonal::ThreadPoolBuilder;
    /// let pool = ThreadPoolBuilder::new().preset("s1").num_threads(4).build()?;
    /// assert_eq!(pool.num_workers(), 4);
    /// assert_eq!(pool.worker_nodes().len(), 4); // one worker on each of four nodes
    /// let big = ThreadPoolBuilder::new().preset("s1").num_threads(40).build()?;
    /// assert_eq!((big.num_workers(), big.extra_workers()), (40, 8));
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// A count above [`MAX_THREADS`](crate::MAX_THREADS), or a non-zero count together with
    /// [`worker_cpus`](Self::worker_cpus) or [`workers_per_node`](Self::workers_per_node),
    /// makes [`build`](Self::build) fail with a [`BuildError`] naming the value.
    #[must_use]
    pub fn num_threads(mut self, n: usize) -> Self {
        self.num_threads = Some(n);
        self
    }

    /// Whether no worker count was given (`num_threads(0)` counts as none): the global
    /// pool then honours `ZONAL_NUM_THREADS`.
    pub(crate) fn worker_count_unset(&self) -> bool {
        matches!(self.cpus, WorkerCpus::All) && self.num_threads.unwrap_or(0) == 0
    }

    /// Whether workers must be pinned to their CPUs. Three modes:
    /// - not called (the default): **pin where possible**. Each worker of a pool over this
    ///   machine is pinned to its CPU; one whose pinning fails (no thread affinity on this
    ///   platform, a CPU refused by the cpuset) runs unpinned instead, and the pool builds.
    ///   One `tracing` warning per pool names how many workers fell back and the first CPU
    ///   and reason; [`ThreadPool::pin_fallback_workers`] and
    ///   [`PoolMetrics::pin_fallback_workers`](crate::PoolMetrics::pin_fallback_workers) /
    ///   [`pin_fallback_reason`](crate::PoolMetrics::pin_fallback_reason) report it, and
    ///   such a worker is never pinned later (its
    ///   [`WorkerMetrics::pinned`](crate::WorkerMetrics::pinned) is `false`; it is no
    ///   displaced worker to re-pin). A pool over an undiscovered machine (the flat
    ///   fallback, see the type's docs) pins nothing.
    /// - `pin(true)`: **required**. A worker that cannot be pinned makes
    ///   [`build`](Self::build) fail with a [`BuildError`] naming the worker, the CPU and the
    ///   reason ([`BuildError::is_pinning_error`]), as does a machine that cannot be
    ///   discovered (its CPU numbers are not known).
    /// - `pin(false)`: **off**. No worker is pinned, so no pinning can fail: workers are left
    ///   to the OS scheduler.
    ///
    /// Virtual pools (a topology that is not this machine's) are unpinned unless
    /// [`virtual_pinning`](Self::virtual_pinning) asks for
    /// [`VirtualPinning::Spread`], which is itself an explicit request: a spread worker
    /// that cannot be pinned fails the build in the default mode as with `pin(true)`; only
    /// `pin(false)` leaves it unpinned. `pin(true)` on a virtual pool that is not spread
    /// asks for what it cannot give: [`build`](Self::build) fails with a [`BuildError`]
    /// ([`BuildError::is_pinning_error`]) naming the topology.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let err = zonal::ThreadPoolBuilder::new()
    ///     .preset("s1")
    ///     .pin(true)
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.is_pinning_error() && err.is_input_error());
    /// assert!(err.to_string().contains("VirtualPinning::Spread"), "{err}");
    /// ```
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use zonal::ThreadPoolBuilder;
    /// let pool = ThreadPoolBuilder::new().pin(false).no_policy().build()?;
    /// assert_eq!(pool.unpinned_workers(), pool.num_workers());
    /// assert_eq!(pool.pin_fallback_workers(), 0);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[must_use]
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = if pin { PinMode::Required } else { PinMode::Off };
        self
    }

    /// How a virtual pool places its workers (default: unpinned). [`Spread`]'s binding is
    /// required: a worker that cannot be bound fails the build (unless `pin(false)`, which
    /// leaves every worker unpinned).
    ///
    /// [`Spread`]: VirtualPinning::Spread
    #[must_use]
    pub fn virtual_pinning(mut self, p: VirtualPinning) -> Self {
        self.virtual_pinning = p;
        self
    }

    /// Names worker threads. A name with a NUL byte is refused by [`build`](Self::build)
    /// with a [`BuildError`] naming the worker ([`BuildError::worker`]); should `f` panic,
    /// the panic resumes in `build`'s caller — in both cases after the workers already
    /// started are stopped and have exited.
    #[must_use]
    pub fn thread_name(mut self, f: impl FnMut(usize) -> String + 'static) -> Self {
        self.thread_name = Some(Box::new(f));
        self
    }

    /// Stack size of worker threads, bytes. A stack the OS cannot give (more than the
    /// address space, or than `RLIMIT_AS` leaves) makes [`build`](Self::build) fail with a
    /// [`BuildError`] naming the worker whose thread could not be spawned and the OS's
    /// error, once the workers already started are stopped and have exited.
    #[must_use]
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Called on each worker thread when it starts, with its index.
    #[must_use]
    pub fn start_handler(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.start_handler = Some(Box::new(f));
        self
    }

    /// Makes every worker thread enter `handle`'s tokio runtime for its whole life (feature
    /// `tokio`), so that async tasks on the pool ([`ThreadPool::spawn_async`],
    /// [`spawn_async`](crate::spawn_async)) — and anything else running on a worker — can
    /// use tokio's reactor and timers: `tokio::time::sleep`, `tokio::net::TcpStream`,
    /// `tokio::spawn` (onto that runtime), `Handle::current()`.
    ///
    /// The workers only *enter* the runtime (`Handle::enter`): they never drive it. Its
    /// timers and sockets are driven by the runtime's own threads, so give the handle of a
    /// multi-thread runtime (whose workers drive I/O and timers), or of a current-thread
    /// runtime some thread keeps in `block_on`. Keep the runtime alive while tasks on the
    /// pool use it: once it shuts down, tokio's resources fail or panic as tokio documents
    /// (a panic in an async task completes it with a [`JoinError`](crate::JoinError)).
    ///
    /// Without a handle the workers have no tokio context of their own: each async task
    /// spawned inside a tokio runtime (in `#[tokio::main]`, or in a task of that runtime)
    /// enters that runtime around each of its polls instead, with no set-up (see
    /// [`ThreadPool::spawn_async`]). A task spawned outside every runtime has none, and
    /// tokio's resources panic when created there: the task completes with a
    /// [`JoinError`](crate::JoinError) whose message starts "no tokio runtime: call
    /// spawn_async inside one or give ThreadPoolBuilder::tokio_handle", and the worker
    /// lives on. With a handle, every task uses it, wherever it was spawned. The
    /// [`ControlPlane`](crate::ControlPlane)'s runtime is not entered: it is started
    /// after the pool (it needs the pool's metrics handle), and it is a current-thread
    /// runtime sized for the control plane's own tasks.
    ///
    /// A dedicated runtime (a user's `#[tokio::main]` runtime works the same way:
    /// `tokio::runtime::Handle::current()`):
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// use std::time::Duration;
    /// let rt = tokio::runtime::Builder::new_multi_thread()
    ///     .worker_threads(1)
    ///     .enable_all()
    ///     .build()
    ///     .unwrap();
    /// let pool = zonal::ThreadPoolBuilder::new()
    ///     .preset("s1")
    ///     .no_policy()
    ///     .tokio_handle(rt.handle().clone())
    ///     .build()?;
    /// let h = pool.spawn_async(async {
    ///     tokio::time::sleep(Duration::from_millis(1)).await;
    ///     7
    /// });
    /// assert_eq!(h.join().unwrap(), 7);
    /// drop(pool); // before the runtime its tasks use
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    #[cfg(feature = "tokio")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
    #[must_use]
    pub fn tokio_handle(mut self, handle: tokio::runtime::Handle) -> Self {
        self.tokio = Some(handle);
        self
    }

    /// Called on each worker thread before it exits, with its index.
    #[must_use]
    pub fn exit_handler(mut self, f: impl Fn(usize) + Send + Sync + 'static) -> Self {
        self.exit_handler = Some(Box::new(f));
        self
    }

    /// Receives the panics of spawned tasks (by default they are logged with `tracing`).
    #[must_use]
    pub fn panic_handler(
        mut self,
        f: impl Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    ) -> Self {
        self.panic_handler = Some(Box::new(f));
        self
    }

    /// Called by the thief on every steal (tests and tracing; keep it cheap).
    #[must_use]
    pub fn steal_observer(mut self, f: impl Fn(&StealRecord) + Send + Sync + 'static) -> Self {
        self.observer = Some(Box::new(f));
        self
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Builds the pool and starts its workers (through the
    /// [`spawn_handler`](Self::spawn_handler) if one was given).
    ///
    /// # Errors
    /// A [`BuildError`] when the topology cannot be loaded, the policy cannot be built, a
    /// selected CPU is not available (named in the message), no worker would run, a worker
    /// cannot be pinned while pinning is required (`pin(true)`, or a spread virtual pool;
    /// naming the worker, the CPU and the reason), a thread cannot be spawned (naming
    /// the worker and the OS's error: out of memory for its stack, out of threads), or a
    /// thread name holds a NUL byte. On any failure after the first worker started, the
    /// workers already started are stopped and have exited before the error is returned.
    pub fn build(mut self) -> Result<ThreadPool, BuildError> {
        self.check_num_threads()?;
        let (topo, kind) = self.load_topology()?;
        let (topo, local_share) = self.local_share(topo, &kind)?;
        let is_virtual = kind.is_virtual();
        let policy = self.take_policy()?;
        let (topo, cpus, extra) = match self.num_threads {
            Some(n) if n > 0 => {
                let sized = crate::num_threads::size(topo, n)?;
                let extra: Vec<bool> = sized.cpus.iter().map(|&c| sized.is_extra(c)).collect();
                (sized.topo, sized.cpus, extra)
            }
            _ => {
                let cpus = self.select_cpus(&topo, is_virtual)?;
                let extra = vec![false; cpus.len()];
                (topo, cpus, extra)
            }
        };
        let (pinning, mut targets) = self.pin_targets(&topo, &cpus, &kind, &extra)?;
        // Extra workers run on virtual CPUs: never bound.
        for (t, &x) in targets.iter_mut().zip(&extra) {
            if x {
                *t = None;
            }
        }
        let layout = crate::pool::Layout {
            pinning,
            is_virtual,
            unpinned_workers: targets.iter().filter(|t| t.is_none()).count(),
            extra_workers: extra.iter().filter(|&&x| x).count(),
            facts: Arc::new(crate::metrics::PoolFacts {
                topology_discovered: kind == TopologyKind::Discovered,
                local_share,
                ..Default::default()
            }),
        };
        if is_virtual {
            tracing::info!(
                target: "zonal_runtime",
                "topology {:?} is not this machine's: {} workers, one per virtual CPU, {:?}",
                topo.machine().name(),
                cpus.len(),
                pinning
            );
        }
        let (hooks, mut threads) = self.take_hooks_and_threads();
        threads.pin_required = self.pin == PinMode::Required || pinning == Pinning::Spread;
        crate::construct::start(
            Arc::new(topo),
            policy,
            cpus,
            &targets,
            hooks,
            threads,
            &mut self.spawn,
            layout,
        )
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// A non-zero `num_threads` within [`MAX_THREADS`](crate::MAX_THREADS), and not with
    /// another way of choosing the workers.
    fn check_num_threads(&self) -> Result<(), BuildError> {
        let Some(n) = self.num_threads.filter(|&n| n > 0) else {
            return Ok(());
        };
        crate::num_threads::check(n)?;
        let other = match self.cpus {
            WorkerCpus::All => return Ok(()),
            WorkerCpus::Subset(_) => "worker_cpus",
            WorkerCpus::PerNode(_) => "workers_per_node",
        };
        Err(BuildError::new(ErrorKind::Conflict { threads: n, other }))
    }

    /// The topology chosen, and where it came from.
    fn load_topology(&mut self) -> Result<(Topology, TopologyKind), BuildError> {
        Ok(
            match std::mem::replace(&mut self.source, Source::ThisMachine) {
                Source::ThisMachine => crate::discovery::this_machine()?,
                Source::Topology(t) => (*t, TopologyKind::Virtual),
                Source::Preset(name) => (
                    zonal_topology::presets::preset(&name)?,
                    TopologyKind::Virtual,
                ),
                #[cfg(feature = "hwloc")]
                Source::Xml(p) => (
                    Topology::new(zonal_topology::from_xml_file(p)?),
                    TopologyKind::Virtual,
                ),
                #[cfg(not(feature = "hwloc"))]
                Source::Xml(path) => return Err(BuildError::new(ErrorKind::NoHwloc { path })),
                #[cfg(feature = "json")]
                Source::Nodes(p) => (
                    Topology::new(zonal_topology::from_nodes_file(p)?),
                    TopologyKind::Virtual,
                ),
            },
        )
    }

    /// This rank's share of the machine ([`local_ranks`](Self::local_ranks)), and the
    /// topology restricted to it where the allowed CPUs are split.
    fn local_share(
        &self,
        topo: Topology,
        kind: &TopologyKind,
    ) -> Result<(Topology, LocalShare), BuildError> {
        let none = LocalShare::default();
        if *kind != TopologyKind::Discovered || matches!(self.cpus, WorkerCpus::Subset(_)) {
            return Ok((topo, none));
        }
        let (rank, size, source, split) = match self.local_ranks {
            LocalRanks::Ignore => return Ok((topo, none)),
            LocalRanks::Split { rank, size } => (rank, size, ShareSource::Explicit, true),
            LocalRanks::Auto => match crate::launcher::launcher_ranks_from_env()? {
                None => return Ok((topo, none)),
                Some(r) => {
                    let split = r.size > 1 && launcher_left_unbound(&topo)?;
                    (r.rank, r.size, ShareSource::Env(r.rank_var), split)
                }
            },
        };
        let mut share = LocalShare {
            local_rank: rank,
            local_ranks: size,
            source,
            ..LocalShare::default()
        };
        if !split {
            return Ok((topo, share));
        }
        let ordered: Vec<u32> = topo
            .cpu_nodes()
            .flat_map(|n| {
                topo.cpus_of(n)
                    .iter()
                    .map(|&c| topo.machine().cpu(c).os_index)
            })
            .collect();
        let (cpus, oversubscribed) = crate::launcher::split_cpus(&ordered, rank, size)?;
        let machine = topo.machine().restrict_cpus(|c| cpus.contains(&c))?;
        share.split = true;
        share.oversubscribed = oversubscribed;
        share.cpus = cpus;
        tracing::info!(
            target: "zonal_runtime",
            "local rank {rank} of {size} ({source:?}): CPUs {}{}",
            compress(&share.cpus),
            if oversubscribed { ", oversubscribed" } else { "" }
        );
        Ok((Topology::new(machine), share))
    }

    /// The policy chosen, built.
    fn take_policy(&mut self) -> Result<Arc<dyn Policy>, BuildError> {
        match std::mem::replace(&mut self.policy, PolicyChoice::Default) {
            PolicyChoice::Object(p) => Ok(p),
            PolicyChoice::Default => {
                build_policy(PolicyConfig::named(DEFAULT_POLICY), DEFAULT_POLICY)
            }
            PolicyChoice::Name(n) => build_policy(PolicyConfig::named(&n), &n),
            PolicyChoice::Config(c) => {
                let name = c.name.to_string();
                build_policy(Ok(c), &name)
            }
        }
    }

    /// The handlers, and how to make the worker threads.
    fn take_hooks_and_threads(&mut self) -> (Hooks, Threads) {
        let hooks = Hooks {
            panic_handler: self.panic_handler.take(),
            start_handler: self.start_handler.take(),
            exit_handler: self.exit_handler.take(),
            observer: self.observer.take(),
            breadth_first: self.breadth_first,
            #[cfg(feature = "tokio")]
            workers_in_tokio: self.tokio.is_some(),
        };
        let threads = Threads {
            name: self.thread_name.take(),
            stack_size: self.stack_size,
            pin_required: false,
            #[cfg(feature = "tokio")]
            tokio: self.tokio.take(),
            adopt: self.use_current_thread,
        };
        (hooks, threads)
    }

    fn select_cpus(&self, topo: &Topology, is_virtual: bool) -> Result<Vec<CpuId>, BuildError> {
        let cpus: Vec<CpuId> = match &self.cpus {
            WorkerCpus::All => (0..topo.cpu_count()).map(CpuId::new).collect(),
            WorkerCpus::PerNode(k) => topo
                .cpu_nodes()
                .flat_map(|n| topo.cpus_of(n).iter().take(*k).copied())
                .collect(),
            WorkerCpus::Subset(list) => {
                let mut v = Vec::with_capacity(list.len());
                for &os in list {
                    match topo.machine().cpu_by_os_index(os) {
                        Some(c) => v.push(c),
                        None if is_virtual => {
                            return Err(BuildError::new(ErrorKind::CpuNotInTopology {
                                cpu: os,
                                topology: topo.machine().name().to_owned(),
                            }))
                        }
                        None => {
                            let allowed = crate::discovery::allowed_cpus()
                                .map(|a| compress(&a))
                                .unwrap_or_else(|e| format!("unknown: {e}"));
                            return Err(BuildError::new(ErrorKind::CpuNotAllowed {
                                cpu: os,
                                allowed,
                            }));
                        }
                    }
                }
                v.sort_unstable();
                v.dedup();
                v
            }
        };
        if cpus.is_empty() {
            return Err(BuildError::new(ErrorKind::NoWorkers {
                why: match &self.cpus {
                    WorkerCpus::PerNode(0) => "workers_per_node(0)".into(),
                    WorkerCpus::Subset(_) => "an empty CPU list".into(),
                    _ => "the topology has no CPUs".into(),
                },
            }));
        }
        Ok(cpus)
    }

    /// Per worker, the OS CPU to bind to (or none), and the resulting pinning (before
    /// any pinning fails).
    fn pin_targets(
        &self,
        topo: &Topology,
        cpus: &[CpuId],
        kind: &TopologyKind,
        extra: &[bool],
    ) -> Result<(Pinning, Vec<Option<u32>>), BuildError> {
        if self.pin == PinMode::Off {
            return Ok((Pinning::Unpinned, vec![None; cpus.len()]));
        }
        if let (PinMode::Required, TopologyKind::Fallback { why }) = (self.pin, kind) {
            return Err(BuildError::new(ErrorKind::PinUndiscovered {
                why: why.clone(),
            }));
        }
        if self.pin == PinMode::Required
            && kind.is_virtual()
            && self.virtual_pinning == VirtualPinning::Unpinned
        {
            // Required pinning of workers on CPUs that are not this machine's: only a
            // spread asks for bindings; silently unpinned would be a lie.
            return Err(BuildError::new(ErrorKind::PinVirtual {
                topology: topo.machine().name().to_owned(),
            }));
        }
        if *kind == TopologyKind::Discovered {
            let t = cpus
                .iter()
                .zip(extra)
                .map(|(&c, &x)| (!x).then(|| topo.machine().cpu(c).os_index))
                .collect();
            return Ok((Pinning::Pinned, t));
        }
        match self.virtual_pinning {
            VirtualPinning::Unpinned => Ok((Pinning::Unpinned, vec![None; cpus.len()])),
            VirtualPinning::Spread => {
                let allowed = crate::discovery::allowed_cpus()?;
                if allowed.is_empty() {
                    return Err(BuildError::new(ErrorKind::NoWorkers {
                        why: "this process may run on no CPU".into(),
                    }));
                }
                // Round-robin over the allowed CPUs; extra workers (unpinned) take no turn.
                let t = extra
                    .iter()
                    .scan(0, |next, &x| {
                        Some((!x).then(|| {
                            *next += 1;
                            allowed[(*next - 1) % allowed.len()]
                        }))
                    })
                    .collect();
                Ok((Pinning::Spread, t))
            }
        }
    }
}

/// Whether the launcher left this process unbound: `topo` (this machine, restricted to
/// the allowed CPUs) holds every online CPU its cgroup allows.
fn launcher_left_unbound(topo: &Topology) -> Result<bool, BuildError> {
    let allowed: Vec<u32> = topo.machine().cpus().iter().map(|c| c.os_index).collect();
    Ok(crate::launcher::is_unbound_here(&allowed)?)
}

fn build_policy(
    cfg: Result<PolicyConfig, zonal_policy::PolicyError>,
    name: &str,
) -> Result<Arc<dyn Policy>, BuildError> {
    cfg.and_then(|c| c.build()).map_err(|source| {
        BuildError::new(ErrorKind::Policy {
            name: name.to_owned(),
            source,
        })
    })
}

/// `[0, 1, 2, 5]` → `"0-2,5"`.
fn compress(cpus: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::discovery::test_undiscovered::Undiscovered;

    #[test]
    fn cpu_lists_are_compressed() {
        assert_eq!(super::compress(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(super::compress(&[]), "");
    }

    /// Where this machine cannot be discovered (off Linux without `hwloc`; made so here on
    /// this thread), a default pool is one flat node of `available_parallelism` CPUs,
    /// unpinned, and says its topology was not discovered.
    #[test]
    fn an_undiscovered_machine_gives_one_unpinned_node_marked_not_discovered() {
        let _undiscovered = Undiscovered::new();
        let pool = ThreadPoolBuilder::new().no_policy().build().unwrap();
        let cpus = std::thread::available_parallelism().unwrap().get();
        assert_eq!(pool.num_workers(), cpus);
        assert_eq!(pool.topology().node_count(), 1);
        assert!(pool.is_virtual());
        assert!(!pool.is_topology_discovered());
        assert_eq!(pool.pinning(), Pinning::Unpinned);
        assert_eq!(pool.unpinned_workers(), cpus);
        let m = pool.metrics();
        assert!(!m.topology_discovered);
        assert_eq!(m.pin_fallback_workers, 0, "nothing was tried");
        assert!(m.workers.iter().all(|w| !w.pinned));
        assert!(!pool.metrics_handle().snapshot().topology_discovered);
        assert_eq!(pool.install(|| 1 + 1), 2);
    }

    /// `pin(true)` asks for what an undiscovered machine cannot give: a pinning error.
    #[test]
    fn pin_true_on_an_undiscovered_machine_is_a_pinning_error() {
        let _undiscovered = Undiscovered::new();
        let e = ThreadPoolBuilder::new()
            .no_policy()
            .pin(true)
            .build()
            .unwrap_err();
        assert!(e.is_pinning_error(), "{e}");
        assert!(e.to_string().contains("test"), "{e}");
        // Off is off.
        let pool = ThreadPoolBuilder::new().pin(false).build().unwrap();
        assert!(!pool.is_topology_discovered());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_is_discovered_and_a_preset_is_not() {
        let pool = ThreadPoolBuilder::new().no_policy().build().unwrap();
        assert!(pool.is_topology_discovered() && pool.metrics().topology_discovered);
        let pool = ThreadPoolBuilder::new().preset("s1").build().unwrap();
        assert!(!pool.is_topology_discovered() && !pool.metrics().topology_discovered);
    }

    /// A spread virtual pool asked to be bound: a worker that cannot be is the build's
    /// error, in the default pinning mode too.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_spread_worker_that_cannot_be_pinned_fails_the_build() {
        let allowed = crate::os::thread_affinity().unwrap();
        let _fail = crate::os::fail_pins::FailPins::new("pinfail-spread-", &allowed);
        let e = ThreadPoolBuilder::new()
            .preset("s1")
            .no_policy()
            .virtual_pinning(VirtualPinning::Spread)
            .thread_name(|i| format!("pinfail-spread-{i}"))
            .build()
            .unwrap_err();
        assert!(e.is_pinning_error(), "{e}");
    }
}
