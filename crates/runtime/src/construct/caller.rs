//! The caller's thread as worker 0 (`use_current_thread`): its affinity is saved before the
//! build pins it and given back when the pool ends, as rayon, which never pins its caller,
//! leaves it.
//!
//! # The protocol
//!
//! 1. **Saved before anything is pinned**: the build reads the calling thread's own mask
//!    (`sched_getaffinity(0)`) and id (`gettid`) into a [`Caller`], which the registry
//!    keeps (an extension), and leaves the thread a [`Watch`] on it (a thread-local).
//! 2. **Pinned** as worker 0 once the other workers have started (`construct.rs`).
//! 3. **Given back** at the pool's end: [`give_back`] runs from `ThreadPool`'s drop, on
//!    whichever thread drops it (at the end of `shutdown_and_wait` too, once the adopted
//!    thread has worked through the last task). It takes the saved mask out and, through
//!    `displacement::release` (under its re-pin lock), marks worker 0 released — its
//!    displacement watch stops for good at its next check, instead of pinning the thread
//!    again — and sets the mask back with `sched_setaffinity(tid)`. Once only.
//! 4. **The thread id stays the thread's**: a thread id is reused once its thread exits.
//!    The adopted thread's [`Watch`] takes the saved mask out at the thread's exit (its
//!    thread-local destructor), under the same mutex [`give_back`] holds while it calls
//!    the kernel: a thread whose destructor waits for that mutex has not exited, so the
//!    id names it; one whose destructor ran left nothing to give back.
//!
//! A pool that did not adopt its caller has a [`Caller`] with nothing saved.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use crate::registry::Registry;

/// What the pool saved of its caller's thread (protocol, step 1), until step 3 or the
/// thread's exit takes it.
#[derive(Debug)]
struct Saved {
    tid: i64,
    cpus: Vec<u32>,
}

/// The registry's record of the pool's caller thread (an extension: one per pool).
#[derive(Debug, Default)]
pub(crate) struct Caller {
    /// Whether worker 0 is the caller's thread (`use_current_thread`).
    adopted: bool,
    saved: Arc<Mutex<Option<Saved>>>,
}

thread_local! {
    /// The adopted thread's side of step 4 (a thread is adopted by one pool at most).
    static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
}

/// Takes the saved mask out when its thread exits (step 4).
struct Watch(Arc<Mutex<Option<Saved>>>);

impl Drop for Watch {
    fn drop(&mut self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl Caller {
    /// The record of a pool whose worker 0 is not its caller.
    pub(crate) fn none() -> Self {
        Self::default()
    }

    /// The record of a pool that adopted its caller without pinning it (nothing to give
    /// back).
    pub(crate) fn adopted_unpinned() -> Self {
        Self {
            adopted: true,
            ..Self::default()
        }
    }

    /// Step 1, on the calling thread, before anything is pinned: saves its mask and id
    /// (nothing where the platform cannot say; the thread is then left as pinned, which
    /// is all such a platform can do).
    pub(crate) fn save_current() -> Self {
        let saved = match (crate::os::current_thread_id(), crate::os::thread_affinity()) {
            (Some(tid), Ok(cpus)) => Some(Saved { tid, cpus }),
            (_, Err(e)) => {
                tracing::debug!(target: "zonal_runtime", "the caller's affinity cannot be read: {e}; it is not given back");
                None
            }
            (None, Ok(_)) => None,
        };
        let saved = Arc::new(Mutex::new(saved));
        WATCH.with(|w| *w.borrow_mut() = Some(Watch(Arc::clone(&saved))));
        Self {
            adopted: true,
            saved,
        }
    }

    /// Whether worker 0 is the caller's thread (`use_current_thread`): it runs the pool's
    /// work only while it waits in the pool.
    pub(crate) fn adopted(&self) -> bool {
        self.adopted
    }
}

/// Step 3: gives the caller's thread of `registry`'s pool its saved mask back, if the pool
/// adopted it and this was not done yet. Best effort: a mask the kernel refuses now (a CPU
/// of it went offline) is reported (`tracing`), and the thread keeps what it has.
pub(crate) fn give_back(registry: &Registry) {
    let caller = registry.extension::<Caller>();
    if !caller.adopted {
        return;
    }
    // Held until the kernel has the mask: the thread cannot finish exiting meanwhile
    // (step 4).
    let mut saved = caller.saved.lock().unwrap_or_else(|e| e.into_inner());
    let Some(Saved { tid, cpus }) = saved.take() else {
        return;
    };
    let counters = &registry.shared[0].counters;
    crate::displacement::release(counters, || {
        if let Err(e) = crate::os::set_thread_affinity_of(tid, &cpus) {
            tracing::warn!(target: "zonal_runtime", "cannot give the caller's thread (worker 0) its CPUs {cpus:?} back: {e}");
        }
    });
}
