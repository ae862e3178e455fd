//! Latches: one-shot signals a waiting thread blocks (or works) on, as rayon-core's `latch.rs`.
//!
//! A worker waiting on a [`CoreLatch`] keeps stealing; when it runs out of work it marks the
//! latch `SLEEPING` and parks. Whoever sets the latch sees `SLEEPING` in the same atomic
//! swap and wakes that one worker. Threads outside the pool wait on a [`LockLatch`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};

use crate::registry::Registry;
use crate::sync::AtomicUsize;

/// Set a latch.
pub(crate) trait Latch {
    /// Sets the latch, waking its owner if it sleeps.
    ///
    /// # Safety
    /// `this` must be valid on entry. Once the latch is set its owner may free it, so an
    /// implementation copies what it needs *before* setting and never touches `this` after.
    unsafe fn set(this: *const Self);
}

/// Latches a worker can wait on while working.
pub(crate) trait AsCoreLatch {
    fn as_core_latch(&self) -> &CoreLatch;
}

/// Not set; the owner is awake (working or searching).
const UNSET: usize = 0;
/// Not set; the owner is parked (or about to park) and must be woken by the setter.
const SLEEPING: usize = 1;
/// Set: terminal.
const SET: usize = 2;

/// The state word of a latch a worker waits on: `UNSET → SLEEPING → UNSET …`, then `SET`.
#[derive(Debug)]
pub(crate) struct CoreLatch {
    state: AtomicUsize,
}

impl CoreLatch {
    pub(crate) fn new() -> Self {
        Self {
            state: AtomicUsize::new(UNSET),
        }
    }

    /// Whether the latch is set.
    #[inline]
    pub(crate) fn probe(&self) -> bool {
        // Acquire: pairs with the AcqRel swap in `set`, so that the job's result (written
        // before the latch was set) is visible once we see SET.
        self.state.load(Ordering::Acquire) == SET
    }

    /// Announces that the owner is about to park. `false` if the latch is already set.
    #[inline]
    pub(crate) fn fall_asleep(&self) -> bool {
        // AcqRel: a read-modify-write on the latch word itself. `set` swaps the same word,
        // so exactly one of (our CAS, its swap) comes first in the word's modification
        // order: either we fail and see SET, or the setter sees SLEEPING and wakes us. The
        // Acquire half makes the result visible when we fail.
        self.state
            .compare_exchange(UNSET, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The owner woke up: back to `UNSET` unless the latch was set meanwhile.
    #[inline]
    pub(crate) fn wake_up(&self) {
        // Relaxed on failure: the owner re-probes (Acquire) before reading any result.
        let _ = self
            .state
            .compare_exchange(SLEEPING, UNSET, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Sets the latch; returns whether the owner was asleep (and must be woken).
    ///
    /// # Safety
    /// `this` valid on entry; not touched after the swap.
    #[inline]
    pub(crate) unsafe fn set(this: *const Self) -> bool {
        // SAFETY: valid on entry (caller).
        // AcqRel: Release publishes the job result to the owner's Acquire probe; the swap
        // is ordered against `fall_asleep`'s CAS through the word's modification order.
        let old = unsafe { (*this).state.swap(SET, Ordering::AcqRel) };
        old == SLEEPING
    }
}

impl AsCoreLatch for CoreLatch {
    fn as_core_latch(&self) -> &CoreLatch {
        self
    }
}

/// A latch set by another worker of the same pool for a worker blocked in `join`.
pub(crate) struct SpinLatch<'r> {
    core: CoreLatch,
    registry: &'r Registry,
    target: usize,
}

impl<'r> SpinLatch<'r> {
    pub(crate) fn new(registry: &'r Registry, target: usize) -> Self {
        Self {
            core: CoreLatch::new(),
            registry,
            target,
        }
    }

    #[inline]
    pub(crate) fn probe(&self) -> bool {
        self.core.probe()
    }
}

impl AsCoreLatch for SpinLatch<'_> {
    fn as_core_latch(&self) -> &CoreLatch {
        &self.core
    }
}

impl Latch for SpinLatch<'_> {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid on entry (caller). Copy the fields out before setting: the owner may
        // free the latch as soon as it sees SET. The registry outlives the setter, which is
        // one of its workers (the job was queued in this registry) and holds an `Arc` to it.
        let (registry, target) = unsafe { ((*this).registry as *const Registry, (*this).target) };
        // SAFETY: `this` valid until the swap inside `set`.
        if unsafe { CoreLatch::set(&(*this).core) } {
            // SAFETY: see above: the registry is kept alive by the current worker.
            unsafe { (*registry).wake_worker(target) };
        }
    }
}

/// A latch set by a worker of *another* pool for a worker of ours blocked in `install`
/// on that pool (rayon's cross-registry `SpinLatch`). The waiter keeps working on its own
/// pool meanwhile. The setter holds no reference to our registry, so the latch owns one:
/// it is cloned before the latch is set, since the waiter may return and our pool be
/// dropped the moment it sees `SET`.
pub(crate) struct CrossLatch {
    core: CoreLatch,
    registry: Arc<Registry>,
    target: usize,
}

