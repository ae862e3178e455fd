//! The steal walker: for one thief, which victims to try, in which order, and whether each
//! task may move — the steal side of a policy, run over any driver's queues.
//!
//! The runtime's workers and the simulator's work-stealing mode both call
//! [`StealWalker::walk`]; they differ only in what a queue is ([`VictimQueues`]). So what the
//! runtime decides on a 32-node machine can be studied in the simulator, and a replay test
//! (`crates/runtime/tests/replay.rs`) feeds the runtime's recorded steals back through
//! [`StealWalker::decide`] to prove the two agree.
//!
//! # The walk
//!
//! The victim order is [`Topology::victims`] (nearest first), restricted to the CPUs the
//! driver has workers on, built once per thief. Each [`WalkSlot`] caches the policy's answer
//! for *fresh tasks at home* on that victim when it depends on the two CPUs alone
//! ([`StealSide::static_fresh_steal`]). A victim holds up to three kinds of queued work
//! ([`Source`]):
//!
//! - [`Source::Fresh`]: tasks at home that never moved (a worker's deque). Their eligibility
//!   is one function of (victim node, thief): one answer decides for the whole queue;
//! - [`Source::Shared`]: a queue the victim shares with its node (a node injector), visited
//!   once per node: the fresh answer first, then each popped task's real metadata;
//! - [`Source::Away`]: tasks away from home or already migrated, each checked with its real
//!   metadata; at most [`AWAY_EXAMINE`] per visit.
//!
//! For each slot, in order:
//!
//! 0. The driver's cheap hints ([`VictimQueues::probe`]): the away count, and whether the
//!    shared queue has work.
//! 1. **Cached `Allowed`** (every same-node victim under every built-in policy, every
//!    in-zone victim but under `origin = "strict"`): the policy examines this victim whatever
//!    the loads and lets any fresh task go, so neither `victim` nor the representative
//!    `eligibility` is asked and the fresh queue is not measured: take one fresh task (step
//!    3's check of its real metadata still applies) — or a **batch** where the slot allows
//!    one (below) — or, finding none, go on to steps 4–5.
//! 2. Otherwise measure the fresh queue; an empty victim (fresh, away and shared all empty)
//!    is skipped silently — refusals are counted only for work that exists. The victim
//!    decision: the cached one, or `victim(thief, victim, thief_load, victim_load)` with the
//!    driver's thief load and the victim's fresh + away (+1 when its shared queue has work).
//!    `Skip(r)`: count `r`, next victim. `Stop(r)`: count `r`, the walk ends (the hard zone
//!    boundary: victims are sorted by level, so nothing after it may be taken).
//! 3. Fresh queue: the cached fresh answer, or one `eligibility` call on the representative
//!    task ([`FreshSteal::task`]). Allowed: take one; when the driver says the task is not
//!    exactly the representative ([`VictimQueues::meta`] is `Some`: another weight or group),
//!    check its real metadata, and a refused one goes back ([`VictimQueues::put_back`]).
//!    Refused: count it.
//! 4. Shared queue: the same fresh answer; allowed → pop one and check its real metadata
//!    (its origin may differ); refused → count it, put it back.
//! 5. Away queue: pop up to [`AWAY_EXAMINE`] tasks, check each; each refused one goes back
//!    to the same queue, and the walk moves on.
//!
//! The first allowed task ends the walk ([`Stolen`]); the driver books it (one more
//! migration for the task, counters, its own steal record).
//!
//! # Batches
//!
//! A slot allows a batch ([`WalkSlot::batch`] > 1) exactly when its fresh answer is a cached
//! `Allowed` *and* the victim is on the thief's node. Then the walker asks the driver for up
//! to [`BATCH_MAX`] fresh tasks at once ([`VictimQueues::take_batch`]; the driver takes at
//! most half the queue, rounded up) and checks **each** like a single take: a task that is
//! not the representative ([`VictimQueues::meta`] is `Some`) is checked with its real
//! metadata, and a refused one is counted and goes back ([`VictimQueues::put_back`]). The
//! first allowed task is the steal ([`Stolen`]); every other allowed one is handed to the
//! driver ([`VictimQueues::keep`]), which queues it on the thief's own fresh queue. That move
//! keeps the fresh-queue invariant: the task's origin is the victim's node, which is the
//! thief's, and it never migrated — so it is a same-node move of a fresh task at home (level
//! I, inside every zone, never farther from its origin), not a migration; a driver may count
//! it apart. Everywhere else (another node, an answer that is not cached `Allowed`, shared
//! and away queues) the walker takes one task at a time. A driver without batches keeps the
//! defaults: `take_batch` takes one task, and the walk is the one-task walk.
//!
//! # Why no task is lost or run twice
//!
//! The walker never holds a task across calls: every task it takes is either returned in
//! [`Stolen`], handed back through [`VictimQueues::put_back`], or (a batch's allowed extra
//! tasks) handed to the thief through [`VictimQueues::keep`] before the walk returns; a batch
//! is drained ([`VictimQueues::next_batched`] until `None`) before anything else is taken. A
//! driver whose `take` hands a task to exactly one
//! caller and whose `put_back` requeues it on a queue the task's owner still drains keeps
//! every task exactly once.

