//! The pool's queue types, each keeping its own invariants, the one rule for which of a
//! worker's own queues a task waits in, and (in [`push`]) the one push-and-wake function of
//! each queue kind (core).
//!
//! No queue of the pool can be pushed to from outside this module: the types' `push`
//! methods are private to it, and [`push`] pairs every push with its wake-up
//! (`sleep/README.md`, steps 5, 5', 5'').
//!
//! - [`AwayQueue`]: a worker's queue of tasks away from home or already migrated, with the
//!   length bound thieves and the balancer read instead of the queue itself. The bound is
//!   kept by the type: no caller touches the counter.
//! - [`OwnQueue::of`]: aged → the worker's inbox, which no thief sees; else → its away queue.
//!   Every path that puts a non-fresh task on a worker's own queues asks it (`route.rs`: new
//!   and woken tasks; `balance/driver.rs`: moved and held-back tasks).
//! - [`Deque`]: a worker's LIFO deque of fresh tasks at home; [`SharedQueue`]: an injector
//!   any thread pushes to (a worker's inbox, a node's injector).
//! - [`FifoQueue`]: the jobs of FIFO spawns waiting for their proxies (`fifo.rs`), which
//!   are not the pool's queues: what is queued is their proxy.
//! - [`pop_injector`], [`steal_loop`]: taking from crossbeam's queues.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use zonal_policy::Ageing;

use crate::task_meta::{Meta, Task};

/// A worker's away queue: tasks that migrated or live away from their origin. Any thread
/// pushes; the owner, thieves (one task at a time, each checked) and balancing passes take.
///
/// Invariant: [`len_bound`](Self::len_bound) ≥ the number of tasks in the queue plus those
/// [`take`](Self::take)n and neither [`taken`](Self::taken) nor
/// [`put_back`](Self::put_back) yet: it is incremented before a push and decremented after
/// a pop, so a reader seeing 0 may skip the queue (a stale 0 is harmless: the sleep protocol
/// re-checks after its fence).
#[derive(Debug)]
pub(crate) struct AwayQueue {
    queue: Injector<Task>,
    len: AtomicUsize,
}

impl Default for AwayQueue {
    fn default() -> Self {
        Self {
            queue: Injector::new(),
            len: AtomicUsize::new(0),
        }
    }
}

impl AwayQueue {
    /// Queues `task` (the bound first). Only [`push`]'s functions call it.
    #[inline]
    fn push(&self, task: Task) {
        self.len.fetch_add(1, Ordering::Relaxed);
        self.queue.push(task);
    }

    /// Takes the oldest task for good (the bound after).
    #[inline]
    pub(crate) fn pop(&self) -> Option<Task> {
        let t = pop_injector(&self.queue)?;
        self.len.fetch_sub(1, Ordering::Relaxed);
        Some(t)
    }

    /// Takes the oldest task to check it (a steal walk): it stays counted in the bound
    /// until [`taken`](Self::taken) (kept) or [`put_back`](Self::put_back) (refused).
    #[inline]
    pub(crate) fn take(&self) -> Option<Task> {
        pop_injector(&self.queue)
    }

    /// A task of [`take`](Self::take) was kept: it leaves the bound.
    #[inline]
    pub(crate) fn taken(&self) {
        self.len.fetch_sub(1, Ordering::Relaxed);
    }

    /// A task of [`take`](Self::take) was refused and goes back (still counted). Only
    /// [`push`]'s functions call it.
    #[inline]
    fn put_back(&self, task: Task) {
        self.queue.push(task);
    }

    /// The length bound (Relaxed): 0 means the queue may be skipped.
    #[inline]
    pub(crate) fn len_bound(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// The queue's own count of its tasks (for metrics snapshots).
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }
}

/// A worker's deque of fresh tasks at home: LIFO for its owner, FIFO for thieves (through
/// its [`Stealer`]). Only the owner pushes, through [`push`].
#[derive(Debug)]
pub(crate) struct Deque(Worker<Task>);

impl Deque {
    /// A new LIFO deque.
    pub(crate) fn new_lifo() -> Self {
        Self(Worker::new_lifo())
    }

    /// The thieves' end.
    pub(crate) fn stealer(&self) -> Stealer<Task> {
        self.0.stealer()
    }

    #[inline]
    fn push(&self, task: Task) {
        self.0.push(task);
    }