impl CrossLatch {
    pub(crate) fn new(registry: &Arc<Registry>, target: usize) -> Self {
        Self {
            core: CoreLatch::new(),
            registry: Arc::clone(registry),
            target,
        }
    }
}

impl AsCoreLatch for CrossLatch {
    fn as_core_latch(&self) -> &CoreLatch {
        &self.core
    }
}

impl Latch for CrossLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid on entry (caller). Our own reference to the waiter's registry,
        // taken before the swap: after it the latch may be gone.
        let (registry, target) = unsafe { (Arc::clone(&(*this).registry), (*this).target) };
        // SAFETY: `this` valid until the swap inside `set`.
        if unsafe { CoreLatch::set(&(*this).core) } {
            registry.wake_worker(target);
        }
    }
}

/// A latch for threads outside the pool: a mutex and a condition variable.
#[derive(Debug, Default)]
pub(crate) struct LockLatch {
    set: Mutex<bool>,
    cv: Condvar,
}

impl LockLatch {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Blocks until set.
    pub(crate) fn wait(&self) {
        let mut g = self.set.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid on entry. The waiter cannot return (and free the latch) before it
        // re-acquires the mutex, which happens only after our guard is dropped, our last use.
        let this = unsafe { &*this };
        let mut g = this.set.lock().unwrap_or_else(|e| e.into_inner());
        *g = true;
        this.cv.notify_all();
    }
}

/// A counting latch for scopes whose owner is a worker (of the scope's pool, or of another
/// pool for an `in_place_scope` called there): set when the count drops to zero, waking the
/// owner. The setter may be a worker of another pool than the owner's, so the latch owns a
/// reference to the owner's registry, cloned before the latch is set (as [`CrossLatch`]).
pub(crate) struct CountLatch {
    counter: AtomicUsize,
    core: CoreLatch,
    registry: Arc<Registry>,
    owner: usize,
}

impl CountLatch {
    /// A latch counting one (the owner's own operation); `registry` is the owner's.
    pub(crate) fn new(registry: &Arc<Registry>, owner: usize) -> Self {
        Self {
            counter: AtomicUsize::new(1),
            core: CoreLatch::new(),
            registry: Arc::clone(registry),
            owner,
        }
    }

    /// One more job to wait for. Called by a holder of a count, so it cannot race to zero.
    #[inline]
    pub(crate) fn increment(&self) {
        self.counter.fetch_add(1, Ordering::Relaxed);
    }
}

impl AsCoreLatch for CountLatch {
    fn as_core_latch(&self) -> &CoreLatch {
        &self.core
    }
}

impl Latch for CountLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid on entry; we hold one count, so the owner cannot free the latch
        // before the core latch below is set.
        let me = unsafe { &*this };
        // AcqRel: the last decrement must see every other job's writes (Acquire) and
        // publish ours (Release) before the core latch is set.
        if me.counter.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Our own reference to the owner's registry, taken before the swap: after it
            // the latch may be gone, and the setter need not be a worker of that registry.
            let (registry, owner) = (Arc::clone(&me.registry), me.owner);
            // SAFETY: valid until the swap inside `set`; not touched afterwards.
            if unsafe { CoreLatch::set(&me.core) } {
                registry.wake_worker(owner);
            }
        }
    }
}

/// A counting latch for scopes whose owner is no worker (`in_place_scope` on a plain
/// thread): the owner blocks on a [`LockLatch`] set when the count drops to zero.
#[derive(Debug)]
pub(crate) struct CountLockLatch {
    counter: AtomicUsize,
    lock: LockLatch,
}

impl CountLockLatch {
    /// A latch counting one (the owner's own operation).
    pub(crate) fn new() -> Self {
        Self {
            counter: AtomicUsize::new(1),
            lock: LockLatch::new(),
        }
    }

    /// One more job to wait for (called by a holder of a count).
    #[inline]
    pub(crate) fn increment(&self) {
        self.counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Blocks until the count is zero.
    pub(crate) fn wait(&self) {
        self.lock.wait();
    }
}

impl Latch for CountLockLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid on entry; we hold one count, so the owner cannot free the latch
        // before the lock latch is set.
        let me = unsafe { &*this };
        // AcqRel: as `CountLatch`.
        if me.counter.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: valid on entry; `LockLatch::set` does not touch it after the owner
            // may return.
            unsafe { LockLatch::set(&me.lock) };
        }
    }
}

/// A scope's latch: its owner waits working (a worker, [`CountLatch`]) or blocked (any
/// other thread, [`CountLockLatch`]).
pub(crate) enum ScopeLatch {
    Stealing(CountLatch),
    Blocking(CountLockLatch),
}

impl ScopeLatch {
    /// One more job to wait for (called by a holder of a count).
    #[inline]
    pub(crate) fn increment(&self) {
        match self {
            Self::Stealing(l) => l.increment(),
            Self::Blocking(l) => l.increment(),
        }
    }
}

impl Latch for ScopeLatch {
    unsafe fn set(this: *const Self) {
        // SAFETY: valid on entry (caller); each variant's `set` copies what it needs before
        // the latch may be freed.
        unsafe {
            match &*this {
                Self::Stealing(l) => Latch::set(l),
                Self::Blocking(l) => Latch::set(l),
            }
        }
    }
}