use std::sync::Arc;

use zonal_topology::{CpuId, Level, NodeId, Tier, Topology, Victim};

use crate::decision::{Eligibility, MoveContext, Refusal, VictimDecision};
use crate::policy::{FreshSteal, StealSide};
use crate::view::TaskMeta;

/// At most this many tasks of one victim's away queue are examined per visit.
pub const AWAY_EXAMINE: usize = 4;

/// At most this many fresh tasks move in one batch (module docs, "Batches"); the driver
/// also takes at most half the victim's fresh queue, rounded up.
pub const BATCH_MAX: usize = 32;

/// One victim in a thief's walk, with the policy's answer for fresh tasks at home when it is
/// known in advance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkSlot {
    /// The victim CPU and its level and tier seen from the thief.
    pub victim: Victim,
    /// [`StealSide::static_fresh_steal`] for the pair.
    pub fresh: Option<FreshSteal>,
    /// How many fresh tasks one take from this victim may move: [`BATCH_MAX`] where `fresh`
    /// is `Allowed` and the victim is on the thief's node (module docs, "Batches"), else 1.
    pub batch: usize,
}

/// A kind of queue a victim holds (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Source {
    /// Tasks at home that never moved (a worker's deque).
    Fresh,
    /// A queue shared with the victim's node (a node injector).
    Shared,
    /// Tasks away from home or already migrated.
    Away,
}

/// The driver's cheap hints about a victim, read before anything is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Probe {
    /// How many tasks its away queue holds (a hint).
    pub away: usize,
    /// Whether its shared queue has work *and* should be visited from this slot (once per
    /// node: the driver says `true` only at the first slot of a node).
    pub shared: bool,
}

impl Probe {
    /// Nothing besides the fresh queue.
    #[inline]
    #[must_use]
    pub const fn only_fresh(&self) -> bool {
        self.away == 0 && !self.shared
    }
}

/// A driver's queues, as the walker sees them during one walk. Slots are indexes into
/// [`StealWalker::slots`].
pub trait VictimQueues {
    /// A queued task.
    type Task;

    /// The thief's own load, in the unit of [`VictimQueues::fresh_len`] (asked only where
    /// the policy's victim decision depends on loads).
    fn thief_load(&self) -> u64;

    /// The walk comes to slot `slot`, victim `victim` (called once per slot, in walk order,
    /// before anything else of that slot is asked): every later call about `slot` until
    /// the next `visit` is about this victim. The default ignores it (a driver that maps a
    /// slot to its queues by [`StealWalker::slot`] needs nothing here).
    #[inline]
    fn visit(&mut self, slot: usize, victim: &WalkSlot) {
        let _ = (slot, victim);
    }

