//! The work-stealing machine: one simulated worker per CPU, discrete events in simulated
//! time, and the policy crate's [`StealWalker`] deciding every steal.
//!
//! # Queues (as in the runtime, `crates/runtime/src/steal/README.md`)
//!
//! - a **deque** of tasks never migrated (mostly fresh at home; children of a tree rooted on
//!   another node carry that origin): the owner pops the newest, thieves take the oldest,
//!   checking a task whose origin is not the victim's node with its real metadata;
//! - an **away** queue of tasks away from home or already migrated: the owner pops the
//!   oldest, thieves check each with its real metadata;
//! - an **inbox** of aged tasks (the policy's `StealSide::ageing`): only the owner sees it.
//!
//! A root has its worker's node as its origin; a child inherits its parent's origin (the
//! runtime's "whole computations", `crates/runtime/src/task.rs`) and starts with no
//! migration. A stolen task keeps its origin and counts one more migration; its
//! continuation inherits both.
//!
//! # Events
//!
//! A worker is either running a slice (its `Finish` event is scheduled) or looking for work.
//! When a slice ends, a task with slices left re-queues itself (its continuation), one
//! without spawns its children onto the worker's deque, and the worker looks again: its
//! deque (newest), its inbox, its away queue, then one walk of the victims. A worker that
//! finds nothing tries again [`IDLE_BACKOFF_NS`] later. Events are ordered by (time,
//! sequence number): a run is deterministic.
//!
//! # Cost model (assumptions of this mode, not measurements)
//!
//! - A slice's work is the graph's, at local speed.
//! - [`REMOTE_SHARE`]: the share of a slice's time that is memory access. A task running on
//!   a node at NUMA factor `f` from its origin (`Topology::numa_factor`, the SLIT ratio)
//!   runs `1 + REMOTE_SHARE × (f − 1)` times slower.
//! - [`STEAL_NS`]: a steal from a CPU of the same node costs 300 ns (a few cache-line
//!   transfers between cores); a steal at NUMA factor `f` costs `f` times that.
//! - A refused task costs nothing beyond the walk; a walk costs nothing but its steals.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use zonal_policy::{
    Ageing, MoveContext, Policy, Probe, Refusal, Source, StealSide, StealWalker, TaskId, TaskMeta,
    VictimQueues, WalkSlot,
};
use zonal_topology::{CpuId, NodeId, Topology};

use super::graph::TaskGraph;
use super::StealRun;

/// Share of a slice's time spent on memory (an assumption of the model).
pub const REMOTE_SHARE: f64 = 0.3;
/// A steal from the same node, ns; a steal at NUMA factor `f` costs `f ×` this.
pub const STEAL_NS: f64 = 300.0;
/// An idle worker looks again after this long, ns.
pub const IDLE_BACKOFF_NS: u64 = 5_000;

/// A queued task: its graph index and what the policy knows of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Queued {
    task: u32,
    origin: u32,
    migrations: u32,
    /// Slices already run.
    done: u32,
}

impl Queued {
    /// A new task whose origin is `node`: never moved, no slice run.
    fn fresh(task: u32, node: u32) -> Self {
        Self {
            task,
            origin: node,
            migrations: 0,
            done: 0,
        }
    }
}

#[derive(Default)]
struct Worker {
    deque: VecDeque<Queued>,
    away: VecDeque<Queued>,
    inbox: VecDeque<Queued>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The worker finished the slice of this task.
    Finish(Queued),
    /// The worker looks for work.
    Look,
}

/// The machine during one run.
struct Machine<'a> {
    topo: &'a Topology,
    ageing: Ageing,
    workers: Vec<Worker>,
    /// Per worker (= CPU): its node.
    node: Vec<u32>,
    run: StealRun,
    hash: u64,
}

/// The victim queues of one walk, for the walker.
struct Thief<'m, 'a> {
    m: &'m mut Machine<'a>,
    thief: usize,
    /// The victim the walk is at (`visit`): its CPU and level.
    cur: (usize, usize),
}

