//! The steal path: an idle worker runs the policy crate's steal walker over the pool's
//! queues. The protocol, and why no task is lost or run twice, is in `README.md` next to
//! this file.

use crossbeam_deque::Steal;

/// A victim's deque shorter than this gives one task, not a batch (`take_batch`).
const BATCH_DEPTH: usize = 128;
use zonal_policy::{
    MoveContext, Probe, Refusal, Source, TaskMeta, VictimQueues, WalkSlot, BATCH_MAX,
};
use zonal_topology::{CpuId, Level, NodeId};

use crate::metrics::bump;
use crate::queues::steal_loop;
use crate::registry::{Registry, WorkerShared};
use crate::sleep::Others;
use crate::task_meta::{Meta, Task, NO_ORIGIN};
use crate::worker::{WorkerThread, CLOCK_REFRESH};

pub(crate) mod hints;
mod record;
pub use record::{QueueKind, StealRecord};

/// Where a stolen task came from.
#[derive(Clone, Copy)]
struct Victim {
    /// The victim's worker (`usize::MAX` for a node injector).
    worker: usize,
    /// The CPU of the walk's slot.
    cpu: CpuId,
    /// The node the task was queued on.
    node: u32,
    /// The slot's level seen from the thief.
    level: Level,
}

impl WorkerThread {
    /// Walks the victim order once, through the policy crate's [`StealWalker`] over this
    /// pool's queues ([`Thief`]). `None`: nothing we may take right now.
    #[cold]
    pub(crate) fn steal(&self) -> Option<(Task, Meta)> {
        let r = &*self.registry;
        if r.num_workers() <= 1 {
            return None;
        }
        let ctx = MoveContext::steal(self.tick_clock());
        // One policy epoch for the whole walk (`policy_switch.rs`).
        self.refresh_policy();
        let epoch = self.policy.borrow();
        let walker = &epoch.walkers[self.index];
        let mut thief = Thief {
            me: self,
            cpu_worker: r.policy.cpu_worker(),
            cur: Current {
                worker: self.index,
                node: self.node,
                level: Level::LOCAL,
                cpu: self.cpu,
            },
            last_node: self.node,
            kept: [None; BATCH_MAX],
            n_kept: 0,
            probes: 0,
        };
        let stolen = walker.walk(epoch.policy.steal_side(), &r.topo, ctx, &mut thief);
        if thief.n_kept != 0 {
            self.kept_batch(&thief.kept[..thief.n_kept]);
        }
        let c = self.counters();
        bump(&c.victim_probes, thief.probes);
        let Some(stolen) = stolen else {
            bump(&c.fruitless_rounds, 1);
            return None;
        };
        // Where the task came from, and from which queue (a task taken from an away queue
        // leaves its length hint here): the walk ended at the stolen task's slot, so the
        // thief's current victim is it. Inline: a step of its own here costs the thief
        // registers in the walk above (measured with `vs_rayon`).
        let w = thief.cur.worker;
        let (victim, queue) = match stolen.source {
            Source::Fresh => (w, QueueKind::Deque),
            Source::Away => {
                r.shared[w].away.taken();
                (w, QueueKind::Away)
            }
            _ => (usize::MAX, QueueKind::NodeInjector),
        };
        let from = Victim {
            worker: victim,
            cpu: thief.cur.cpu,
            node: thief.cur.node,
            level: thief.cur.level,
        };
        Some(self.took(stolen.task, from, queue, stolen.loads))
    }

    /// A batch steal took `kept` besides the task we run: onto our deque, oldest first (the
    /// victim's order), counted apart (not migrations), and a sleeper of our node may come
    /// and steal some (no fence: we are awake and run them ourselves otherwise, as for any
    /// push on our own deque).
    #[cold]
    fn kept_batch(&self, kept: &[Option<Task>]) {
        bump(&self.counters().batch_moved, kept.len() as u64);
        self.push_fresh_batch(kept.iter().flatten().copied());
    }