    /// Whether the victims on `node` may hold work at all (a driver's hint, asked once per
    /// walk before the first victim of `node`): `false` skips all of them without a probe.
    /// A hint, never a promise: the walk it spares finds nothing the driver cannot live
    /// without. The default: `true` (every victim is probed).
    #[inline]
    fn node_may_have_work(&mut self, node: NodeId) -> bool {
        let _ = node;
        true
    }

    /// The walk probed every victim on `node` and saw no queued work there at all (no
    /// fresh, shared or away task, refused or not): a driver may clear its hint for
    /// `node`. Not called when the walk ended before the node's last victim.
    #[inline]
    fn node_seen_empty(&mut self, node: NodeId) {
        let _ = node;
    }

    /// The cheap hints of slot `slot` (called once per slot, in walk order).
    fn probe(&mut self, slot: usize) -> Probe;

    /// The length of the fresh queue of `slot` (may cost a fence; asked only where the cached
    /// answer is not `Allowed`).
    fn fresh_len(&mut self, slot: usize) -> usize;

    /// Takes one task of `slot`'s queue `from` (oldest first), if any.
    fn take(&mut self, slot: usize, from: Source) -> Option<Self::Task>;

    /// Takes a batch of `slot`'s fresh queue, oldest first: at most `max` tasks and at most
    /// half the queue (rounded up), and returns the first; the driver holds the others for
    /// [`next_batched`](Self::next_batched). Asked only where [`WalkSlot::batch`] is above 1
    /// (module docs, "Batches"). The default takes one task: no batch.
    fn take_batch(&mut self, slot: usize, max: usize) -> Option<Self::Task> {
        let _ = max;
        self.take(slot, Source::Fresh)
    }

    /// The next task of the batch [`take_batch`](Self::take_batch) took, until `None`. The
    /// default holds none.
    fn next_batched(&mut self) -> Option<Self::Task> {
        None
    }

    /// A task of a batch the walker checked and allowed, besides the one it returns: the
    /// driver queues it on the thief's own fresh queue (it stays fresh at home there: the
    /// victim is on the thief's node). Only ever called with tasks of
    /// [`next_batched`](Self::next_batched); the default (never called unless that returns
    /// tasks) puts the task back where it came from, so it is not lost.
    fn keep(&mut self, slot: usize, task: Self::Task) {
        self.put_back(slot, Source::Fresh, task);
    }

    /// The metadata of a task just taken, as the policy must see it (its `cpu` the
    /// victim's); `None` when it is exactly the representative fresh task of the victim
    /// ([`FreshSteal::task`]: origin = the victim's node, never migrated, never ran, default
    /// weight, no group), which was already allowed.
    fn meta(&self, slot: usize, from: Source, task: &Self::Task) -> Option<TaskMeta>;

    /// A refused task goes back, to a queue its owner still drains.
    fn put_back(&mut self, slot: usize, from: Source, task: Self::Task);

    /// One refusal, at `slot`'s level.
    fn refused(&mut self, slot: usize, why: Refusal);
}

/// A successful steal.
#[derive(Debug)]
pub struct Stolen<T> {
    /// The task.
    pub task: T,
    /// Its victim's slot.
    pub slot: usize,
    /// The queue it came from.
    pub source: Source,
    /// `(thief_load, victim_load)` when the victim decision was asked with loads.
    pub loads: Option<(u64, u64)>,
}