impl Thief<'_, '_> {
    fn victim(&self, _slot: usize) -> usize {
        self.cur.0
    }
}

impl VictimQueues for Thief<'_, '_> {
    type Task = Queued;

    fn visit(&mut self, _slot: usize, victim: &WalkSlot) {
        self.cur = (victim.victim.cpu.index(), victim.victim.level.index());
    }

    fn thief_load(&self) -> u64 {
        self.m.workers[self.thief].deque.len() as u64
    }

    fn probe(&mut self, slot: usize) -> Probe {
        Probe {
            away: self.m.workers[self.victim(slot)].away.len(),
            shared: false,
        }
    }

    fn fresh_len(&mut self, slot: usize) -> usize {
        self.m.workers[self.victim(slot)].deque.len()
    }

    fn take(&mut self, slot: usize, from: Source) -> Option<Queued> {
        let v = self.victim(slot);
        let w = &mut self.m.workers[v];
        match from {
            Source::Fresh => w.deque.pop_front(),
            _ => w.away.pop_front(),
        }
    }

    fn meta(&self, slot: usize, from: Source, t: &Queued) -> Option<TaskMeta> {
        // A deque task at home (default weight, never migrated) is the representative; a
        // child of a tree rooted elsewhere is checked with its origin.
        let v = self.victim(slot);
        let representative =
            from == Source::Fresh && t.origin == self.m.node[v] && t.migrations == 0;
        (!representative).then(|| {
            let mut m = TaskMeta::new(
                TaskId(u64::from(t.task)),
                NodeId(t.origin),
                CpuId::new(self.victim(slot)),
            );
            m.migrations = t.migrations;
            m
        })
    }

    fn put_back(&mut self, slot: usize, _from: Source, t: Queued) {
        let v = self.victim(slot);
        self.m.workers[v].away.push_back(t);
    }

    fn refused(&mut self, _slot: usize, why: Refusal) {
        let level = self.cur.1;
        self.m.run.refused.add(why);
        self.m.run.refusals_by_level[level] += 1;
    }
}

impl Machine<'_> {
    fn mix(&mut self, words: &[u64]) {
        for w in words {
            self.hash = crate::fnv1a(&(self.hash ^ w).to_le_bytes());
        }
    }

    /// Queues a task on worker `w` by the runtime's rule.
    fn queue(&mut self, w: usize, t: Queued) {
        let q = &mut self.workers[w];
        if t.migrations == 0 {
            q.deque.push_back(t);
        } else if self.ageing.is_aged_after(t.migrations) {
            q.inbox.push_back(t);
        } else {
            q.away.push_back(t);
        }
    }

    /// Worker `w`'s own queues: newest fresh task, inbox, oldest away task.
    fn pop_local(&mut self, w: usize) -> Option<Queued> {
        let q = &mut self.workers[w];
        q.deque
            .pop_back()
            .or_else(|| q.inbox.pop_front())
            .or_else(|| q.away.pop_front())
    }
}

