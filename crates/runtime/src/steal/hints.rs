//! Per-node work hints: whether a node's stealable queues — its workers' deques and away
//! queues, and its injector — may hold work, so that a fruitless steal walk reads one line
//! per node instead of one or two per worker (`README.md` here, "Node hints").
//!
//! # Protocol
//!
//! - **Set** by every push onto a queue of the node (`Sleep::push_and_wake`, the one push
//!   function), before its wake-up: a Relaxed load, and a store only when the hint is clear
//!   (a busy pool's pushes read a line that stays shared, and write nothing). After the
//!   push's `SeqCst` fence for shared queues (step 5); with no fence for the pusher's own
//!   deque and away queue (step 5'), whose pusher drains them itself.
//! - **Read** by a thief once per node per walk (`StealWalker::walk` asks
//!   `node_may_have_work`): clear → the node's victims are passed over without a probe.
//! - **Cleared** by a thief whose walk probed every victim of the node and saw no work at
//!   all (`node_seen_empty`): store `false`, `fence(SeqCst)`, then check every stealable
//!   queue of the node once more; any work → store `true` again.
//!
//! # What it promises, and what it does not
//!
//! A hint never decides whether a task runs, only who helps: every queue has owners that
//! drain it without reading any hint (a worker pops its own deque, inbox and away queue and
//! its node's injector first, `WorkerThread::find_unstolen`), and every wake-up the sleep
//! protocol issues is for those owners or for thieves (`sleep/README.md`). So a stale hint
//! costs parallelism, never a task.
//!
//! It is also right in every case that matters for parallelism:
//! - *A push onto a shared queue* (another worker's inbox or away queue, a node's
//!   injector) races a clearing thief as a Dekker pair: the pusher's `push; fence; load
//!   hint` against the thief's `store false; fence; re-check`. Either the thief's re-check
//!   sees the push (and sets the hint back), or the pusher's load sees the cleared hint
//!   (and sets it).
//! - *A push onto the pusher's own deque* has no fence (`join` stays cheap): its load may
//!   see a hint a thief is clearing just then while the thief's re-check misses the push.
//!   The hint then says "empty" while the deque holds that task, until the pusher's next
//!   push sets it again (a split computation pushes again at once) or it pops the task
//!   itself. This is the same window step 5' accepts for the wake-up.
//! - *A woken thief* sees the hint its waker set: the waker sets it before it notifies, and
//!   the notification is a mutex hand-off.

use std::sync::atomic::Ordering;

use crossbeam_utils::CachePadded;

use crate::sync::{fence, AtomicBool};

/// The hints of every node of a pool's topology (a node without workers holds none: its
/// hint stays clear, and nobody walks it).
#[derive(Debug)]
pub(crate) struct NodeHints {
    hints: Box<[CachePadded<AtomicBool>]>,
}

impl NodeHints {
    /// The hints of `nodes` nodes, all clear (no work queued yet).
    pub(crate) fn new(nodes: usize) -> Self {
        Self {
            hints: (0..nodes)
                .map(|_| CachePadded::new(AtomicBool::new(false)))
                .collect(),
        }
    }

    /// Whether `node`'s stealable queues may hold work (one Relaxed load).
    #[inline]
    pub(crate) fn may_have_work(&self, node: u32) -> bool {
        self.hints
            .get(node as usize)
            .is_none_or(|h| h.load(Ordering::Relaxed))
    }

    /// A push onto a queue of `node` (module docs, "Set"): no write while the hint is set.
    #[inline]
    pub(crate) fn pushed(&self, node: u32) {
        if let Some(h) = self.hints.get(node as usize) {
            if !h.load(Ordering::Relaxed) {
                h.store(true, Ordering::Relaxed);
            }
        }
    }

    /// A thief saw no work on `node` (module docs, "Cleared"): the hint is cleared, then set
    /// again if `still_empty`, asked after a `SeqCst` fence, says otherwise.
    #[cold]
    pub(crate) fn seen_empty(&self, node: u32, still_empty: impl FnOnce() -> bool) {
        let Some(h) = self.hints.get(node as usize) else {
            return;
        };
        if !h.load(Ordering::Relaxed) {
            return;
        }
        h.store(false, Ordering::Relaxed);
        // SeqCst fence: pairs with the fence of a shared queue's push (module docs).
        fence(Ordering::SeqCst);
        if !still_empty() {
            h.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(zonal_loom)))]
mod test {
    use super::NodeHints;

    #[test]
    fn a_push_sets_and_an_empty_walk_clears() {
        let h = NodeHints::new(3);
        assert!(!h.may_have_work(1));
        h.pushed(1);
        assert!(h.may_have_work(1) && !h.may_have_work(0));
        // Seen empty, and still empty after the fence: cleared.
        h.seen_empty(1, || true);
        assert!(!h.may_have_work(1));
        // Seen empty, but a push landed meanwhile (the re-check sees it): set again.
        h.pushed(1);
        h.seen_empty(1, || false);
        assert!(h.may_have_work(1));
        // A node outside the topology is never skipped.
        assert!(h.may_have_work(7));
    }
}