/// One thief's victim order with the policy's cached answers, and the walk over it.
///
/// Compact: the victims of the thief's own node are listed (by tier, then rotated from the
/// thief), the other nodes are runs — a node, its level, the policy's cached answer for it
/// and where the rotation starts — over per-node CPU lists shared by every walker built
/// together ([`StealWalker::for_thieves`]). A walker is O(CPUs of its node + nodes), so a
/// pool's walkers are O(workers × (workers per node + nodes)), not O(workers²).
///
/// ```
/// # use zonal_policy::doc_facade as zonal;
/// use zonal::policy::{PolicyConfig, StealWalker, FreshSteal, Refusal};
/// use zonal::topology::{presets, CpuId};
/// let topo = presets::preset("s1")?;
/// let policy = PolicyConfig::named("conservative-hard")?.build()?;
/// let w = StealWalker::new(policy.steal_side(), &topo, CpuId(0), |_| true);
/// assert_eq!(w.len(), topo.cpu_count() - 1);
/// // The same node first, allowed in advance; the walk stops at the zone's end.
/// assert_eq!(w.slot(0).fresh, Some(FreshSteal::Allowed));
/// assert_eq!(w.slot(w.len() - 1).fresh, Some(FreshSteal::Stop(Refusal::Zone)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct StealWalker {
    thief: CpuId,
    /// The victims on the thief's own node, in order: slots `0..local.len()` (by tier,
    /// so each tier is a contiguous range of them, `tiers`).
    local: Box<[CpuId]>,
    /// Per tier present among `local`, in order: where its range ends, and its slots'
    /// cached answer and batch size.
    tiers: Box<[LocalTier]>,
    /// The runs of victims on other nodes, in order, after the local slots.
    runs: Box<[Run]>,
    /// Per node: its CPUs the driver keeps, ascending (shared by the walkers built together).
    kept: Arc<[Box<[CpuId]>]>,
    len: usize,
}

/// The victims of one tier of the thief's own node: `local[previous end..end]`.
#[derive(Clone, Copy, Debug)]
struct LocalTier {
    tier: Tier,
    end: u32,
    fresh: Option<FreshSteal>,
    batch: usize,
}

/// The victims of one other node in a walk: `kept[node]` from index `first`, wrapping.
#[derive(Clone, Copy, Debug)]
struct Run {
    node: NodeId,
    level: Level,
    fresh: Option<FreshSteal>,
    /// The walk's slot index of the run's first victim.
    start: u32,
    /// Where the rotation starts in `kept[node]`.
    first: u32,
}

impl StealWalker {
    /// The walk of `thief` over the victims `keep` accepts (the CPUs the driver has workers
    /// on), nearest first, with `policy`'s cached answers.
    pub fn new(
        policy: &dyn StealSide,
        topo: &Topology,
        thief: CpuId,
        keep: impl FnMut(CpuId) -> bool,
    ) -> Self {
        Self::for_thieves(policy, topo, &[thief], keep)
            .pop()
            .expect("one walker per thief")
    }

    /// The walks of `thieves` (in order) over the victims `keep` accepts, sharing one copy
    /// of the per-node CPU lists: what a pool of thousands of workers builds.
    ///
    /// The cached answer of another node's victims is asked once per node, of the node's
    /// first kept CPU: [`StealSide::static_fresh_steal`] promises an answer that depends on
    /// the two CPUs alone, and every built-in policy's depends only on their nodes and the
    /// victim's level and tier, which all victims of one other node share.
    pub fn for_thieves(
        policy: &dyn StealSide,
        topo: &Topology,
        thieves: &[CpuId],
        mut keep: impl FnMut(CpuId) -> bool,
    ) -> Vec<Self> {
        let keep_cpu: Vec<bool> = (0..topo.cpu_count()).map(|c| keep(CpuId::new(c))).collect();
        let kept: Arc<[Box<[CpuId]>]> = (0..topo.node_count())
            .map(|n| {
                topo.cpus_of(NodeId::new(n))
                    .iter()
                    .copied()
                    .filter(|c| keep_cpu[c.index()])
                    .collect()
            })
            .collect();
        thieves
            .iter()
            .map(|&thief| Self::build(policy, topo, thief, &keep_cpu, Arc::clone(&kept)))
            .collect()
    }

