//! Parking idle workers without lost wake-ups. The protocol is written down in
//! `README.md`, next to
//! this file; the comments below cite its numbered steps.

use std::sync::atomic::Ordering;

use crate::sync::{fence, AtomicUsize, Condvar, Mutex, MutexGuard};

use crossbeam_utils::CachePadded;

/// One worker's parking spot.
#[derive(Debug, Default)]
struct WorkerSleep {
    /// A wake-up token: set by wakers, consumed by the worker when it unparks.
    notified: Mutex<bool>,
    cv: Condvar,
}

/// The pool's sleep state.
#[derive(Debug)]
pub(crate) struct Sleep {
    /// Workers registered as sleepy or parked (step 1), as `(worker, node)`.
    sleepers: Mutex<Vec<(usize, u32)>>,
    /// `sleepers.len()`, readable without the lock (steps 2 and 5).
    num_sleepers: AtomicUsize,
    workers: Box<[CachePadded<WorkerSleep>]>,
}

/// Evidence that a worker registered as sleepy (step 1); consumed by [`Sleep::park`] or
/// [`Sleep::cancel`]. Producing one is evidence that the worker is in the sleepers list or
/// has been notified.
#[must_use]
#[derive(Debug)]
pub(crate) struct Sleepy {
    worker: usize,
}

impl Sleep {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            sleepers: Mutex::new(Vec::with_capacity(n)),
            num_sleepers: AtomicUsize::new(0),
            workers: (0..n)
                .map(|_| CachePadded::new(WorkerSleep::default()))
                .collect(),
        }
    }

    /// Step 1: register as sleepy. The caller must then search every queue once more
    /// (step 2) before parking.
    #[cold]
    pub(crate) fn get_sleepy(&self, worker: usize, node: u32) -> Sleepy {
        // A stale token from an earlier registration only causes a spurious wake-up; a token
        // for *this* registration cannot exist yet, as nobody has seen us in the list.
        *lock(&self.workers[worker].notified) = false;
        let mut list = lock(&self.sleepers);
        list.push((worker, node));
        // SeqCst (with the fence below): the Dekker handshake of step 2 vs step 5.
        self.num_sleepers.fetch_add(1, Ordering::SeqCst);
        drop(list);
        // SeqCst fence: orders our registration before our re-search of the queues; pairs
        // with the producer's fence after its push (step 5). See README, "Why no wake-up is
        // lost".
        fence(Ordering::SeqCst);
        Sleepy { worker }
    }

    /// Step 3: the re-search found work (or the wait is over): leave the list.
    #[cold]
    pub(crate) fn cancel(&self, token: Sleepy) {
        self.deregister(token.worker);
    }

    /// Step 4: park until notified, then leave the list.
    #[cold]
    pub(crate) fn park(&self, token: Sleepy) {
        let w = &self.workers[token.worker];
        let mut g = lock(&w.notified);
        while !*g {
            g = w.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        *g = false;
        drop(g);
        self.deregister(token.worker);
    }

    fn deregister(&self, worker: usize) {
        let mut list = lock(&self.sleepers);
        if let Some(i) = list.iter().position(|&(w, _)| w == worker) {
            list.swap_remove(i);
            self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Step 5: new work was pushed; wake one sleeper, preferring one on `node`
    /// (`u32::MAX`: any). Call after the push.
    #[inline]
    pub(crate) fn new_work(&self, node: u32) {
        // SeqCst fence: pairs with the fence in `get_sleepy` (README step 5). After it, a
        // Relaxed load suffices: if the sleeper's fence came first we see its increment,
        // otherwise its re-search sees our push.
        fence(Ordering::SeqCst);
        if self.num_sleepers.load(Ordering::Relaxed) != 0 {
            self.wake_one(node);
        }
    }

    /// Step 5': new work was pushed on a queue the pusher itself drains (its own deque or
    /// away queue). No fence: a wake-up missed here costs parallelism, never liveness,
    /// because the pusher is awake and searches its own queues before it can park (rayon's
    /// `new_internal_jobs` makes the same trade). The load still sees every registration
    /// that happened before it in the counter's modification order, so a worker long asleep
    /// is woken.
    #[inline]
    pub(crate) fn new_local_work(&self, node: u32) {
        if self.num_sleepers.load(Ordering::Relaxed) != 0 {
            self.wake_one(node);
        }
    }

    #[cold]
    fn wake_one(&self, node: u32) {
        // Runs inside user tasks (after a push): a bug here must not pass for a user panic.
        let abort = crate::unwind::AbortIfPanic;
        let mut list = lock(&self.sleepers);
        let pick = list
            .iter()
            .position(|&(_, n)| n == node)
            .or_else(|| list.len().checked_sub(1));
        if let Some(i) = pick {
            let (w, _) = list.swap_remove(i);
            self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
            drop(list);
            self.notify(w);
        }
        std::mem::forget(abort);
    }

    /// Wakes one specific worker (a latch it waits on was set, or work was pinned to it).
    #[cold]
    pub(crate) fn wake_worker(&self, worker: usize) {
        self.notify(worker);
    }

    /// Wakes every worker (shutdown).
    #[cold]
    pub(crate) fn wake_all(&self) {
        for w in 0..self.workers.len() {
            self.notify(w);
        }
    }

    fn notify(&self, worker: usize) {
        let w = &self.workers[worker];
        let mut g = lock(&w.notified);
        *g = true;
        w.cv.notify_one();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks (plain pushes and flag writes); recover anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(all(test, zonal_loom))]
mod loom;
