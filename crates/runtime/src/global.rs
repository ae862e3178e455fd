//! The global pool, as rayon's: the pool the free functions ([`join`](fn@crate::join),
//! [`scope`](fn@crate::scope), [`spawn`](fn@crate::spawn), …) use on a thread that is no worker
//! of any pool. It is built on first use from [`ThreadPoolBuilder::new`] (this machine,
//! the default policy, one worker per allowed CPU, pinned where possible: a worker that
//! cannot be pinned runs unpinned, and a machine that cannot be discovered is one flat
//! node, so that it builds on any platform), with [`NUM_THREADS_VAR`]
//! honoured, or installed once by [`ThreadPoolBuilder::build_global`]. It lives as long
//! as the process.
//!
//! On a worker of any pool, the free functions use that pool: the global pool is then
//! neither used nor built.

use std::sync::{Mutex, OnceLock};

use crate::builder::ThreadPoolBuilder;
use crate::error::{BuildError, ErrorKind};
use crate::pool::ThreadPool;
use crate::worker::WorkerThread;

/// The environment variable that sets the global pool's number of workers, as
/// `RAYON_NUM_THREADS` does rayon's: a decimal count, `0` meaning the default (one per
/// allowed CPU). It is read when the global pool is built (lazily, or by
/// [`ThreadPoolBuilder::build_global`] when the builder was not given a worker count).
/// A value that is not a count falls back to the default, as rayon's does, with a
/// `tracing` warning (target `zonal_runtime`) naming the variable and the value. With the
/// `rayon-env` feature, [`RAYON_NUM_THREADS_VAR`] is read when this one is unset, `0` or
/// not a count ([`env_num_threads`] has the whole order).
pub const NUM_THREADS_VAR: &str = "ZONAL_NUM_THREADS";

static GLOBAL: OnceLock<ThreadPool> = OnceLock::new();

/// Serialises `build_global` calls (the lazy path goes through the `OnceLock` alone).
static BUILDING: Mutex<()> = Mutex::new(());

/// The global pool, built on first use.
///
/// # Panics
/// If the default pool cannot be built (the message says why): the system failing (sysfs
/// present but unreadable or malformed, a worker thread the OS refuses). An invalid
/// [`NUM_THREADS_VAR`] is no such failure: the default count is used, with a warning.
/// Never because of pinning: the default mode runs a worker that cannot be pinned
/// unpinned, and a platform without discovery gets one flat node
/// ([`ThreadPoolBuilder`]'s "Runs anywhere").
/// Lazy initialisation has no caller to return an error to; build it with
/// [`ThreadPoolBuilder::build_global`] to handle the error instead.
pub(crate) fn global_pool() -> &'static ThreadPool {
    GLOBAL.get_or_init(|| {
        ThreadPoolBuilder::new()
            .build_global_pool()
            .unwrap_or_else(|e| panic!("zonal_runtime: cannot build the global thread pool: {e}"))
    })
}

