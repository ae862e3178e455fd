//! Errors: building a pool (an opaque [`BuildError`] around a private kind, as rayon's
//! `ThreadPoolBuildError`, so that the kinds can evolve), and spawning where the pool has no
//! such place ([`SpawnError`]).
//!
//! Where rayon-core has a message for the same condition, [`BuildError`] displays rayon's
//! text word for word: "The global thread pool has already been initialized." and "The
//! current thread is already part of another thread pool." (neither has a
//! [`source`](std::error::Error::source), as in rayon). Zonal's own conditions (topology,
//! policy, CPUs, pinning, a thread that cannot be spawned: the OS's error is the source)
//! have messages of their own that name the offending input.

use std::fmt;

use zonal_topology::NodeId;

/// A spawn named a place the pool does not have; the task was not accepted (it is dropped
/// unrun, and said so here). Returned by the `try_spawn_*` methods; their panicking
/// counterparts panic with this message.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::topology::NodeId;
/// let pool = zonal::ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
/// let err = pool.try_spawn_on(NodeId(99), || ()).unwrap_err();
/// assert_eq!(err, zonal::runtime::SpawnError::UnknownNode { node: NodeId(99), nodes: 16 });
/// assert!(err.to_string().contains("node 99"));
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The node (a target or a task's origin) is not a node of the pool's topology.
    #[error("node {node} is not a node of the pool's topology (it has {nodes} nodes)")]
    UnknownNode {
        /// The node asked for.
        node: NodeId,
        /// How many nodes the topology has.
        nodes: usize,
    },
    /// The worker index is out of range.
    #[error("worker {worker} is out of range (the pool has {workers} workers)")]
    UnknownWorker {
        /// The worker asked for.
        worker: usize,
        /// How many workers the pool has.
        workers: usize,
    },
    /// Node-local memory could not be had: the size overflows, or the kernel refused the
    /// mapping.
    #[error("cannot map {len} elements of {elem_bytes} bytes on node {node}: {reason}")]
    Memory {
        /// The node asked for.
        node: NodeId,
        /// Elements asked for.
        len: usize,
        /// Bytes per element.
        elem_bytes: usize,
        /// Why.
        reason: MemoryError,
    },
}

/// Why node-local memory could not be had ([`SpawnError::Memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// `len × size_of::<T>()` overflows the address space.
    #[error("the size overflows")]
    Overflow,
    /// `T` needs an alignment above the page size.
    #[error("alignment {0} exceeds the page size")]
    Alignment(usize),
    /// The kernel refused the mapping (`mmap`'s errno).
    #[error("the kernel refused the mapping: {}", std::io::Error::from_raw_os_error(*.0))]
    Map(i32),
}

/// The launcher's local rank or size could not be used ([`launcher_ranks`](crate::launcher_ranks),
/// [`ThreadPoolBuilder::local_ranks`](crate::ThreadPoolBuilder::local_ranks)): the message
/// names the environment variable and its value.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let env = |v: &str| (v == "MPI_LOCALRANKID" || v == "MPI_LOCALNRANKS").then(|| "x".to_owned());
/// let e = zonal::runtime::launcher_ranks(env).unwrap_err();
/// assert_eq!(e.var(), Some("MPI_LOCALNRANKS"));
/// assert!(e.to_string().contains("MPI_LOCALNRANKS=\"x\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LauncherError {
    /// The variable is set but is not a number.
    #[error("environment variable {var}={value:?} is not a number")]
    NotANumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The local size is 0.
    #[error("environment variable {var}={value:?}: a local size must be at least 1")]
    ZeroSize {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The local rank is not below the local size.
    #[error("environment variable {var}={value:?} is not below {size_var}={size}")]
    RankOutOfRange {
        /// The rank's variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// The size's variable.
        size_var: &'static str,
        /// The size.
        size: usize,
    },
    /// A split asked for rank `rank` of `size` (`size` 0, or `rank >= size`), or over no CPUs.
    #[error("cannot split {cpus} CPUs as local rank {rank} of {size}")]
    BadSplit {
        /// The rank asked for.
        rank: usize,
        /// The number of ranks asked for.
        size: usize,
        /// How many CPUs there were to split.
        cpus: usize,
    },
}

impl LauncherError {
    /// The environment variable at fault (`None` for [`LauncherError::BadSplit`]).
    #[must_use]
    pub fn var(&self) -> Option<&'static str> {
        match self {
            Self::NotANumber { var, .. }
            | Self::ZeroSize { var, .. }
            | Self::RankOutOfRange { var, .. } => Some(var),
            Self::BadSplit { .. } => None,
        }
    }
}