    fn build(
        policy: &dyn StealSide,
        topo: &Topology,
        thief: CpuId,
        keep: &[bool],
        kept: Arc<[Box<[CpuId]>]>,
    ) -> Self {
        let plan = topo.victim_plan(thief);
        let mut local = Vec::with_capacity(plan.local.len());
        let mut tiers: Vec<LocalTier> = Vec::new();
        for v in plan.local.iter().filter(|v| keep[v.cpu.index()]) {
            if tiers.last().is_none_or(|t| t.tier != v.tier) {
                // The cached answer of a tier, asked of its first victim (the answer of a
                // same-node victim depends on its tier alone, as for another node's).
                let fresh = policy.static_fresh_steal(topo, thief, v);
                // Batches: allowed in advance, and fresh at home on the thief's node too.
                let batch = if fresh == Some(FreshSteal::Allowed) {
                    BATCH_MAX
                } else {
                    1
                };
                tiers.push(LocalTier {
                    tier: v.tier,
                    end: 0,
                    fresh,
                    batch,
                });
            }
            local.push(v.cpu);
            if let Some(t) = tiers.last_mut() {
                t.end = u32::try_from(local.len()).unwrap_or(u32::MAX);
            }
        }
        let mut start = local.len();
        let mut runs = Vec::with_capacity(plan.remote.len());
        for &(node, level) in &plan.remote {
            let list = &kept[node.index()];
            let Some(&rep) = list.first() else {
                continue;
            };
            // The rotation of the node's whole CPU list, restricted to the kept ones.
            let all = topo.cpus_of(node);
            let from = all[plan.pos % all.len()];
            let first = list.partition_point(|&c| c < from) % list.len();
            let fresh = policy.static_fresh_steal(
                topo,
                thief,
                &Victim {
                    cpu: rep,
                    level,
                    tier: Tier::Remote,
                },
            );
            runs.push(Run {
                node,
                level,
                fresh,
                start: u32::try_from(start).unwrap_or(u32::MAX),
                first: u32::try_from(first).unwrap_or(0),
            });
            start += list.len();
        }
        Self {
            thief,
            local: local.into_boxed_slice(),
            tiers: tiers.into_boxed_slice(),
            runs: runs.into_boxed_slice(),
            kept,
            len: start,
        }
    }

    /// The thief.
    #[inline]
    #[must_use]
    pub fn thief(&self) -> CpuId {
        self.thief
    }

    /// How many victims the walk has.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the walk has no victim (a driver with one worker).
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slot `i` of the victim order.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    #[must_use]
    pub fn slot(&self, i: usize) -> WalkSlot {
        if i < self.local.len() {
            return self.local_slot(i);
        }
        assert!(i < self.len, "slot {i} of a walk of {}", self.len);
        let r = self.runs.partition_point(|r| r.start as usize <= i) - 1;
        self.run_slot(&self.runs[r], i - self.runs[r].start as usize)
    }

    /// Local victim `i` (on the thief's node).
    #[inline]
    fn local_slot(&self, i: usize) -> WalkSlot {
        let t = &self.tiers[self.tiers.partition_point(|t| t.end as usize <= i)];
        self.tier_slot(t, i)
    }

    /// Local victim `i`, of tier `t`.
    #[inline]
    fn tier_slot(&self, t: &LocalTier, i: usize) -> WalkSlot {
        WalkSlot {
            victim: Victim {
                cpu: self.local[i],
                level: Level::LOCAL,
                tier: t.tier,
            },
            fresh: t.fresh,
            batch: t.batch,
        }
    }

    /// Victim `k` of `run`.
    #[inline]
    fn run_slot(&self, run: &Run, k: usize) -> WalkSlot {
        let list = &self.kept[run.node.index()];
        WalkSlot {
            victim: Victim {
                cpu: list[(run.first as usize + k) % list.len()],
                level: run.level,
                tier: Tier::Remote,
            },
            fresh: run.fresh,
            batch: 1,
        }
    }