/// Calls `on_worker` with the current thread's worker (of any pool) and `arg`; on any other
/// thread, `elsewhere` with the global pool (built if needed) and `arg`.
#[inline]
pub(crate) fn current_or_global<T, R>(
    arg: T,
    on_worker: impl FnOnce(&WorkerThread, T) -> R,
    elsewhere: impl FnOnce(&'static ThreadPool, T) -> R,
) -> R {
    WorkerThread::with_current(|w| match w {
        Some(w) => on_worker(w, arg),
        None => elsewhere(global_pool(), arg),
    })
}

/// Runs `op` on a worker and returns its result: right here when this thread is a worker of
/// any pool, otherwise on the global pool (built if needed), blocking this thread until
/// `op` returns. This is how rayon's free entry points behave; Zonal's parallel iterators
/// call it first, so that an iterator started on a plain thread runs on the global pool
/// with its per-node cut, like one started inside `install`.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// let w = zonal::runtime::in_worker(zonal::current_thread_index);
/// assert!(w.is_some()); // ran on a worker of the global pool
/// ```
pub fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce() -> R + Send,
    R: Send,
{
    current_or_global(op, |_, op| op(), |pool, op| pool.install(op))
}

/// rayon's variable for the global pool's number of workers, read after
/// [`NUM_THREADS_VAR`] when the `rayon-env` feature is on (the `rayon-core` and `rayon`
/// packages of the repository's `compat/` turn it on: Zonal then runs as rayon, and a
/// rayon user's `RAYON_NUM_THREADS` sizes the pool). rayon-core's deprecated
/// `RAYON_RS_NUM_CPUS` is read after it, as rayon-core reads it.
pub const RAYON_NUM_THREADS_VAR: &str = "RAYON_NUM_THREADS";

/// rayon-core's deprecated name for [`RAYON_NUM_THREADS_VAR`] (feature `rayon-env`).
#[cfg(feature = "rayon-env")]
const RAYON_RS_NUM_CPUS_VAR: &str = "RAYON_RS_NUM_CPUS";

/// The worker count the environment asks for, the one the global pool is built with when
/// it is given none: [`NUM_THREADS_VAR`] when it is a non-zero count; otherwise, with the
/// `rayon-env` feature, [`RAYON_NUM_THREADS_VAR`] when it is a non-zero count, then
/// `RAYON_RS_NUM_CPUS`; otherwise `None` (the default: one worker per allowed CPU).
///
/// A value that is not a count is skipped with a `tracing` warning (target
/// `zonal_runtime`) naming the variable and the value, and `0` is skipped silently: so an
/// invalid `RAYON_NUM_THREADS` gives the default count, as rayon's does. A count from the
/// rayon variables above [`MAX_THREADS`](crate::MAX_THREADS) is reduced to it, as rayon
/// reduces it to its own maximum; a [`NUM_THREADS_VAR`] above it stays as it is (the
/// build then fails, naming the count).
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// // Whatever the environment says, it is a count or nothing.
/// if let Some(n) = zonal::runtime::env_num_threads() {
///     assert!(n > 0);
/// }
/// ```
#[must_use]
pub fn env_num_threads() -> Option<usize> {
    let zonal = env_count(NUM_THREADS_VAR);
    #[cfg(feature = "rayon-env")]
    let zonal = zonal.or_else(|| {
        env_count(RAYON_NUM_THREADS_VAR)
            .or_else(|| env_count(RAYON_RS_NUM_CPUS_VAR))
            .map(|n| n.min(crate::MAX_THREADS))
    });
    zonal
}

/// `var`'s value when it is a non-zero count; `None` when it is unset, `0`, or not a count
/// (then with a warning naming the variable and the value).
fn env_count(var: &str) -> Option<usize> {
    let raw = std::env::var_os(var)?;
    let value = raw.to_string_lossy();
    value
        .trim()
        .parse::<usize>()
        .map_err(|reason| {
            tracing::warn!(
                target: "zonal_runtime",
                "{var}={value:?} is not a worker count ({reason}): using the \
                 default (one worker per allowed CPU)"
            );
        })
        .ok()
        .filter(|&n| n > 0)
}

impl<S: crate::thread_builder::ThreadSpawn> ThreadPoolBuilder<S> {
    /// Builds this pool and installs it as the global pool, the one the free functions
    /// ([`join`](fn@crate::join), [`scope`](fn@crate::scope), [`spawn`](fn@crate::spawn),
    /// [`current_num_threads`](crate::current_num_threads), …) use outside every pool. If the
    /// builder was given no worker count ([`num_threads`](Self::num_threads),
    /// [`worker_cpus`](Self::worker_cpus), [`workers_per_node`](Self::workers_per_node)),
    /// [`NUM_THREADS_VAR`] is honoured.
    ///
    /// ```no_run
    /// # use zonal_runtime::doc_facade as zonal;
    /// zonal::ThreadPoolBuilder::new().num_threads(4).build_global()?;
    /// assert_eq!(zonal::current_num_threads(), 4);
    /// # Ok::<(), zonal::BuildError>(())
    /// ```
    ///
    /// # Errors
    /// [`BuildError::is_global_pool_already_initialized`] if the global pool exists
    /// already (built by an earlier call, or lazily by a free function); otherwise as
    /// [`build`](Self::build) (an invalid [`NUM_THREADS_VAR`] is no error: the default
    /// count, with a warning).
    pub fn build_global(self) -> Result<(), BuildError> {
        let _serial = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
        if GLOBAL.get().is_some() {
            return Err(BuildError::new(ErrorKind::GlobalPoolAlreadyInitialized));
        }
        let pool = self.build_global_pool()?;
        // A lazy initialisation may have won the race meanwhile: our pool is then dropped
        // (its workers stop) and the caller told.
        GLOBAL
            .set(pool)
            .map_err(|_| BuildError::new(ErrorKind::GlobalPoolAlreadyInitialized))
    }

    /// [`build`](Self::build), with [`NUM_THREADS_VAR`] applied when no worker count was
    /// given.
    fn build_global_pool(self) -> Result<ThreadPool, BuildError> {
        if !self.worker_count_unset() {
            return self.build();
        }
        match env_num_threads() {
            Some(n) => self.num_threads(n).build(),
            None => self.build(),
        }
    }
}

#[cfg(all(test, target_os = "linux", not(zonal_loom)))]
mod tests {
    use super::*;

    /// The global pool's build path (the default pinning mode) where no worker can be
    /// pinned, as on a platform without thread affinity: the pool builds, unpinned, so the
    /// lazy global pool does not panic. (On the test's own workers, by name: the real
    /// global pool of this test binary is left alone.)
    #[test]
    fn the_global_pools_build_does_not_fail_on_pinning() {
        let allowed = crate::os::thread_affinity().unwrap();
        let _fail = crate::os::fail_pins::FailPins::new("pinfail-global-", &allowed);
        let pool = ThreadPoolBuilder::new()
            .thread_name(|i| format!("pinfail-global-{i}"))
            .build_global_pool()
            .unwrap();
        assert_eq!(pool.pin_fallback_workers(), pool.num_workers());
        assert_eq!(pool.install(|| crate::join(|| 1, || 2)), (1, 2));
    }
}