    /// The newest task.
    #[inline]
    pub(crate) fn pop(&self) -> Option<Task> {
        self.0.pop()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// An injector any thread pushes to, through [`push`]: a worker's inbox (only its owner
/// pops) or a node's injector.
#[derive(Debug, Default)]
pub(crate) struct SharedQueue(Injector<Task>);

impl SharedQueue {
    #[inline]
    fn push(&self, task: Task) {
        self.0.push(task);
    }

    /// The oldest task, if any ([`pop_injector`]).
    #[inline]
    pub(crate) fn pop(&self) -> Option<Task> {
        pop_injector(&self.0)
    }

    /// The oldest task, without the emptiness check first (a thief that probed it).
    #[inline]
    pub(crate) fn steal(&self) -> Option<Task> {
        steal_loop(|| self.0.steal())
    }

    /// Up to `limit` tasks into `dest`, the first returned ([`Injector`]'s batch steal).
    #[inline]
    pub(crate) fn steal_batch_into(&self, dest: &Worker<Task>, limit: usize) -> Option<Task> {
        steal_loop(|| self.0.steal_batch_with_limit_and_pop(dest, limit))
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Which of a worker's own queues a task that is not fresh at home waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnQueue {
    /// The worker's inbox: only it pops there; aged tasks never move again.
    Inbox,
    /// The worker's away queue: thieves and balancing passes may take it (each checked).
    Away,
}

impl OwnQueue {
    /// The one rule: a task aged by `ageing` after its moves waits in the inbox, any other in
    /// the away queue.
    #[inline]
    pub(crate) fn of(ageing: Ageing, meta: &Meta) -> Self {
        if ageing.is_aged_after(meta.moves()) {
            Self::Inbox
        } else {
            Self::Away
        }
    }
}

/// A FIFO queue of jobs waiting for their proxies (created on the first push: a pool has
/// one per worker, a `ScopeFifo` one per worker of its pool).
#[derive(Default)]
pub(crate) struct FifoQueue(OnceLock<Injector<Task>>);

impl FifoQueue {
    /// Queues a job behind its proxy.
    pub(crate) fn push(&self, task: Task) {
        self.0.get_or_init(Injector::new).push(task);
    }

    /// The oldest job (its proxy runs it).
    pub(crate) fn pop(&self) -> Option<Task> {
        self.0.get().and_then(|q| steal_loop(|| q.steal()))
    }
}

/// Pops an injector. `Injector::steal` runs a SeqCst fence even when the queue is empty;
/// `is_empty` is two loads, so an idle worker checking its (usually empty) injectors stays
/// cheap. A stale "empty" is harmless: the sleep protocol re-checks after its fence, and
/// `is_empty`'s loads are SeqCst.
#[inline]
pub(crate) fn pop_injector(inj: &Injector<Task>) -> Option<Task> {
    if inj.is_empty() {
        None
    } else {
        steal_loop(|| inj.steal())
    }
}

/// Loops on `Retry` (never treat it as empty: the queue may hold work).
#[inline]
pub(crate) fn steal_loop(mut f: impl FnMut() -> Steal<Task>) -> Option<Task> {
    loop {
        match f() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

pub(crate) mod push;

#[cfg(test)]
mod test {
    use super::*;
    use crate::job::HeapJob;

    fn task(origin: u32) -> Task {
        HeapJob::task(None, Meta::fresh(origin), || {})
    }

    /// Runs (and so frees) a task the queue gave back.
    fn run(t: Task) {
        // SAFETY: a live job of this test, executed once.
        unsafe { t.job.execute() };
    }

    #[test]
    fn the_bound_follows_pushes_pops_and_takes() {
        let q = AwayQueue::default();
        assert_eq!((q.len_bound(), q.len()), (0, 0));
        assert!(q.pop().is_none() && q.take().is_none());
        q.push(task(0));
        q.push(task(1));
        assert_eq!((q.len_bound(), q.len()), (2, 2));
        let t = q.take().expect("a task");
        assert_eq!(q.len_bound(), 2, "a task being checked stays counted");
        q.put_back(t);
        assert_eq!((q.len_bound(), q.len()), (2, 2));
        let t = q.take().expect("a task");
        q.taken();
        run(t);
        assert_eq!((q.len_bound(), q.len()), (1, 1));
        run(q.pop().expect("a task"));
        assert_eq!((q.len_bound(), q.len()), (0, 0));
        assert!(q.pop().is_none());
        assert_eq!(q.len_bound(), 0, "a failed pop leaves the bound alone");
    }

    #[test]
    fn aged_tasks_wait_in_the_inbox_others_in_the_away_queue() {
        let moved = |n: u16| Meta {
            migrations: n,
            ..Meta::fresh(0)
        };
        assert_eq!(OwnQueue::of(Ageing::Never, &moved(100)), OwnQueue::Away);
        assert_eq!(OwnQueue::of(Ageing::After(2), &moved(1)), OwnQueue::Away);
        assert_eq!(OwnQueue::of(Ageing::After(2), &moved(2)), OwnQueue::Inbox);
        assert_eq!(OwnQueue::of(Ageing::After(2), &moved(3)), OwnQueue::Inbox);
    }
}