/// Why a pool could not be built. The message names the offending input.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let err = zonal::ThreadPoolBuilder::new()
///     .preset("no-such-preset")
///     .build()
///     .unwrap_err();
/// assert!(err.to_string().contains("no-such-preset"));
/// ```
#[derive(Debug)]
pub struct BuildError {
    kind: ErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ErrorKind {
    #[error("cannot load the topology: {0}")]
    Topology(#[from] zonal_topology::TopologyError),
    #[error("cannot build policy {name:?}: {source}")]
    Policy {
        name: String,
        #[source]
        source: zonal_policy::PolicyError,
    },
    #[error("CPU {cpu} is not in this process's affinity mask (allowed: {allowed})")]
    CpuNotAllowed { cpu: u32, allowed: String },
    #[error("CPU {cpu} is not a CPU of the topology {topology:?}")]
    CpuNotInTopology { cpu: u32, topology: String },
    #[error("no worker CPUs were selected ({why})")]
    NoWorkers { why: String },
    #[error("cannot pin worker {worker} to CPU {cpu}: {reason}")]
    Pin {
        worker: usize,
        cpu: u32,
        reason: String,
    },
    #[error(
        "cannot pin the workers: {why}; the CPUs of this machine are not known (leave \
         `pin` unset to run unpinned)"
    )]
    PinUndiscovered { why: String },
    #[error(
        "pin(true) on a virtual pool: the topology {topology:?} is not this machine's, and \
         its workers run unpinned unless `virtual_pinning(VirtualPinning::Spread)` binds \
         them to this machine's CPUs (leave `pin` unset to run unpinned)"
    )]
    PinVirtual { topology: String },
    #[error("cannot spawn worker thread {worker} of {workers}: {source}")]
    Spawn {
        worker: usize,
        workers: usize,
        #[source]
        source: std::io::Error,
    },
    #[error("the name {name:?} of worker thread {worker} contains a NUL byte")]
    ThreadName { worker: usize, name: String },
    #[error("num_threads({requested}) is more than the limit of {limit} workers")]
    TooManyThreads { requested: usize, limit: usize },
    #[error("num_threads({threads}) conflicts with {other}: choose one way to size the pool")]
    Conflict { threads: usize, other: &'static str },
    #[error("local ranks: {0}")]
    Launcher(#[source] LauncherError),
    /// rayon's text, word for word.
    #[error("The global thread pool has already been initialized.")]
    GlobalPoolAlreadyInitialized,
    /// rayon's text, word for word.
    #[error("The current thread is already part of another thread pool.")]
    CurrentThreadAlreadyInPool,
    #[error(
        "the spawn handler did not run worker thread {worker}: its ThreadBuilder was dropped \
         without `run()`"
    )]
    NotRun { worker: usize },
    #[cfg(not(feature = "hwloc"))]
    #[error(
        "cannot read the hwloc XML export {}: zonal-runtime was built without the `hwloc` \
         feature (enable `zonal/hwloc` or `zonal-runtime/hwloc`)",
        path.display()
    )]
    NoHwloc { path: std::path::PathBuf },
}

impl BuildError {
    pub(crate) fn new(kind: impl Into<ErrorKind>) -> Self {
        Self { kind: kind.into() }
    }