/// Runs `graph` on `topo` under `policy` (see the module docs).
pub(crate) fn run(topo: &Topology, policy: &dyn Policy, graph: &TaskGraph) -> StealRun {
    let side = policy.steal_side();
    let cpus = topo.cpu_count();
    let levels = topo.mal_count().max(1);
    let walkers: Vec<StealWalker> = (0..cpus)
        .map(|c| StealWalker::new(side, topo, CpuId::new(c), |_| true))
        .collect();
    let mut m = Machine {
        topo,
        ageing: side.ageing(),
        workers: (0..cpus).map(|_| Worker::default()).collect(),
        node: (0..cpus).map(|c| topo.node_of(CpuId::new(c)).0).collect(),
        run: StealRun::new(levels, graph),
        hash: 0,
    };
    // Roots: round-robin over the workers of the first `root_nodes` nodes.
    let nodes: Vec<NodeId> = topo.cpu_nodes().take(graph.root_nodes).collect();
    let homes: Vec<usize> = nodes
        .iter()
        .flat_map(|&n| topo.cpus_of(n).iter().map(|c| c.index()))
        .collect();
    for (i, &r) in graph.roots.iter().enumerate() {
        let w = homes[i % homes.len()];
        let t = Queued::fresh(r, m.node[w]);
        m.queue(w, t);
    }
    let mut heap: BinaryHeap<Reverse<(u64, u64, usize, Event)>> = BinaryHeap::new();
    let mut seq = 0u64;
    for w in 0..cpus {
        heap.push(Reverse((0, seq, w, Event::Look)));
        seq += 1;
    }
    let total_slices = graph.tasks.len() as u64 * u64::from(graph.segments);
    while let Some(Reverse((now, _, w, ev))) = heap.pop() {
        if let Event::Finish(t) = ev {
            m.run.slices_run += 1;
            m.mix(&[now, w as u64, u64::from(t.task), u64::from(t.done)]);
            let done = t.done + 1;
            if done < graph.segments {
                m.queue(w, Queued { done, ..t });
            } else {
                m.run.tasks_run += 1;
                for c in graph.tasks[t.task as usize].children.clone() {
                    // A child of the computation: its parent's origin.
                    let child = Queued::fresh(c, t.origin);
                    m.queue(w, child);
                }
            }
            m.run.makespan_ns = m.run.makespan_ns.max(now);
        }
        if m.run.slices_run == total_slices {
            continue;
        }
        let (task, steal_ns) = match m.pop_local(w) {
            Some(t) => (Some(t), 0),
            None => steal(&mut m, side, &walkers[w], w, now),
        };
        let (at, ev) = match task {
            Some(t) => {
                let f = topo.numa_factor(NodeId(t.origin), NodeId(m.node[w]));
                let level = topo
                    .level_between(CpuId::new(w), topo.cpus_of(NodeId(t.origin))[0])
                    .index();
                let work_ns = graph.tasks[t.task as usize].slice_us * 1000;
                let ns = (work_ns as f64 * (1.0 + REMOTE_SHARE * (f - 1.0))) as u64;
                m.run.run_ns_by_level[level] += ns;
                (now + steal_ns + ns, Event::Finish(t))
            }
            None => (now + IDLE_BACKOFF_NS, Event::Look),
        };
        heap.push(Reverse((at, seq, w, ev)));
        seq += 1;
    }
    m.run.fingerprint = m.hash;
    m.run
}

/// One walk of worker `w`'s victims; books the steal. Returns the task and the steal's cost.
fn steal(
    m: &mut Machine<'_>,
    side: &dyn StealSide,
    walker: &StealWalker,
    w: usize,
    now: u64,
) -> (Option<Queued>, u64) {
    let topo = m.topo;
    let mut thief = Thief {
        m,
        thief: w,
        cur: (w, 0),
    };
    let ctx = MoveContext::steal(now / 1000);
    let Some(s) = walker.walk(side, topo, ctx, &mut thief) else {
        return (None, 0);
    };
    let m = thief.m;
    let victim = walker.slot(s.slot).victim;
    let level = victim.level.index();
    let (from, to) = (topo.node_of(victim.cpu), NodeId(m.node[w]));
    let origin = NodeId(s.task.origin);
    m.run.steals_by_level[level] += 1;
    // Beyond the zone of the task's origin, as the runtime counts it: for a task at home,
    // the victim's level; for one away, whether the origin lies in the thief's zone.
    if topo.leaves_zone(origin, from, to, victim.level) {
        m.run.steals_beyond_zone += 1;
    }
    if origin != from && topo.farther_from(origin, from, to) {
        m.run.moves_farther_from_origin += 1;
    }
    if m.ageing.is_aged_after(s.task.migrations) {
        m.run.aged_tasks_stolen += 1;
    }
    let task = Queued {
        migrations: s.task.migrations + 1,
        ..s.task
    };
    if m.ageing.is_aged_after(task.migrations) {
        m.run.tasks_aged += 1;
    }
    let cost = (STEAL_NS * topo.numa_factor(from, to)) as u64;
    (Some(task), cost)
}