    /// The policies' clock for this walk: coarse (see `WorkerThread::clock_us`), refreshed
    /// every `CLOCK_REFRESH` walks.
    #[inline]
    fn tick_clock(&self) -> u64 {
        let walks = self.walks.get().wrapping_add(1);
        self.walks.set(walks);
        if walks % CLOCK_REFRESH == 0 {
            self.clock_us.set(self.registry.now_us());
        }
        self.clock_us.get()
    }

    /// Books a successful steal: one more migration for the task (in the returned copy of
    /// its metadata, which the thief runs it with), counters, observer.
    fn took(
        &self,
        t: Task,
        from: Victim,
        queue: QueueKind,
        loads: Option<(u64, u64)>,
    ) -> (Task, Meta) {
        let meta = t.meta(&self.registry.fresh_meta[from.node as usize]);
        self.count_steal(&from, meta.origin);
        self.observe_steal(&from, &meta, queue, loads);
        (t, meta.moved())
    }

    /// The steal counters: one steal at the victim's level, and whether it took the task
    /// beyond its origin's zone (the zone of the node its computation is rooted on, which is
    /// the victim's for a task at home) or farther from its `origin`.
    #[inline]
    fn count_steal(&self, from: &Victim, origin: u32) {
        let r = &*self.registry;
        let c = self.counters();
        let l = from.level.index();
        if let Some(s) = c.steals.get(l) {
            bump(s, 1);
        }
        if origin == from.node {
            if r.topo.beyond_zone(from.level) {
                bump(&c.beyond_zone, 1);
            }
        } else {
            self.count_away_steal(from, origin);
        }
    }

    /// [`count_steal`](Self::count_steal) for a task away from its origin.
    #[cold]
    fn count_away_steal(&self, from: &Victim, origin: u32) {
        let r = &*self.registry;
        let c = self.counters();
        let (o, vnode, to) = (
            origin.into_node(),
            from.node.into_node(),
            self.node.into_node(),
        );
        // As the conservative filter reads the zone: the origin in the thief's zone.
        if !r.topo.origin_in_zone(to, o) {
            bump(&c.beyond_zone, 1);
        }
        if r.topo.farther_from(o, vnode, to) {
            bump(&c.farther, 1);
        }
    }

    /// Tells the steal observer, if any (its panics are swallowed).
    #[inline]
    fn observe_steal(
        &self,
        from: &Victim,
        meta: &Meta,
        queue: QueueKind,
        loads: Option<(u64, u64)>,
    ) {
        let Some(obs) = &self.registry.observer else {
            return;
        };
        let rec = StealRecord {
            thief: self.index,
            victim: from.worker,
            thief_cpu: self.cpu.0,
            victim_cpu: from.cpu.0,
            thief_node: self.node,
            victim_node: from.node,
            origin: meta.origin,
            level: from.level.0,
            migrations_before: meta.moves(),
            queue,
            loads,
        };
        let _ = crate::unwind::halt_unwinding(|| obs(&rec));
    }
}

/// One walk's view of the pool's queues, for the [`StealWalker`] (`VictimQueues`):
///
/// | walker's source | queue | `take` | `put_back` of a refused task |
/// |---|---|---|---|
/// | `Fresh` | the victim's deque | steal the oldest (`take_batch`: up to 32 into our batch queue, for a victim of our node; the allowed ones besides the steal go to our deque, `keep`) | the victim's away queue |
/// | `Shared` | the victim node's injector, at the first slot of each node | steal one (an injected task takes the node as origin) | the same injector |
/// | `Away` | the victim's away queue | pop one | the same queue |
///
/// Every push back is followed by a wake-up check (`sleep/README.md`), so a parked owner is
/// not stranded.
struct Thief<'a> {
    me: &'a WorkerThread,
    /// Per CPU of the topology: its worker (`PolicySlot::cpu_worker`).
    cpu_worker: &'a [usize],
    /// The victim the walk is at (`visit`): every call about a slot is about it.
    cur: Current,
    /// The node of the previous slot: a node's injector is visited once, at its first slot.
    last_node: u32,
    /// Allowed tasks of a batch besides the steal (`keep`), oldest first: pushed on our
    /// deque after the walk, with one wake-up check.
    kept: [Option<Task>; BATCH_MAX],
    n_kept: usize,
    /// Victim probes of this walk: one per victim visited, one per node hint read.
    probes: u64,
}

