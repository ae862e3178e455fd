//! Typed errors of the guest harness: each names the file, field or value at fault.

use std::path::PathBuf;

/// What went wrong while shaping, packing, booting or reading a guest.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuestError {
    /// The guest would have more vCPUs than QEMU's `pc` machine takes without an IOMMU.
    #[error("the guest would have {cpus} vCPUs, more than QEMU's pc machine takes ({limit})")]
    TooManyCpus {
        /// vCPUs asked for (at least).
        cpus: u64,
        /// The limit ([`MAX_GUEST_CPUS`](crate::spec::MAX_GUEST_CPUS)).
        limit: u32,
    },
    /// The guest would have more NUMA nodes than QEMU allows.
    #[error("the guest would have {nodes} NUMA nodes, more than QEMU's MAX_NODES ({limit})")]
    TooManyNodes {
        /// Nodes asked for.
        nodes: usize,
        /// The limit ([`MAX_GUEST_NODES`](crate::spec::MAX_GUEST_NODES)).
        limit: usize,
    },
    /// A node's memory is outside the bounds.
    #[error("node {node}: {mib} MiB of memory, outside {min}..={max} MiB")]
    NodeMemory {
        /// The guest node.
        node: u32,
        /// Its memory.
        mib: u32,
        /// Smallest allowed (Linux drops smaller nodes).
        min: u32,
        /// Largest allowed.
        max: u32,
    },
    /// The nodes' memory adds up to less or more than the bounds.
    #[error("the guest would have {mib} MiB of memory in all, outside {min}..={max} MiB")]
    TotalMemory {
        /// The sum.
        mib: u64,
        /// Least ([`MIN_GUEST_MEMORY_MIB`](crate::spec::MIN_GUEST_MEMORY_MIB)).
        min: u64,
        /// Most ([`MAX_GUEST_MEMORY_MIB`](crate::spec::MAX_GUEST_MEMORY_MIB)).
        max: u64,
    },
    /// `CpuCount::AtMost(0)`: a node with CPUs must keep one.
    #[error("cpus per node: {value}; a node with CPUs keeps at least 1")]
    CpusPerNode {
        /// The value given.
        value: u32,
    },
    /// The spec is not consistent (hand-built): matrix shape or CPU count.
    #[error("guest spec {name}: {problem}")]
    InvalidSpec {
        /// The spec's name.
        name: String,
        /// What is wrong, with the value.
        problem: String,
    },
    /// A diagonal distance other than 10: QEMU fixes every local distance at 10.
    #[error("d({node},{node}) = {value}: QEMU fixes local distances at 10")]
    LocalDistance {
        /// The source node (OS id).
        node: u32,
        /// Its diagonal.
        value: u32,
    },
    /// A remote distance of 10 or less, or above 255: Linux would ignore the whole SLIT.
    #[error("d({from},{to}) = {value}: Linux accepts remote distances in 11..=255 only")]
    RemoteDistance {
        /// Row node (OS id).
        from: u32,
        /// Column node (OS id).
        to: u32,
        /// The distance.
        value: u32,
    },
    /// No `qemu-system-x86_64` to run.
    #[error("cannot run {program}: not found (run scripts/setup-guest.sh)")]
    QemuMissing {
        /// The program looked for.
        program: String,
    },
    /// No usable Open MPI on the host ([`OpenMpi::find`](crate::OpenMpi::find)).
    #[error("Open MPI: {reason} (scripts/setup.sh installs openmpi-bin)")]
    OpenMpiMissing {
        /// What is missing, with the path or the program.
        reason: String,
    },
    /// No kernel image.
    #[error("no kernel image: {searched} (set ZONAL_GUEST_KERNEL or run scripts/setup-guest.sh)")]
    KernelMissing {
        /// Where it was looked for.
        searched: String,
    },
    /// No static busybox.
    #[error("no busybox: {searched} (set ZONAL_GUEST_BUSYBOX or run scripts/setup-guest.sh)")]
    BusyboxMissing {
        /// Where it was looked for.
        searched: String,
    },
    /// `ldd` could not be run or failed on a binary.
    #[error("ldd {binary}: {message}")]
    Ldd {
        /// The binary.
        binary: PathBuf,
        /// What happened.
        message: String,
    },
    /// `ldd` says a shared library of a binary is missing.
    #[error("ldd {binary}: shared library {library} not found")]
    LibraryNotFound {
        /// The binary.
        binary: PathBuf,
        /// The library's name.
        library: String,
    },
    /// A path inside the guest is not absolute or not clean.
    #[error("guest path {path:?}: {reason}")]
    GuestPath {
        /// The path.
        path: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The guest did not finish its job in time; QEMU was killed.
    #[error("the guest did not finish within {seconds} s; console ends with:\n{console_tail}")]
    Timeout {
        /// The timeout.
        seconds: u64,
        /// The last lines of the console.
        console_tail: String,
    },
    /// The guest printed nothing on its console for the quiet limit
    /// ([`Guest::quiet_limit`](crate::Guest::quiet_limit)): its job hangs; QEMU was killed.
    #[error(
        "the guest printed nothing for {seconds} s (a hang); console ends with:\n{console_tail}"
    )]
    Silent {
        /// The quiet limit.
        seconds: u64,
        /// The last lines of the console.
        console_tail: String,
    },
    /// QEMU ended without both markers: the guest died or panicked before the job finished.
    #[error("the guest ended without finishing its job (status {status}); console ends with:\n{console_tail}")]
    NoMarkers {
        /// QEMU's exit status, as text.
        status: String,
        /// The last lines of the console.
        console_tail: String,
    },
    /// A file or directory could not be read, written or run.
    #[error("{path}: {source}")]
    Io {
        /// The path (or program).
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `/proc/schedstat` text that does not parse.
    #[error("schedstat line {line}: {value:?}: {reason}")]
    Schedstat {
        /// 1-based line number.
        line: usize,
        /// The offending token or line.
        value: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A topology report (JSON) that does not parse or is inconsistent.
    #[error("topology report: {message}")]
    Report {
        /// What is wrong, with the value.
        message: String,
    },
    /// A topology source could not be read.
    #[error(transparent)]
    Topology(#[from] zonal_topology::TopologyError),
}

impl GuestError {
    /// Whether the error is about the input (a spec, path, file or text) rather than a guest
    /// that failed to boot or finish: command lines exit with 2 for these, 1 for the others.
    #[must_use]
    pub fn is_input_error(&self) -> bool {
        !matches!(
            self,
            Self::QemuMissing { .. }
                | Self::OpenMpiMissing { .. }
                | Self::KernelMissing { .. }
                | Self::BusyboxMissing { .. }
                | Self::Timeout { .. }
                | Self::Silent { .. }
                | Self::NoMarkers { .. }
        )
    }
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> GuestError {
    let path = path.into();
    move |source| GuestError::Io { path, source }
}
