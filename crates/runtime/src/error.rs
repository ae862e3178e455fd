//! Errors building a pool: an opaque [`BuildError`] around a private kind, as rayon's
//! `ThreadPoolBuildError`, so that the kinds can evolve.

use std::fmt;

/// Why a pool could not be built. The message names the offending input.
///
/// ```
/// let err = zonal_runtime::ThreadPoolBuilder::new()
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
    #[error("cannot spawn worker thread {worker}: {source}")]
    Spawn {
        worker: usize,
        #[source]
        source: std::io::Error,
    },
}

impl BuildError {
    pub(crate) fn new(kind: impl Into<ErrorKind>) -> Self {
        Self { kind: kind.into() }
    }

    /// The CPU (OS index) the error is about, for pinning and CPU-selection errors.
    ///
    /// ```
    /// let err = zonal_runtime::ThreadPoolBuilder::new()
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

    /// Whether pinning a worker failed (opt out with
    /// [`ThreadPoolBuilder::pin`](crate::ThreadPoolBuilder::pin)`(false)`).
    #[must_use]
    pub fn is_pinning_error(&self) -> bool {
        matches!(self.kind, ErrorKind::Pin { .. })
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
