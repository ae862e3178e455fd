//! The one push-and-wake function of each queue kind (core). Every task the pool queues —
//! new, woken, moved by the balancer, or refused and handed back — goes through one of
//! these, and each pairs its push with the wake-up that queue needs, through
//! [`Sleep::push_and_wake`] (`sleep/README.md`, steps 5, 5', 5''):
//!
//! | queue | function | drained by ([`Owner`]) | who else may be woken ([`Others`]) |
//! |---|---|---|---|
//! | a worker's own deque | [`WorkerThread::push_fresh`], [`WorkerThread::push_fresh_batch`] | the pusher (no fence) | workers of nodes that may take a task of its origin |
//! | a worker's own away queue | [`WorkerThread::push_own`] | the pusher (no fence) | workers of nodes that may take a task of its origin |
//! | a worker's own inbox | [`WorkerThread::push_own`] | the pusher | nobody (no wake-up: only it pops there) |
//! | another worker's inbox | [`Registry::push_inbox`] | that worker | nobody |
//! | another worker's away queue | [`Registry::push_away`] | that worker | those of its origin (a woken async task), or nobody (a balancer's move, a refused task handed back) |
//! | a node's injector | [`Registry::push_node`] | the node's workers | those of its origin (new work), or nobody (a refused task handed back) |
//!
//! The queue types' `push` methods are private to `queues`: no other file can push without
//! its wake-up.

use crate::metrics::bump;
use crate::registry::Registry;
use crate::sleep::{Others, Owner};
use crate::task_meta::Task;
use crate::worker::WorkerThread;

use super::OwnQueue;

impl WorkerThread {
    /// Pushes a task that never migrated on our deque (step 5'): fresh at home, or a child
    /// of a computation rooted on `origin` (another node, whose zone may take it).
    #[inline]
    pub(crate) fn push_fresh(&self, origin: u32, task: Task) {
        let node = self.node;
        self.registry
            .sleep
            .push_and_wake(Owner::Pusher { node }, Others::Origin(origin), || {
                self.deque.push(task)
            });
    }

    /// Pushes fresh tasks at home on our deque in this order (a batch taken from a victim of
    /// our node or from our node's injector), with one wake-up check for all (step 5').
    #[cold]
    pub(crate) fn push_fresh_batch(&self, tasks: impl IntoIterator<Item = Task>) {
        let node = self.node;
        self.registry
            .sleep
            .push_and_wake(Owner::Pusher { node }, Others::Origin(node), || {
                for t in tasks {
                    self.deque.push(t);
                }
            });
    }

    /// Pushes a task of ours on one of our own queues: our inbox (counted in `aged_kept`; no
    /// wake-up: only we pop it, and we are awake), or our away queue, with the wake-up check
    /// for `origin`, its origin (step 5').
    #[inline]
    pub(crate) fn push_own(&self, own: OwnQueue, origin: u32, task: Task) {
        let r = &*self.registry;
        let me = &r.shared[self.index];
        match own {
            OwnQueue::Inbox => {
                bump(&me.counters.aged_kept, 1);
                me.inbox.push(task);
            }
            OwnQueue::Away => r.sleep.push_and_wake(
                Owner::Pusher { node: self.node },
                Others::Origin(origin),
                || me.away.push(task),
            ),
        }
    }
}

impl Registry {
    /// Pushes a task pinned to `worker` (or aged there) on its inbox, which only it pops:
    /// it is woken if it sleeps (step 5).
    pub(crate) fn push_inbox(&self, worker: usize, task: Task) {
        self.sleep
            .push_and_wake(Owner::Worker(worker), Others::None, || {
                self.shared[worker].inbox.push(task)
            });
    }

    /// Pushes a task on `worker`'s away queue from another thread: `worker` is woken if it
    /// sleeps; otherwise, with `others`, a sleeper that may take the task if no worker of
    /// its node searches (step 5).
    pub(crate) fn push_away(&self, worker: usize, others: Others, task: Task) {
        self.sleep.push_and_wake(Owner::Worker(worker), others, || {
            self.shared[worker].away.push(task)
        });
    }

    /// A task taken from `worker`'s away queue by a thief and refused: back in that queue
    /// (still counted in its bound), and only `worker` is woken (step 5'').
    pub(crate) fn put_back_away(&self, worker: usize, task: Task) {
        self.sleep
            .push_and_wake(Owner::Worker(worker), Others::None, || {
                self.shared[worker].away.put_back(task)
            });
    }

    /// Pushes a task on `node`'s injector: a sleeper of that node is woken if none of its
    /// workers searches; else, with `others`, one of the nearest node that may take it
    /// (step 5).
    pub(crate) fn push_node(&self, node: u32, others: Others, task: Task) {
        self.sleep.push_and_wake(Owner::Node(node), others, || {
            self.node_injectors[node as usize].push(task)
        });
    }
}
