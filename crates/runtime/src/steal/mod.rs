//! The steal path: an idle worker walks its victims nearest first and asks the policy.
//! The protocol, and why no task is lost or run twice, is in `README.md` next to this file.

use std::sync::atomic::Ordering;

use zonal_policy::{Eligibility, FreshSteal, MoveContext, VictimDecision};
use zonal_topology::Level;

use crate::job::Task;
use crate::metrics::bump;
use crate::registry::{pop_injector, steal_loop, WorkerThread, CLOCK_REFRESH};
use crate::task::{Meta, NO_ORIGIN};

/// At most this many tasks of one victim's away queue are examined per visit.
const AWAY_EXAMINE: usize = 4;

/// What one steal did, for [`ThreadPoolBuilder::steal_observer`](crate::ThreadPoolBuilder::steal_observer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StealRecord {
    /// The stealing worker.
    pub thief: usize,
    /// The worker stolen from (`usize::MAX` for a node injector).
    pub victim: usize,
    /// The thief's node (dense index).
    pub thief_node: u32,
    /// The node the task was queued on.
    pub victim_node: u32,
    /// The task's origin node.
    pub origin: u32,
    /// The level of the victim seen from the thief (0 = level I).
    pub level: u8,
    /// The task's migration count *before* this steal.
    pub migrations_before: u32,
    /// Which queue it came from.
    pub queue: QueueKind,
}

/// The queue a stolen task came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// A worker's deque of fresh tasks at home.
    Deque,
    /// A worker's queue of tasks away from home or already migrated.
    Away,
    /// A node's injector.
    NodeInjector,
}

impl WorkerThread {
    /// Walks the victim order once. `None`: nothing we may take right now.
    #[cold]
    pub(crate) fn steal(&self) -> Option<(Task, Meta)> {
        let r = &*self.registry;
        if r.num_workers() <= 1 {
            return None;
        }
        let topo = &*r.topo;
        let policy = &*r.policy;
        let counters = self.counters();
        // The policies' clock: coarse (see `WorkerThread::clock_us`).
        let walks = self.walks.get().wrapping_add(1);
        self.walks.set(walks);
        if walks % CLOCK_REFRESH == 0 {
            self.clock_us.set(r.now_us());
        }
        let ctx = MoveContext::steal(self.clock_us.get());
        let mut last_node = self.node;
        for slot in r.victims[self.index].iter() {
            let (w, victim) = (slot.worker, &slot.victim);
            let vs = &r.shared[w];
            let vnode = r.worker_node[w];
            let injector = &r.node_injectors[vnode as usize];
            let inj_has = vnode != last_node && !injector.is_empty();
            last_node = vnode;
            let away_len = vs.away_len.load(Ordering::Relaxed);
            let level = victim.level.index();
            // 1. Fresh tasks at home: their eligibility depends on (victim node, us) only,
            //    so one answer — cached at build time, or one check with a representative
            //    task — decides for the whole deque.
            let fresh = if slot.fresh == Some(FreshSteal::Allowed) {
                // The policy examines this victim and lets fresh tasks go whatever the loads
                // (`Policy::static_fresh_steal`): no call, and no need to know the deque's
                // length first (`Stealer::len` costs a fence; an empty deque answers `Empty`,
                // and no refusal can arise to be counted).
                if let Some(t) = steal_loop(|| vs.stealer.steal()) {
                    if let Some(t) = self.verify(t, w, victim, ctx) {
                        return Some(self.took(t, w, vnode, victim.level, QueueKind::Deque));
                    }
                }
                if away_len == 0 && !inj_has {
                    continue;
                }
                Eligibility::Allowed
            } else {
                let deque_len = vs.stealer.len();
                if deque_len == 0 && away_len == 0 && !inj_has {
                    continue;
                }
                let decision = match slot.fresh {
                    Some(f) => f.victim_decision(),
                    None => {
                        let load = (deque_len + away_len) as u64 + u64::from(inj_has);
                        policy.victim(topo, self.cpu, victim, self.deque.len() as u64, load)
                    }
                };
                match decision {
                    VictimDecision::Examine => {}
                    VictimDecision::Skip(why) => {
                        counters.refuse(why, level);
                        continue;
                    }
                    VictimDecision::Stop(why) => {
                        counters.refuse(why, level);
                        break;
                    }
                }
                let fresh = match slot.fresh.and_then(FreshSteal::fresh_eligibility) {
                    Some(e) => e,
                    None => {
                        let rep = Meta::fresh(vnode).to_policy(0, victim.cpu);
                        policy.eligibility(topo, &rep, self.cpu, ctx)
                    }
                };
                if deque_len != 0 {
                    match fresh {
                        Eligibility::Allowed => {
                            if let Some(t) = steal_loop(|| vs.stealer.steal()) {
                                if let Some(t) = self.verify(t, w, victim, ctx) {
                                    return Some(self.took(
                                        t,
                                        w,
                                        vnode,
                                        victim.level,
                                        QueueKind::Deque,
                                    ));
                                }
                            }
                        }
                        Eligibility::Refused(why) => counters.refuse(why, level),
                    }
                }
                fresh
            };
            // 2. The victim node's injector, once per node.
            //    The same representative answer as the deque's, then a real check after the
            //    pop.
            if inj_has {
                match fresh {
                    Eligibility::Allowed => {
                        if let Some(t) = steal_loop(|| injector.steal()) {
                            let mut m = t.meta(&r.fresh_meta[vnode as usize]);
                            if m.origin == NO_ORIGIN {
                                // Fixed in the header too: a refused task goes back queued.
                                m.origin = vnode;
                                t.set_meta(m);
                            }
                            let meta = m.to_policy(t.job.id(), victim.cpu);
                            match policy.eligibility(topo, &meta, self.cpu, ctx) {
                                Eligibility::Allowed => {
                                    return Some(self.took(
                                        t,
                                        usize::MAX,
                                        vnode,
                                        victim.level,
                                        QueueKind::NodeInjector,
                                    ));
                                }
                                Eligibility::Refused(why) => {
                                    counters.refuse(why, level);
                                    injector.push(t);
                                    r.sleep.new_work(vnode);
                                }
                            }
                        }
                    }
                    Eligibility::Refused(why) => counters.refuse(why, level),
                }
            }
            // 3. Away tasks: checked one by one with their real metadata (their origins
            //    differ); a refused task is pushed back to the same queue (its owner still
            //    has it). At most AWAY_EXAMINE pops per visit.
            if away_len != 0 {
                for _ in 0..away_len.min(AWAY_EXAMINE) {
                    let Some(t) = pop_injector(&vs.away) else {
                        break;
                    };
                    let meta = t
                        .meta(&r.fresh_meta[vnode as usize])
                        .to_policy(t.job.id(), victim.cpu);
                    match policy.eligibility(topo, &meta, self.cpu, ctx) {
                        Eligibility::Allowed => {
                            vs.away_len.fetch_sub(1, Ordering::Relaxed);
                            return Some(self.took(t, w, vnode, victim.level, QueueKind::Away));
                        }
                        Eligibility::Refused(why) => {
                            counters.refuse(why, level);
                            vs.away.push(t);
                            r.sleep.new_work(vnode);
                        }
                    }
                }
            }
        }
        None
    }

