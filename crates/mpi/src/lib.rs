//! Zonal pools inside MPI ranks: one [`ThreadPool`](zonal_runtime::ThreadPool)
//! per rank, MPI through [rsmpi](mpi) (re-exported as [`mpi`]).
//!
//! Three pieces:
//!
//! - **Initialisation** ([`init_funneled`]): MPI with the threading level a pool needs,
//!   `MPI_THREAD_FUNNELED` — the pool's workers never call MPI; only the thread that
//!   initialised MPI does. A library that provides less is a typed error
//!   ([`MpiError::ThreadLevel`]), never a silent downgrade.
//! - **The node-local rank split** ([`node_ranks`], [`local_ranks`]): this rank's place
//!   among the ranks that share its machine, from MPI's shared-memory communicator
//!   (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)`), as a
//!   [`LocalRanks`] for [`ThreadPoolBuilder::local_ranks`](zonal_runtime::ThreadPoolBuilder::local_ranks):
//!   ranks the launcher did not bind split the machine's CPUs among themselves, so that no
//!   two ranks pin a worker to one CPU; a rank the launcher bound keeps its CPUs.
//! - **Communication next to the pool's work** ([`overlap`]): the calling thread runs the
//!   MPI part while the pool computes.
//!
//! # The overlap protocol
//!
//! [`overlap(&pool, compute, comm)`](overlap) is one step of a bulk-synchronous program
//! whose communication hides behind computation (a stencil's halo exchange behind its
//! interior sweep):
//!
//! 1. `compute` is spawned on the pool as one task (it may fork further work on the pool:
//!    `pool.join`, `pool.scope`, `pool.par_for`, …). It must not call MPI, and nothing it
//!    runs waits on an MPI request: no worker ever blocks in MPI.
//! 2. Meanwhile the calling thread — the one that initialised MPI (funneled) — runs
//!    `comm`: typically non-blocking sends and receives (`immediate_send`,
//!    `immediate_receive_into` in an [`mpi::request::scope`]) and their waits. It must not
//!    touch data that `compute` writes; Rust's borrows say so: both closures may borrow
//!    from the caller, `compute` shared or exclusively, `comm` the rest.
//! 3. When `comm` returns, the calling thread waits for `compute` (it does not run pool
//!    work: a thread that calls MPI is not a worker), then returns both results in an
//!    [`Overlapped`] with the time `compute` took on its worker, the time the calling
//!    thread spent in `comm` ([`Overlapped::comm_time`], which includes its MPI waits) and
//!    the time it then waited for the pool ([`Overlapped::wait_time`]).
//!
//! A panic in either closure resumes in the caller once the pool part has finished.
//! Calling [`overlap`] from a worker of the pool, or (after [`init_funneled`]) from a thread
//! other than the one that initialised MPI, is an [`MpiError`] and runs nothing.
//!
//! Nothing here needs `mpirun` except the MPI calls themselves: [`overlap`] is plain Rust
//! over the pool, and its unit tests run without MPI.
//!
//! The example `crates/mpi/examples/heat.rs` is a distributed 2D heat stencil built on all
//! three: `mpirun -np 2 --oversubscribe target/release/examples/heat`.

mod error;
mod init;
mod overlap;
mod ranks;

pub use error::MpiError;
pub use init::{check_threading, init_funneled, threading_rank, Mpi, REQUIRED_THREADING};
pub use mpi;
pub use overlap::{overlap, overlap_on, Overlapped};
pub use ranks::{choose_local_ranks, local_ranks, node_ranks, process_unbound, NodeRanks};
pub use zonal_runtime::LocalRanks;