/// The victim a walk is at.
#[derive(Clone, Copy)]
struct Current {
    worker: usize,
    node: u32,
    level: Level,
    cpu: CpuId,
}

impl<'a> Thief<'a> {
    /// The current victim's shared half and node (every slot the walker asks about is the
    /// one it visited last).
    #[inline]
    fn victim(&self) -> (&'a WorkerShared, u32) {
        let r: &'a Registry = &self.me.registry;
        (&r.shared[self.cur.worker], self.cur.node)
    }
}

impl VictimQueues for Thief<'_> {
    type Task = Task;

    #[inline]
    fn visit(&mut self, _slot: usize, victim: &WalkSlot) {
        let cpu = victim.victim.cpu;
        let worker = self.cpu_worker[cpu.index()];
        self.cur = Current {
            worker,
            node: self.me.registry.worker_node[worker],
            level: victim.victim.level,
            cpu,
        };
    }

    /// The node's hint (`queues/hints.rs`): one read of a line of its own.
    #[inline]
    fn node_may_have_work(&mut self, node: NodeId) -> bool {
        self.probes += 1;
        self.me.registry.sleep.hints().may_have_work(node.0)
    }

    #[inline]
    fn node_seen_empty(&mut self, node: NodeId) {
        self.me
            .registry
            .sleep
            .hints()
            .seen_empty(node.0, || node_is_empty(&self.me.registry, node.0));
    }

    #[inline]
    fn thief_load(&self) -> u64 {
        self.me.deque.len() as u64
    }

    #[inline]
    fn probe(&mut self, _slot: usize) -> Probe {
        self.probes += 1;
        let (vs, vnode) = self.victim();
        let injector = &self.me.registry.node_injectors[vnode as usize];
        let shared = vnode != self.last_node && !injector.is_empty();
        self.last_node = vnode;
        Probe {
            away: vs.away.len_bound(),
            shared,
        }
    }

    #[inline]
    fn fresh_len(&mut self, _slot: usize) -> usize {
        self.victim().0.stealer.len()
    }

    #[inline]
    fn take(&mut self, _slot: usize, from: Source) -> Option<Task> {
        let (vs, vnode) = self.victim();
        let r = &*self.me.registry;
        match from {
            // An empty deque is seen without pinning an epoch: `Stealer::steal` pins first,
            // and every 128th pin scans every registered thread (crossbeam-epoch), which
            // made a walk over thousands of mostly empty deques quadratic in workers.
            Source::Fresh if vs.stealer.is_empty() => None,
            Source::Fresh => steal_loop(|| vs.stealer.steal()),
            Source::Away => vs.away.take(),
            _ => {
                let t = r.node_injectors[vnode as usize].steal()?;
                let mut m = t.meta(&r.fresh_meta[vnode as usize]);
                if m.origin == NO_ORIGIN {
                    // Fixed in the header too: a refused task goes back queued.
                    m.origin = vnode;
                    t.set_meta(m);
                }
                Some(t)
            }
        }
    }

    /// Up to `max` tasks (crossbeam takes at most half the deque, rounded up) into our
    /// batch queue in one operation; the *oldest* is returned, as a single steal would take
    /// it. (`steal_batch_with_limit_and_pop` would hand back the newest of the batch from a
    /// LIFO deque: a thief would run the smallest piece of a split computation first and
    /// find the largest at the bottom of its own deque, behind all the work the small one
    /// spawns; rayon's `octillion` tests never end that way.)
    #[inline]
    fn take_batch(&mut self, _slot: usize, max: usize) -> Option<Task> {
        let (vs, _) = self.victim();
        if vs.stealer.is_empty() {
            return None;
        }
        let batch = &self.me.batch;
        debug_assert!(batch.is_empty());
        // A short deque is a split computation's frontier (one right half per level of a
        // join tree): one task, the oldest, as rayon steals. A long one is a flat run of
        // spawns: a batch.
        let max = if vs.stealer.len() >= BATCH_DEPTH {
            max
        } else {
            1
        };
        loop {
            match vs.stealer.steal_batch_with_limit(batch, max) {
                Steal::Success(()) => break,
                Steal::Empty => return None,
                Steal::Retry => {}
            }
        }
        self.next_batched()
    }

    /// The next task of the batch, oldest first: the thief's deque then keeps the victim's
    /// order (the newest on top).
    #[inline]
    fn next_batched(&mut self) -> Option<Task> {
        steal_loop(|| self.me.batch_front.steal())
    }

    /// An allowed task of a batch from a worker of our node: fresh at home in our deque too
    /// (its bare job's implied metadata, `Meta::fresh(node)`, is the same on both), pushed
    /// there after the walk (`kept_batch`; a batch holds at most `BATCH_MAX` tasks, the
    /// steal included, but a full buffer is pushed at once whatever happens).
    #[inline]
    fn keep(&mut self, _slot: usize, t: Task) {
        if self.n_kept == BATCH_MAX {
            self.me.kept_batch(&self.kept);
            self.n_kept = 0;
        }
        self.kept[self.n_kept] = Some(t);
        self.n_kept += 1;
    }

    #[inline]
    fn meta(&self, _slot: usize, from: Source, t: &Task) -> Option<TaskMeta> {
        let (_, vnode) = self.victim();
        let r = &*self.me.registry;
        let m = t.meta(&r.fresh_meta[vnode as usize]);
        if from == Source::Fresh && m.is_representative_at(vnode) {
            // Exactly the representative task the walker already allowed (the placed flag aside,
            // which no policy reads). A bare job always is: it never leaves its deque
            // through `put_back`. A child of a computation rooted on another node is not:
            // it is checked with its origin.
            return None;
        }
        Some(m.to_policy(t.job.id(), self.cur.cpu))
    }

    /// A refused task goes back to a queue its owner drains, and only the owner is woken:
    /// the victim worker for its deque or away queue (if it sleeps; awake, it searches its
    /// queues before it parks), a sleeper of the victim's node for that node's injector
    /// (none sleeps → every worker of the node is awake and looks there before it parks):
    /// the core's push-and-wake functions with `Others::None` (`queues/push.rs`).
    /// Never another sleeper: the task is not new, and another worker is often refused it
    /// too, and would wake the next one in turn: idle workers would spin while the owner is
    /// busy (`README.md` here, "Refused work").
    #[inline]
    fn put_back(&mut self, _slot: usize, from: Source, t: Task) {
        let (_, vnode) = self.victim();
        let r = &*self.me.registry;
        let owner = self.cur.worker;
        match from {
            Source::Fresh => {
                debug_assert!(!t.job.is_bare());
                r.push_away(owner, Others::None, t);
            }
            Source::Away => r.put_back_away(owner, t),
            _ => r.push_node(vnode, Others::None, t),
        }
    }

    #[inline]
    fn refused(&mut self, _slot: usize, why: Refusal) {
        self.me.counters().refuse(why, self.cur.level.index());
    }
}

/// Whether every queue a thief of another node or worker would probe on `node` is empty:
/// its workers' deques and away queues, and its injector (what `seen_empty` re-checks after
/// clearing the node's hint).
fn node_is_empty(r: &Registry, node: u32) -> bool {
    r.node_injectors[node as usize].is_empty()
        && r.sleep
            .node_members(node)
            .iter()
            .all(|&w| r.shared[w].stealer.is_empty() && r.shared[w].away.len_bound() == 0)
}

trait IntoNode {
    fn into_node(self) -> zonal_topology::NodeId;
}

impl IntoNode for u32 {
    fn into_node(self) -> zonal_topology::NodeId {
        zonal_topology::NodeId(self)
    }
}

#[cfg(test)]
mod test;
