//! The crate's one error type.

use mpi::Threading;

/// What can go wrong in `zonal-mpi`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MpiError {
    /// MPI was initialised already (by this crate, rsmpi or another library): the threading
    /// level it was given cannot be chosen any more.
    #[error("MPI is already initialised; initialise it once, with zonal_mpi::init_funneled")]
    AlreadyInitialized,
    /// The MPI library provides a lower threading level than the pool needs.
    #[error(
        "the MPI library provides threading level {provided:?}, a Zonal pool needs at least \
         {required:?} (only the thread that initialised MPI calls it, while the pool's workers run)"
    )]
    ThreadLevel {
        /// The level asked for.
        required: Threading,
        /// The level the library gave.
        provided: Threading,
    },
    /// [`overlap`](crate::overlap) was called from a worker of the pool: its MPI part would
    /// block a worker (and, funneled, run on a thread that may not call MPI).
    #[error(
        "overlap called on worker {worker} of the pool: call it from the thread that initialised MPI"
    )]
    OnWorker {
        /// The worker's index in the pool.
        worker: usize,
    },
    /// [`overlap`](crate::overlap) was called from a thread other than the one that
    /// initialised MPI with [`init_funneled`](crate::init_funneled) (funneled: only that
    /// thread may call MPI).
    #[error("overlap called from a thread that did not initialise MPI (funneled: only that thread may call MPI)")]
    NotInitThread,
    /// Reading this machine's CPUs (to tell whether the launcher bound this rank) failed.
    #[error("reading this machine's CPUs: {0}")]
    Topology(#[from] zonal_topology::TopologyError),
    /// MPI reported a rank or size that is not one (negative, or a rank not below its size).
    #[error("MPI reported local rank {rank} of {size}")]
    BadRanks {
        /// The rank reported.
        rank: i64,
        /// The size reported.
        size: i64,
    },
}