    /// The CPU (OS index) the error is about, for pinning and CPU-selection errors.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let err = zonal::ThreadPoolBuilder::new()
    ///     .worker_cpus([4096])
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.cpu(), Some(4096));
    /// ```
    #[must_use]
    pub fn cpu(&self) -> Option<u32> {
        match &self.kind {
            ErrorKind::CpuNotAllowed { cpu, .. }
            | ErrorKind::CpuNotInTopology { cpu, .. }
            | ErrorKind::Pin { cpu, .. } => Some(*cpu),
            _ => None,
        }
    }

    /// Whether the error lies in what the builder was given — the topology source (a file, a
    /// preset, a generator), the policy, the CPU selection — rather than in the system
    /// failing to start the pool (a thread that cannot be spawned or pinned). A command-line
    /// tool reports the first kind as a usage error (exit status 2), the second as a failure
    /// (1).
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let err = zonal::ThreadPoolBuilder::new()
    ///     .preset("no-such-preset")
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.is_input_error());
    /// ```
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        match &self.kind {
            ErrorKind::Topology(_)
            | ErrorKind::Policy { .. }
            | ErrorKind::CpuNotAllowed { .. }
            | ErrorKind::CpuNotInTopology { .. }
            | ErrorKind::NoWorkers { .. }
            | ErrorKind::ThreadName { .. }
            | ErrorKind::TooManyThreads { .. }
            | ErrorKind::Conflict { .. }
            | ErrorKind::Launcher(_)
            // `pin(true)` contradicts the virtual topology the builder was given.
            | ErrorKind::PinVirtual { .. } => true,
            #[cfg(not(feature = "hwloc"))]
            ErrorKind::NoHwloc { .. } => true,
            ErrorKind::Pin { .. }
            | ErrorKind::PinUndiscovered { .. }
            | ErrorKind::Spawn { .. }
            | ErrorKind::NotRun { .. }
            | ErrorKind::GlobalPoolAlreadyInitialized => false,
            // The builder asked for what this thread cannot give.
            ErrorKind::CurrentThreadAlreadyInPool => true,
        }
    }

    /// The worker the error is about: the one whose thread could not be spawned (the OS's
    /// error is the [`source`](std::error::Error::source), a [`std::io::Error`]), pinned,
    /// or named. The workers started before it were stopped and had exited before `build`
    /// returned.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// // No system gives a thread 2^63 bytes of stack: the first worker cannot start.
    /// let err = zonal::ThreadPoolBuilder::new()
    ///     .preset("s1")
    ///     .stack_size(usize::MAX / 2)
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.worker(), Some(0));
    /// let os = std::error::Error::source(&err).and_then(|e| e.downcast_ref::<std::io::Error>());
    /// assert!(os.is_some_and(|e| e.raw_os_error().is_some()));
    /// ```
    #[must_use]
    pub fn worker(&self) -> Option<usize> {
        match &self.kind {
            ErrorKind::Spawn { worker, .. }
            | ErrorKind::Pin { worker, .. }
            | ErrorKind::NotRun { worker }
            | ErrorKind::ThreadName { worker, .. } => Some(*worker),
            _ => None,
        }
    }

    /// Whether [`ThreadPoolBuilder::build_global`](crate::ThreadPoolBuilder::build_global)
    /// found the global pool already built (by an earlier call, or lazily by a free
    /// function such as [`join`](fn@crate::join)).
    #[must_use]
    pub fn is_global_pool_already_initialized(&self) -> bool {
        matches!(self.kind, ErrorKind::GlobalPoolAlreadyInitialized)
    }

    /// Whether [`ThreadPoolBuilder::use_current_thread`](crate::ThreadPoolBuilder::use_current_thread)
    /// was asked of a thread that is already a worker of a pool (rayon's message: "The
    /// current thread is already part of another thread pool.").
    #[must_use]
    pub fn is_current_thread_already_in_pool(&self) -> bool {
        matches!(self.kind, ErrorKind::CurrentThreadAlreadyInPool)
    }

    /// The worker count refused: for [`num_threads`](crate::ThreadPoolBuilder::num_threads)
    /// above [`MAX_THREADS`](crate::MAX_THREADS), or in conflict with another way of sizing
    /// the pool.
    ///
    /// ```
    /// # use zonal_runtime::doc_facade as zonal;
    /// let err = zonal::ThreadPoolBuilder::new()
    ///     .preset("s1")
    ///     .num_threads(1_000_000)
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(err.num_threads(), Some(1_000_000));
    /// assert!(err.to_string().contains("1000000"));
    /// ```
    #[must_use]
    pub fn num_threads(&self) -> Option<usize> {
        match &self.kind {
            ErrorKind::TooManyThreads { requested, .. } => Some(*requested),
            ErrorKind::Conflict { threads, .. } => Some(*threads),
            _ => None,
        }
    }

    /// Whether pinning a worker failed while pinning was required
    /// ([`ThreadPoolBuilder::pin`](crate::ThreadPoolBuilder::pin)`(true)`, or a spread
    /// virtual pool), or was required on a machine that cannot be discovered or on a virtual
    /// pool that is not spread (whose workers have no CPU of this machine). In the default
    /// pinning mode such a worker runs unpinned instead; `pin(false)` never pins.
    #[must_use]
    pub fn is_pinning_error(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Pin { .. }
                | ErrorKind::PinUndiscovered { .. }
                | ErrorKind::PinVirtual { .. }
        )
    }
}

impl BuildError {
    /// The launcher's error, where the local rank or size could not be used
    /// ([`ThreadPoolBuilder::local_ranks`](crate::ThreadPoolBuilder::local_ranks)).
    #[must_use]
    pub fn launcher_error(&self) -> Option<&LauncherError> {
        match &self.kind {
            ErrorKind::Launcher(e) => Some(e),
            _ => None,
        }
    }
}

impl From<LauncherError> for BuildError {
    fn from(e: LauncherError) -> Self {
        Self::new(ErrorKind::Launcher(e))
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.kind)
    }
}

impl From<zonal_topology::TopologyError> for BuildError {
    fn from(e: zonal_topology::TopologyError) -> Self {
        Self::new(ErrorKind::Topology(e))
    }
}