    /// The victim order, slot by slot.
    pub fn slots(&self) -> impl ExactSizeIterator<Item = WalkSlot> + '_ {
        (0..self.len).map(|i| self.slot(i))
    }

    /// The slot of victim `cpu`, if it is in the order.
    #[must_use]
    pub fn slot_of(&self, cpu: CpuId) -> Option<usize> {
        self.slots().position(|s| s.victim.cpu == cpu)
    }

    /// Walks the victims once (module docs); `None`: nothing the thief may take right now.
    #[inline]
    pub fn walk<Q: VictimQueues + ?Sized>(
        &self,
        policy: &dyn StealSide,
        topo: &Topology,
        ctx: MoveContext,
        q: &mut Q,
    ) -> Option<Stolen<Q::Task>> {
        let walk = Walk {
            policy,
            topo,
            ctx,
            thief: self.thief,
        };
        // The thief's own node first, then the other nodes' runs; a node whose hint says
        // it holds no work is passed over whole.
        let home = topo.node_of(self.thief);
        if !self.local.is_empty() && q.node_may_have_work(home) {
            let mut from = 0;
            let slots = self.tiers.iter().flat_map(|t| {
                let range = from..t.end as usize;
                from = t.end as usize;
                range.map(move |i| (i, self.tier_slot(t, i)))
            });
            match self.visit_node(&walk, q, home, slots) {
                Visit::Next => {}
                Visit::Stolen(s) => return Some(s),
                Visit::Stop => return None,
            }
        }
        for r in &*self.runs {
            if !q.node_may_have_work(r.node) {
                continue;
            }
            let n = self.kept[r.node.index()].len();
            let slots = (0..n).map(|k| (r.start as usize + k, self.run_slot(r, k)));
            match self.visit_node(&walk, q, r.node, slots) {
                Visit::Next => {}
                Visit::Stolen(s) => return Some(s),
                Visit::Stop => return None,
            }
        }
        None
    }

    /// The victims of one node, in order; tells the driver when none held any work.
    #[inline]
    fn visit_node<Q: VictimQueues + ?Sized>(
        &self,
        walk: &Walk<'_>,
        q: &mut Q,
        node: NodeId,
        slots: impl Iterator<Item = (usize, WalkSlot)>,
    ) -> Visit<Q::Task> {
        let mut seen = false;
        for (i, slot) in slots {
            q.visit(i, &slot);
            match self.visit_slot(walk, q, i, &slot, &mut seen) {
                Visit::Next => {}
                other => return other,
            }
        }
        if !seen {
            q.node_seen_empty(node);
        }
        Visit::Next
    }

    /// One victim of a walk (module docs, steps 0–5); `seen`: set when it held any work.
    #[inline]
    fn visit_slot<Q: VictimQueues + ?Sized>(
        &self,
        walk: &Walk<'_>,
        q: &mut Q,
        i: usize,
        slot: &WalkSlot,
        seen: &mut bool,
    ) -> Visit<Q::Task> {
        let probe = q.probe(i);
        *seen |= !probe.only_fresh();
        let (fresh, loads) = if slot.fresh == Some(FreshSteal::Allowed) {
            // 1. Allowed in advance: no question, no measuring; a batch on our node.
            let stolen = if slot.batch > 1 {
                walk.take_batch(q, i, slot.batch, seen)
            } else {
                walk.take(q, i, Source::Fresh, None, seen)
            };
            if let Some(s) = stolen {
                return Visit::Stolen(s);
            }
            if probe.only_fresh() {
                return Visit::Next;
            }
            (Eligibility::Allowed, None)
        } else {
            // 2. Measure; skip empty victims; the victim decision.
            let fresh_len = q.fresh_len(i);
            *seen |= fresh_len != 0;
            if fresh_len == 0 && probe.only_fresh() {
                return Visit::Next;
            }
            let (decision, loads) = walk.victim_decision(slot, q, fresh_len, probe);
            match decision {
                VictimDecision::Examine => {}
                VictimDecision::Skip(why) => {
                    q.refused(i, why);
                    return Visit::Next;
                }
                VictimDecision::Stop(why) => {
                    q.refused(i, why);
                    return Visit::Stop;
                }
            }
            // 3. One answer for the fresh queue.
            let fresh = walk.fresh_eligibility(slot);
            if fresh_len != 0 {
                if let Some(s) = walk.take_if(fresh, q, i, Source::Fresh, loads, seen) {
                    return Visit::Stolen(s);
                }
            }
            (fresh, loads)
        };
        // 4. The shared queue, once per node.
        if probe.shared {
            if let Some(s) = walk.take_if(fresh, q, i, Source::Shared, loads, seen) {
                return Visit::Stolen(s);
            }
        }
        // 5. Away tasks, one by one.
        for _ in 0..probe.away.min(AWAY_EXAMINE) {
            let Some(task) = q.take(i, Source::Away) else {
                break;
            };
            if let Some(s) = walk.check(q, i, Source::Away, task, loads) {
                return Visit::Stolen(s);
            }
        }
        Visit::Next
    }

    /// What the walk decides for `task` queued on `slot`'s victim: `Ok` when the thief may
    /// take it. `loads` are the `(thief, victim)` loads the victim decision saw, where it
    /// depends on them (a walk reports them in [`Stolen::loads`]); `None` reads as idle
    /// thief, one task on the victim.
    ///
    /// # Errors
    /// The refusal the walk would count for the task: the victim decision's, or the task's.
    pub fn decide(
        &self,
        policy: &dyn StealSide,
        topo: &Topology,
        slot: usize,
        task: &TaskMeta,
        ctx: MoveContext,
        loads: Option<(u64, u64)>,
    ) -> Result<(), Refusal> {
        let walk = Walk {
            policy,
            topo,
            ctx,
            thief: self.thief,
        };
        let s = &self.slot(slot);
        let decision = match s.fresh {
            Some(f) => f.victim_decision(),
            None => {
                let (thief, victim) = loads.unwrap_or((0, 1));
                policy.victim(topo, self.thief, &s.victim, thief, victim)
            }
        };
        match decision {
            VictimDecision::Examine => {}
            VictimDecision::Skip(why) | VictimDecision::Stop(why) => return Err(why),
        }
        let representative = FreshSteal::task(topo, s.victim.cpu);
        let same = TaskMeta {
            id: representative.id,
            ..*task
        } == representative;
        let answer = if same {
            walk.fresh_eligibility(s)
        } else {
            policy.eligibility(topo, task, self.thief, ctx)
        };
        match answer {
            Eligibility::Allowed => Ok(()),
            Eligibility::Refused(why) => Err(why),
        }
    }
}

