//! Routing: the one path where a queued task's place is decided, and where it is counted.
//!
//! Every way of queueing work — a `join` half, a scope spawn, `spawn`, `spawn_on`,
//! `spawn_pinned`, `spawn_with`, `par_for` chunks, `install` from outside, spawns from
//! threads outside the pool — ends in [`WorkerThread::queue`] (on one of this pool's workers)
//! or [`Registry::route`] (from anywhere). The first counts the task once in the worker's
//! `spawned`, the second once in the pool's `injected`; then the [`Target`] decides the
//! queue (see `steal/README.md` for who may take from which):
//!
//! | target | on a worker of the pool | from outside |
//! |---|---|---|
//! | `Fresh` (known fresh at home: join halves, bare scope jobs) | its deque | — |
//! | `Here` | fresh at home → its deque; aged (`StealSide::ageing`) → its inbox; else → its away queue | the global injector (origin: the first taker's node) |
//! | `Node(n)` | `n` is its node → as `Here`; `n` has no worker → the global injector (origin kept); else → `n`'s injector | likewise |
//! | `Worker(w)` | `w`'s inbox (never stolen) | likewise |
//!
//! Every push is followed by the sleep protocol's wake-up check (`sleep/README.md`).

use std::ptr;
use std::sync::atomic::Ordering;

use zonal_topology::NodeId;

use crate::metrics::bump;
use crate::registry::Registry;
use crate::task::Task;
use crate::worker::WorkerThread;

/// Where a task is aimed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// Known fresh at home on the queueing worker (origin = its node, never migrated).
    Fresh,
    /// Wherever its metadata says, on the queueing worker (or anywhere, from outside).
    Here,
    /// A node's injector.
    Node(NodeId),
    /// One worker's inbox: only that worker runs it.
    Worker(usize),
}

impl Registry {
    /// Queues `task` from any thread: on one of our workers through
    /// [`WorkerThread::queue`]; otherwise counted as injected and placed from outside.
    #[inline]
    pub(crate) fn route(&self, task: Task, target: Target) {
        WorkerThread::with_current(|w| match w.filter(|w| ptr::eq(&*w.registry, self)) {
            Some(w) => w.queue(task, target),
            None => self.route_from_outside(task, target),
        });
    }

    #[cold]
    fn route_from_outside(&self, task: Task, target: Target) {
        self.injected.fetch_add(1, Ordering::Relaxed);
        match target {
            Target::Worker(w) => self.place_pinned(task, w),
            Target::Node(n) if self.node_has_workers[n.index()] => self.place_on_node(task, n),
            _ => self.place_global(task),
        }
    }

    /// `worker`'s inbox.
    fn place_pinned(&self, task: Task, worker: usize) {
        self.shared[worker].inbox.push(task);
        self.sleep.wake_worker(worker);
    }

    /// `node`'s injector.
    fn place_on_node(&self, task: Task, node: NodeId) {
        self.node_injectors[node.index()].push(task);
        self.sleep.new_work(node.0);
    }

    /// The global injector: anyone may take it.
    fn place_global(&self, task: Task) {
        self.global.push(task);
        self.sleep.new_work(u32::MAX);
    }
}

impl WorkerThread {
    /// Queues a task this worker created: counts it once, then places it by `target`. The
    /// two hot targets (a join half or bare scope job; a spawn at home) stay inline.
    #[inline(always)]
    pub(crate) fn queue(&self, task: Task, target: Target) {
        bump(&self.counters().spawned, 1);
        match target {
            Target::Fresh => {
                debug_assert!({
                    let m = task.meta(&self.home);
                    m.origin == self.node && m.migrations == 0
                });
                self.push_deque(task);
            }
            Target::Here => self.place_here(task),
            _ => self.place_elsewhere(task, target),
        }
    }

    /// A node's injector or a worker's inbox.
    #[cold]
    fn place_elsewhere(&self, task: Task, target: Target) {
        match target {
            Target::Node(n) => self.place_on_node(task, n),
            Target::Worker(w) => self.registry.place_pinned(task, w),
            Target::Fresh | Target::Here => self.place_here(task),
        }
    }

    #[inline(always)]
    fn push_deque(&self, task: Task) {
        self.deque.push(task);
        self.registry.sleep.new_local_work(self.node);
    }

    /// By its metadata: fresh at home → our deque (one branch); else the cold path.
    #[inline]
    fn place_here(&self, task: Task) {
        let meta = task.meta(&self.home);
        if meta.origin == self.node && meta.migrations == 0 {
            self.push_deque(task);
        } else {
            self.place_away(task);
        }
    }

    /// A task away from home or already migrated: aged ones stay in our inbox, others go to
    /// our away queue.
    #[cold]
    fn place_away(&self, task: Task) {
        let r = &*self.registry;
        let me = &r.shared[self.index];
        let meta = task.meta(&self.home);
        if r.ageing.is_aged_after(meta.migrations) {
            bump(&me.counters.aged_kept, 1);
            me.inbox.push(task);
        } else {
            me.away_len.fetch_add(1, Ordering::Relaxed);
            me.away.push(task);
            r.sleep.new_local_work(meta.origin);
        }
    }

    /// Aimed at `node`: our own node is our own queues (the task is ours to run first, as a
    /// worker blocked on it pops its deque first); a node without workers is the global
    /// injector (the task keeps its origin, but that node's injector could lie outside every
    /// worker's zone); any other node its injector.
    fn place_on_node(&self, task: Task, node: NodeId) {
        let r = &*self.registry;
        if node.0 == self.node {
            self.place_here(task);
        } else if r.node_has_workers[node.index()] {
            r.place_on_node(task, node);
        } else {
            r.place_global(task);
        }
    }
}
