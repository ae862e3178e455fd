//! MPI initialised funneled: the thread that calls [`init_funneled`] is the only one that
//! talks to MPI.

use std::sync::OnceLock;
use std::thread::ThreadId;

use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::Threading;

use crate::MpiError;

/// The threading level a Zonal pool needs: `MPI_THREAD_FUNNELED`. The pool's workers never
/// call MPI, so more (serialized, multiple) is accepted and not needed.
pub const REQUIRED_THREADING: Threading = Threading::Funneled;

/// The thread that initialised MPI through [`init_funneled`].
static INIT_THREAD: OnceLock<ThreadId> = OnceLock::new();

/// The thread that initialised MPI through [`init_funneled`], if it has been called.
pub(crate) fn init_thread() -> Option<ThreadId> {
    INIT_THREAD.get().copied()
}

/// MPI's threading levels in the standard's order: single 0, funneled 1, serialized 2,
/// multiple 3 (`Threading` itself has no order).
#[must_use]
pub fn threading_rank(t: Threading) -> u8 {
    match t {
        Threading::Single => 0,
        Threading::Funneled => 1,
        Threading::Serialized => 2,
        Threading::Multiple => 3,
    }
}

/// Whether `provided` satisfies `required`.
///
/// ```
/// use zonal_mpi::{check_threading, mpi::Threading, MpiError};
/// assert!(check_threading(Threading::Funneled, Threading::Multiple).is_ok());
/// let e = check_threading(Threading::Funneled, Threading::Single).unwrap_err();
/// assert!(matches!(e, MpiError::ThreadLevel { provided: Threading::Single, .. }));
/// ```
///
/// # Errors
/// [`MpiError::ThreadLevel`] when `provided` is below `required`.
pub fn check_threading(required: Threading, provided: Threading) -> Result<(), MpiError> {
    if threading_rank(provided) < threading_rank(required) {
        Err(MpiError::ThreadLevel { required, provided })
    } else {
        Ok(())
    }
}

/// MPI, initialised funneled: the [`Universe`] (MPI is finalised when it drops), the
/// threading level the library provides, and the thread that may call MPI.
pub struct Mpi {
    universe: Universe,
    threading: Threading,
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi")
            .field("threading", &self.threading)
            .finish_non_exhaustive()
    }
}

impl Mpi {
    /// The world communicator.
    #[must_use]
    pub fn world(&self) -> SimpleCommunicator {
        self.universe.world()
    }

    /// The universe (finalises MPI when this `Mpi` drops).
    #[must_use]
    pub fn universe(&self) -> &Universe {
        &self.universe
    }

    /// The threading level the library provides (at least [`REQUIRED_THREADING`]).
    #[must_use]
    pub fn threading(&self) -> Threading {
        self.threading
    }
}

/// Initialises MPI with `MPI_THREAD_FUNNELED` ([`REQUIRED_THREADING`]) and records the
/// calling thread as the one that talks to MPI ([`overlap`](crate::overlap) checks it).
/// Call it once, on the thread that will run the program's communication (usually
/// `main`'s), before building the pool.
///
/// # Errors
/// [`MpiError::AlreadyInitialized`] when MPI was initialised already;
/// [`MpiError::ThreadLevel`] when the library provides less than funneled (MPI is then
/// finalised again before the error returns).
pub fn init_funneled() -> Result<Mpi, MpiError> {
    let (universe, threading) =
        mpi::initialize_with_threading(REQUIRED_THREADING).ok_or(MpiError::AlreadyInitialized)?;
    check_threading(REQUIRED_THREADING, threading)?;
    // A second successful initialisation is impossible (rsmpi refuses it above), so the
    // cell is empty here unless an earlier universe was dropped; the first thread stays.
    let _ = INIT_THREAD.set(std::thread::current().id());
    Ok(Mpi {
        universe,
        threading,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Threading; 4] = [
        Threading::Single,
        Threading::Funneled,
        Threading::Serialized,
        Threading::Multiple,
    ];

    #[test]
    fn funneled_and_above_pass_single_fails() {
        for t in ALL {
            let r = check_threading(REQUIRED_THREADING, t);
            assert_eq!(r.is_ok(), t != Threading::Single, "{t:?}");
        }
    }

    #[test]
    fn levels_are_ordered_as_the_standard() {
        let ranks: Vec<u8> = ALL.iter().map(|&t| threading_rank(t)).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
        for a in ALL {
            for b in ALL {
                assert_eq!(
                    check_threading(a, b).is_ok(),
                    threading_rank(b) >= threading_rank(a)
                );
            }
        }
    }

    #[test]
    fn the_error_names_both_levels() {
        let e = check_threading(Threading::Funneled, Threading::Single).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("Single") && s.contains("Funneled"), "{s}");
    }
}
