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
    /// Searching workers (step 0a), the pool over: at most half of the workers search.
    searching: CachePadded<AtomicUsize>,
    /// Searching workers per node (step 5'), when the pool has more than one node; with one
    /// node, `searching` serves.
    node_searching: Box<[CachePadded<AtomicUsize>]>,
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
    /// The sleep state of `n` workers on `nodes` nodes.
    pub(crate) fn new(n: usize, nodes: usize) -> Self {
        let per_node = if nodes > 1 { nodes } else { 0 };
        Self {
            sleepers: Mutex::new(Vec::with_capacity(n)),
            num_sleepers: AtomicUsize::new(0),
            searching: CachePadded::new(AtomicUsize::new(0)),
            node_searching: (0..per_node)
                .map(|_| CachePadded::new(AtomicUsize::new(0)))
                .collect(),
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

    /// Step 3: the re-search found work (or the wait is over): leave the list. `true`: a
    /// waker took us out of the list first (step 5) and made us a searcher (step 0a): the
    /// caller now holds a searcher's place and must give it back (steps 0b, 0c).
    #[cold]
    #[must_use]
    pub(crate) fn cancel(&self, token: Sleepy) -> bool {
        !self.deregister(token.worker)
    }

    /// Step 4: park until notified, then leave the list. `true`: woken by `wake_one` (a
    /// producer or a searcher, steps 0b, 0c, 5), and made a searcher by the waker; `false`:
    /// woken by a latch, a pinned task, shutdown, or a stale token (a spurious wake-up).
    /// (The model tests call it; the pool calls [`park_for`](Self::park_for).)
    #[cfg(all(test, zonal_loom))]
    #[cold]
    #[must_use]
    pub(crate) fn park(&self, token: Sleepy) -> bool {
        self.park_for(token, None)
    }

    /// [`park`](Self::park), for at most `timeout` when given (a displaced worker,
    /// `displacement.rs`, step 5). A timeout is a spurious wake-up: the worker leaves the
    /// list as after a stale token (`false`), unless a waker took it out first, which made
    /// it a searcher (`true`, as for `park`); that waker's token then arrives later and is
    /// stale.
    #[cold]
    #[must_use]
    pub(crate) fn park_for(&self, token: Sleepy, timeout: Option<std::time::Duration>) -> bool {
        let w = &self.workers[token.worker];
        let mut g = lock(&w.notified);
        match timeout {
            None => {
                while !*g {
                    g = w.cv.wait(g).unwrap_or_else(|e| e.into_inner());
                }
            }
            // One wait: a wake-up before the time is up, spurious or not, ends it too.
            Some(t) if !*g => {
                g =
                    w.cv.wait_timeout(g, t)
                        .map_or_else(|e| e.into_inner().0, |(g, _)| g);
            }
            Some(_) => {}
        }
        *g = false;
        drop(g);
        !self.deregister(token.worker)
    }

    /// Leaves the list; `false`: a waker (`wake_one`) took us out already, and counted us
    /// as a searcher.
    fn deregister(&self, worker: usize) -> bool {
        let mut list = lock(&self.sleepers);
        if let Some(i) = list.iter().position(|&(w, _)| w == worker) {
            list.swap_remove(i);
            self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
            true
        } else {
            false
        }
    }

    /// The searcher count that a task of `node` cares about (step 5'): its node's, or the
    /// pool's with one node (or for `u32::MAX`, any node).
    #[inline]
    fn searching_on(&self, node: u32) -> &AtomicUsize {
        self.node_searching
            .get(node as usize)
            .map_or(&*self.searching, |c| &**c)
    }

    /// Step 0a: try to become a searcher, which only `2 * searching < workers` allows.
    /// `true`: the caller searches (steals) and must give its place back (steps 0b, 0c).
    #[inline]
    pub(crate) fn try_search(&self, node: u32) -> bool {
        let n = self.workers.len();
        let mut s = self.searching.load(Ordering::Relaxed);
        loop {
            if 2 * s >= n {
                return false;
            }
            // Relaxed: the counts are hints for parallelism; no wake-up that liveness needs
            // depends on them (README, "Why no wake-up is lost").
            match self.searching.compare_exchange_weak(
                s,
                s + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(v) => s = v,
            }
        }
        if let Some(c) = self.node_searching.get(node as usize) {
            c.fetch_add(1, Ordering::Relaxed);
        }
        true
    }

    /// Searching workers, the pool over (the model tests' producer of step 0c reads it).
    #[cfg(all(test, zonal_loom))]
    pub(crate) fn searching(&self) -> usize {
        self.searching.load(Ordering::Relaxed)
    }

    /// Counts a worker of `node` as searching (`wake_one` does it for the worker it wakes,
    /// before the wake-up, so that no other producer wakes someone else meanwhile).
    fn add_searcher(&self, node: u32) {
        self.searching.fetch_add(1, Ordering::Relaxed);
        if let Some(c) = self.node_searching.get(node as usize) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Steps 0b, 0c: a searcher of `node` stops searching. `true`: it was the last one.
    #[inline]
    pub(crate) fn stop_searching(&self, node: u32) -> bool {
        if let Some(c) = self.node_searching.get(node as usize) {
            let prev = c.fetch_sub(1, Ordering::Relaxed);
            debug_assert!(prev > 0, "searcher count of node {node} underflows");
        }
        let prev = self.searching.fetch_sub(1, Ordering::Relaxed);
        debug_assert!(prev > 0, "searcher count underflows");
        prev == 1
    }

    /// Step 0b: a searcher of `node` found work. It stops searching and, if it was the last
    /// searcher and someone sleeps, wakes one more worker (of its node if it can), which
    /// searches: the chain that ramps parallelism up one worker at a time.
    #[inline]
    pub(crate) fn found_work(&self, node: u32) {
        if self.stop_searching(node) {
            // SeqCst fence: pairs with a sleeper's fence (step 1), so that the worker that
            // registers while we stop either is seen here or sees, in its re-search, what
            // we left in the queue we took from (README step 0b).
            fence(Ordering::SeqCst);
            if self.num_sleepers.load(Ordering::Relaxed) != 0 {
                self.wake_one(node, Some(&self.searching));
            }
        }
    }

    /// Step 0c: the last searcher gives up after seeing work it was refused (another zone's):
    /// wakes a sleeper of `node`, the work's, if there is one (none: every worker of that
    /// node is awake, and searches before it parks). `true`: one was woken.
    #[cold]
    pub(crate) fn wake_node(&self, node: u32) -> bool {
        let abort = crate::unwind::AbortIfPanic;
        let mut list = lock(&self.sleepers);
        let woke = match list.iter().position(|&(_, n)| n == node) {
            Some(i) => {
                let (w, n) = list.swap_remove(i);
                self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
                self.add_searcher(n);
                drop(list);
                self.notify(w);
                true
            }
            None => false,
        };
        std::mem::forget(abort);
        woke
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
            self.wake_one(node, None);
        }
    }

    /// Step 5': new work was pushed on a queue the pusher itself drains (its own deque or
    /// away queue). No fence: a wake-up missed here costs parallelism, never liveness,
    /// because the pusher is awake and searches its own queues before it can park (rayon's
    /// `new_internal_jobs` makes the same trade). The load still sees every registration
    /// that happened before it in the counter's modification order, so a worker long asleep
    /// is woken.
    ///
    /// And only if no worker of `node` searches: a searcher finds the task (or, being the
    /// last, wakes one more when it finds work, step 0b), so a burst of pushes wakes
    /// workers one at a time, not one per push (README step 5').
    #[inline]
    pub(crate) fn new_local_work(&self, node: u32) {
        if self.num_sleepers.load(Ordering::Relaxed) != 0
            && self.searching_on(node).load(Ordering::Relaxed) == 0
        {
            self.wake_one(node, Some(self.searching_on(node)));
        }
    }

    /// Takes one sleeper out of the list — one of `node` if there is one — counts it as a
    /// searcher (step 0a: a woken worker searches whatever the bound) and wakes it. With
    /// `unless`: not if that count is non-zero under the lock (someone else woke a searcher
    /// since our unlocked check).
    #[cold]
    fn wake_one(&self, node: u32, unless: Option<&AtomicUsize>) {
        // Runs inside user tasks (after a push): a bug here must not pass for a user panic.
        let abort = crate::unwind::AbortIfPanic;
        let mut list = lock(&self.sleepers);
        if unless.is_some_and(|c| c.load(Ordering::Relaxed) != 0) {
            drop(list);
            std::mem::forget(abort);
            return;
        }
        let pick = list
            .iter()
            .position(|&(_, n)| n == node)
            .or_else(|| list.len().checked_sub(1));
        if let Some(i) = pick {
            let (w, n) = list.swap_remove(i);
            self.num_sleepers.fetch_sub(1, Ordering::Relaxed);
            self.add_searcher(n);
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
