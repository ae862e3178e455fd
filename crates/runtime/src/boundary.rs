//! Job boundaries: where a worker busy with fork-join work takes the tasks addressed to it
//! (issue 44: a service and its computations on one pool).
//!
//! # The rule
//!
//! A worker's **addressed** queues are its inbox (pinned tasks, aged tasks, broadcast
//! jobs) and its away queue (tasks away from home or migrated — among them every woken
//! async task that is not aged: `async_task/mod.rs`, "Routing"). A woken async task always
//! goes to one of them, on the worker that polled it last (`route::requeue`).
//!
//! A worker looks at its addressed queues at every **job boundary**:
//! - **a `join`'s first half returned** (`join.rs`), before it takes the second half back:
//!   what it finds runs there, nested, while the second half waits on the deque, where a
//!   thief may still take it;
//! - **it looks for its next task** (`find_work`, `find_unstolen`: the worker loop, a wait
//!   on a latch, rayon's `yield_now`): the addressed queues come before its deque.
//!
//! The check is a read of the away queue's length bound and of the inbox's two ends (the
//! `join` hot path pays three loads of lines that only a push or the owner's own pops
//! write). What it finds it takes oldest first, the inbox first, up to [`BOUNDARY_PICKS`]
//! tasks per `join` boundary, each run to completion (a poll, for an async task) before
//! the next.
//!
//! # The bound (counted, not timed)
//!
//! A task pushed on a worker's addressed queue while that worker runs fork-join work is
//! taken by it at the first job boundary it reaches after the push — at the latest the
//! second one counted from the push (the worker may be passing one just as the push
//! lands) — unless [`PICK_DEPTH`] tasks taken at boundaries are running nested on it
//! already, in which case at the first boundary after the innermost of them returns; with
//! more than `BOUNDARY_PICKS` tasks ahead of it in those queues, one boundary later for
//! each `BOUNDARY_PICKS` of them. An idle worker (a searcher) may take a task of the away
//! queue sooner, as before. `tests/boundaries.rs` counts it: an async task woken while
//! every worker runs a fork-join computation is polled within two boundaries of its
//! worker's, on a 2-worker pool and on a virtual pool of two nodes.
//!
//! # What it leaves as it was
//!
//! - **A node's injector** (work from outside the pool) still comes after the deque: a
//!   worker takes it in batches whose order it keeps (`WorkerThread::batch_injected`), and
//!   taking from it at boundaries would break the FIFO order of `spawn_fifo` from outside.
//!   A service's requests are not there: its tasks are spawned by its accept loop, an
//!   async task on a worker, onto that worker's deque, and woken onto its addressed queues.
//! - **Zones and refusals**: the addressed queues are the worker's own, which it drains
//!   already with no policy check (a task reaches them only through a routing decision or
//!   a checked move); nothing here moves a task to another worker.
//! - **The idle protocol**: no push and no wake-up is added; a worker that takes a task at
//!   a boundary is awake.
//! - **Depth**: a task taken at a `join` boundary runs on the worker's stack above the
//!   `join`; [`PICK_DEPTH`] bounds how many are nested so, so a stream of async tasks that
//!   each fork and join cannot grow the stack without bound.

use crate::metrics::bump;
use crate::task_meta::{Meta, Task};
use crate::worker::WorkerThread;

/// At most this many addressed tasks are taken at one `join` boundary (a task that
/// re-queues itself, `yield_now`, is taken again at most this often before the `join`
/// goes on).
pub(crate) const BOUNDARY_PICKS: u32 = 4;

/// At most this many tasks taken at `join` boundaries run nested on one worker; a `join`
/// inside the innermost takes nothing at its boundary.
pub(crate) const PICK_DEPTH: u32 = 2;

impl WorkerThread {
    /// Whether a task may wait in our inbox or away queue: the away queue's bound and the
    /// inbox's ends, no lock and no write.
    #[inline(always)]
    pub(crate) fn addressed_waiting(&self) -> bool {
        let me = self.shared();
        me.away.len_bound() != 0 || !me.inbox.is_empty()
    }

    /// The oldest addressed task: our inbox's, else our away queue's.
    #[inline]
    pub(crate) fn take_addressed(&self) -> Option<(Task, Meta)> {
        self.pop_inbox().or_else(|| self.pop_away())
    }

    /// [`take_addressed`](Self::take_addressed), out of line: for the find paths, which
    /// check [`addressed_waiting`](Self::addressed_waiting) first.
    #[cold]
    #[inline(never)]
    pub(crate) fn take_addressed_cold(&self) -> Option<(Task, Meta)> {
        self.take_addressed()
    }

    /// A `join`'s boundary (its first half returned; module docs): the addressed tasks
    /// waiting, if any, run here.
    #[inline(always)]
    pub(crate) fn at_join_boundary(&self) {
        if self.addressed_waiting() {
            self.run_addressed();
        }
    }

    #[cold]
    #[inline(never)]
    fn run_addressed(&self) {
        let depth = self.picking.get();
        if depth >= PICK_DEPTH {
            return;
        }
        self.picking.set(depth + 1);
        for _ in 0..BOUNDARY_PICKS {
            let Some((task, meta)) = self.take_addressed() else {
                break;
            };
            bump(&self.counters().boundary_picks, 1);
            self.execute_with(task, meta);
        }
        self.picking.set(depth);
    }
}
