//! This rank's place among the ranks on its machine, from MPI's shared-memory
//! communicator, as the pool builder's [`LocalRanks`].

use mpi::topology::Communicator;
use zonal_runtime::LocalRanks;

use crate::MpiError;

/// This rank among the ranks that share its machine (MPI's shared-memory communicator).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRanks {
    /// This rank's rank in the shared-memory communicator, below `size`.
    pub rank: usize,
    /// How many ranks share this machine, at least 1.
    pub size: usize,
}

impl NodeRanks {
    /// From MPI's rank and size (`i32`s), checked.
    ///
    /// # Errors
    /// [`MpiError::BadRanks`] for a negative rank, a size below 1 or a rank not below the
    /// size.
    pub fn new(rank: i32, size: i32) -> Result<Self, MpiError> {
        let bad = || MpiError::BadRanks {
            rank: i64::from(rank),
            size: i64::from(size),
        };
        let r = usize::try_from(rank).map_err(|_| bad())?;
        let s = usize::try_from(size).map_err(|_| bad())?;
        if s == 0 || r >= s {
            return Err(bad());
        }
        Ok(Self { rank: r, size: s })
    }

    /// This rank's share, taken whether the launcher bound the rank or not:
    /// `LocalRanks::Split { rank, size }`.
    #[must_use]
    pub fn split(self) -> LocalRanks {
        LocalRanks::Split {
            rank: self.rank,
            size: self.size,
        }
    }
}

/// This rank's place among the ranks of `comm` on its machine: `comm` split by
/// `MPI_COMM_TYPE_SHARED` (rsmpi's `split_shared`, keyed by the rank in `comm`, so local
/// ranks follow `comm`'s order). A collective call: every rank of `comm` makes it.
///
/// # Errors
/// [`MpiError::BadRanks`] if MPI reports an impossible rank or size.
pub fn node_ranks<C: Communicator>(comm: &C) -> Result<NodeRanks, MpiError> {
    let shared = comm.split_shared(comm.rank());
    NodeRanks::new(shared.rank(), shared.size())
}

/// The [`LocalRanks`] for a rank at `ranks` on its machine, given whether the launcher left
/// it unbound: an unbound rank among several takes its share ([`NodeRanks::split`]), so that
/// the ranks on the machine pin their workers to disjoint CPUs; a rank the launcher bound
/// (`--bind-to core|socket|numa`, `srun --cpu-bind`), or alone on its machine, uses its
/// allowed CPUs as they are ([`LocalRanks::Ignore`]).
///
/// ```
/// use zonal_mpi::{choose_local_ranks, LocalRanks, NodeRanks};
/// let two = NodeRanks { rank: 1, size: 2 };
/// assert_eq!(choose_local_ranks(two, true), LocalRanks::Split { rank: 1, size: 2 });
/// assert_eq!(choose_local_ranks(two, false), LocalRanks::Ignore);
/// assert_eq!(choose_local_ranks(NodeRanks { rank: 0, size: 1 }, true), LocalRanks::Ignore);
/// ```
#[must_use]
pub fn choose_local_ranks(ranks: NodeRanks, unbound: bool) -> LocalRanks {
    if ranks.size > 1 && unbound {
        ranks.split()
    } else {
        LocalRanks::Ignore
    }
}

/// Whether the calling thread may run on every online CPU its cgroup allows, i.e. no
/// launcher bound it ([`zonal_runtime::is_unbound`] over this machine's CPUs). Call it on
/// the thread that builds the pool, before building it.
///
/// # Errors
/// [`MpiError::Topology`] when this machine's CPUs cannot be read.
pub fn process_unbound() -> Result<bool, MpiError> {
    Ok(zonal_runtime::is_unbound_here(
        &zonal_topology::allowed_cpus()?,
    )?)
}

/// The pool builder's [`LocalRanks`] for this rank of `comm`: [`node_ranks`] and
/// [`process_unbound`] through [`choose_local_ranks`]. A collective call over `comm`.
///
/// ```no_run
/// let mpi = zonal_mpi::init_funneled()?;
/// let pool = zonal_runtime::ThreadPoolBuilder::new()
///     .local_ranks(zonal_mpi::local_ranks(&mpi.world())?)
///     .policy_name("conservative-soft")
///     .build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`node_ranks`] and [`process_unbound`].
pub fn local_ranks<C: Communicator>(comm: &C) -> Result<LocalRanks, MpiError> {
    let ranks = node_ranks(comm)?;
    Ok(choose_local_ranks(ranks, process_unbound()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_checked() {
        assert_eq!(
            NodeRanks::new(1, 4).unwrap(),
            NodeRanks { rank: 1, size: 4 }
        );
        for (r, s) in [(-1, 4), (4, 4), (0, 0), (0, -2), (5, 2)] {
            assert!(
                matches!(NodeRanks::new(r, s), Err(MpiError::BadRanks { .. })),
                "{r} of {s}"
            );
        }
    }

    #[test]
    fn only_unbound_ranks_among_several_split() {
        for size in 1..5 {
            for rank in 0..size {
                for unbound in [false, true] {
                    let got = choose_local_ranks(NodeRanks { rank, size }, unbound);
                    let want = if size > 1 && unbound {
                        LocalRanks::Split { rank, size }
                    } else {
                        LocalRanks::Ignore
                    };
                    assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn this_process_can_be_read() {
        // Under `cargo test` nothing is known about binding; reading must succeed.
        assert!(process_unbound().is_ok());
    }
}
