//! Panic discipline: user panics are caught at the job boundary and carried to whoever
//! joins; a panic inside the runtime itself aborts the process (rayon's `AbortIfPanic`).

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// Runs `f`, turning a panic into `Err(payload)`.
#[inline]
pub(crate) fn halt_unwinding<F, R>(f: F) -> std::thread::Result<R>
where
    F: FnOnce() -> R,
{
    panic::catch_unwind(AssertUnwindSafe(f))
}

/// Resumes a panic caught by [`halt_unwinding`].
#[cold]
pub(crate) fn resume_unwinding(payload: Box<dyn Any + Send>) -> ! {
    panic::resume_unwind(payload)
}

/// Aborts the process if dropped while unwinding: put one around runtime internals that must
/// not unwind (a half-updated queue or latch would lose or duplicate tasks). Defuse it on the
/// success path with `mem::forget`.
pub(crate) struct AbortIfPanic;

impl Drop for AbortIfPanic {
    #[cold]
    fn drop(&mut self) {
        eprintln!("zonal-runtime: unexpected panic inside the runtime; aborting");
        std::process::abort();
    }
}