    /// Re-checks a task stolen from a deque with its real metadata (a policy may look at its
    /// weight or group). A refused task goes back to its victim's away queue.
    fn verify(
        &self,
        t: Task,
        w: usize,
        victim: &zonal_topology::Victim,
        ctx: MoveContext,
    ) -> Option<Task> {
        let r = &*self.registry;
        let m = t.meta(&r.fresh_meta[r.worker_node[w] as usize]);
        if m.weight == zonal_policy::NICE_0_WEIGHT && m.group == crate::task::NO_GROUP {
            // Exactly the representative task already checked.
            return Some(t);
        }
        let meta = m.to_policy(t.job.id(), victim.cpu);
        match r.policy.eligibility(&r.topo, &meta, self.cpu, ctx) {
            Eligibility::Allowed => Some(t),
            Eligibility::Refused(why) => {
                // A bare job is a default task: it returned above, and never leaves its deque.
                debug_assert!(!t.job.is_bare());
                self.counters().refuse(why, victim.level.index());
                let vs = &r.shared[w];
                vs.away_len.fetch_add(1, Ordering::Relaxed);
                vs.away.push(t);
                r.sleep.new_work(r.worker_node[w]);
                None
            }
        }
    }

    /// Books a successful steal: one more migration for the task (in the returned copy of
    /// its metadata, which the thief runs it with), counters, observer.
    fn took(
        &self,
        t: Task,
        victim: usize,
        vnode: u32,
        level: Level,
        queue: QueueKind,
    ) -> (Task, Meta) {
        let r = &*self.registry;
        let c = self.counters();
        let l = level.index();
        if let Some(s) = c.steals.get(l) {
            bump(s, 1);
        }
        if l >= r.topo.zone_depth() {
            bump(&c.beyond_zone, 1);
        }
        let mut meta = t.meta(&r.fresh_meta[vnode as usize]);
        let origin = meta.origin;
        if origin != vnode {
            let (o, from, to) = (origin.into_node(), vnode.into_node(), self.node.into_node());
            if r.topo.distance(o, to) > r.topo.distance(o, from) {
                bump(&c.farther, 1);
            }
        }
        if let Some(obs) = &r.observer {
            let rec = StealRecord {
                thief: self.index,
                victim,
                thief_node: self.node,
                victim_node: vnode,
                origin,
                level: level.0,
                migrations_before: meta.migrations,
                queue,
            };
            let _ = crate::unwind::halt_unwinding(|| obs(&rec));
        }
        meta.migrations = meta.migrations.saturating_add(1);
        (t, meta)
    }
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