/// What one victim of a walk came to.
enum Visit<T> {
    Next,
    Stolen(Stolen<T>),
    Stop,
}

/// What one walk asks with: the policy, the machine, the clock and the thief.
#[derive(Clone, Copy)]
struct Walk<'a> {
    policy: &'a dyn StealSide,
    topo: &'a Topology,
    ctx: MoveContext,
    thief: CpuId,
}

impl Walk<'_> {
    /// The victim decision for a victim that has work: cached, or asked with loads.
    #[inline]
    fn victim_decision<Q: VictimQueues + ?Sized>(
        &self,
        slot: &WalkSlot,
        q: &Q,
        fresh_len: usize,
        probe: Probe,
    ) -> (VictimDecision, Option<(u64, u64)>) {
        match slot.fresh {
            Some(f) => (f.victim_decision(), None),
            None => {
                let victim_load = (fresh_len + probe.away) as u64 + u64::from(probe.shared);
                let loads = (q.thief_load(), victim_load);
                let d = self
                    .policy
                    .victim(self.topo, self.thief, &slot.victim, loads.0, loads.1);
                (d, Some(loads))
            }
        }
    }

    /// The eligibility of the victim's representative fresh task: cached, or asked once.
    #[inline]
    fn fresh_eligibility(&self, slot: &WalkSlot) -> Eligibility {
        match slot.fresh.and_then(FreshSteal::fresh_eligibility) {
            Some(e) => e,
            None => {
                let rep = FreshSteal::task(self.topo, slot.victim.cpu);
                self.policy
                    .eligibility(self.topo, &rep, self.thief, self.ctx)
            }
        }
    }

    /// Under the queue's fresh answer: allowed → take one and check it; refused → count.
    #[inline]
    fn take_if<Q: VictimQueues + ?Sized>(
        &self,
        fresh: Eligibility,
        q: &mut Q,
        slot: usize,
        from: Source,
        loads: Option<(u64, u64)>,
        seen: &mut bool,
    ) -> Option<Stolen<Q::Task>> {
        match fresh {
            Eligibility::Allowed => self.take(q, slot, from, loads, seen),
            Eligibility::Refused(why) => {
                q.refused(slot, why);
                None
            }
        }
    }

    /// Takes one task of a queue whose fresh answer is `Allowed`, and checks it.
    #[inline]
    fn take<Q: VictimQueues + ?Sized>(
        &self,
        q: &mut Q,
        slot: usize,
        from: Source,
        loads: Option<(u64, u64)>,
        seen: &mut bool,
    ) -> Option<Stolen<Q::Task>> {
        let task = q.take(slot, from)?;
        *seen = true;
        self.check(q, slot, from, task, loads)
    }

    /// Takes a batch of up to `max` fresh tasks of a same-node victim allowed in advance
    /// (module docs, "Batches"), checks each like a single take; the first allowed one is
    /// the steal, the other allowed ones go to the thief's fresh queue (`keep`), the refused
    /// ones back (`put_back`).
    #[inline]
    fn take_batch<Q: VictimQueues + ?Sized>(
        &self,
        q: &mut Q,
        slot: usize,
        max: usize,
        seen: &mut bool,
    ) -> Option<Stolen<Q::Task>> {
        let first = q.take_batch(slot, max)?;
        *seen = true;
        let mut stolen = self.check(q, slot, Source::Fresh, first, None);
        while let Some(task) = q.next_batched() {
            if !self.allowed(q, slot, Source::Fresh, &task) {
                q.put_back(slot, Source::Fresh, task);
            } else if stolen.is_none() {
                stolen = Some(Stolen {
                    task,
                    slot,
                    source: Source::Fresh,
                    loads: None,
                });
            } else {
                q.keep(slot, task);
            }
        }
        stolen
    }

    /// Whether a task just taken from a queue whose fresh answer is `Allowed` may go: the
    /// representative may; another is checked with its real metadata, and a refusal counted.
    #[inline]
    fn allowed<Q: VictimQueues + ?Sized>(
        &self,
        q: &mut Q,
        slot: usize,
        from: Source,
        task: &Q::Task,
    ) -> bool {
        let Some(meta) = q.meta(slot, from, task) else {
            return true;
        };
        match self
            .policy
            .eligibility(self.topo, &meta, self.thief, self.ctx)
        {
            Eligibility::Allowed => true,
            Eligibility::Refused(why) => {
                q.refused(slot, why);
                false
            }
        }
    }

    /// Checks a task just taken with its real metadata unless it is the representative; a
    /// refused one is counted and goes back.
    #[inline]
    fn check<Q: VictimQueues + ?Sized>(
        &self,
        q: &mut Q,
        slot: usize,
        from: Source,
        task: Q::Task,
        loads: Option<(u64, u64)>,
    ) -> Option<Stolen<Q::Task>> {
        if !self.allowed(q, slot, from, &task) {
            q.put_back(slot, from, task);
            return None;
        }
        Some(Stolen {
            task,
            slot,
            source: from,
            loads,
        })
    }
}
