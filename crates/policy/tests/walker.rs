//! Laws of the steal walker over generated machines, policies and queues:
//! - under a hard zone, every victim it takes from is in the thief's zone;
//! - under the conservative policies no task moves farther from its origin
//!   (`no-farther`: a task away from home; `strict`: any task) and aged tasks never move;
//! - every task is taken at most once, and refused tasks stay queued (none lost);
//! - [`StealWalker::decide`] agrees with every steal the walk made;
//! - the same queues give the same walk;
//! - batches (a driver that takes several fresh tasks at once): every task a batch hands to
//!   the thief is one `decide` allows, from a victim on the thief's node, fresh at home; none
//!   is lost or taken twice, and the walk is the same for the same queues.

mod common;

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use common::{age_limit, configs, is_conservative, is_hard, topology};
use proptest::prelude::*;
use zonal_policy::{
    FreshSteal, MoveContext, OriginRule, Policy, PolicyConfig, Probe, Refusal, Source, StealWalker,
    TaskId, TaskMeta, VictimQueues,
};
use zonal_topology::{CpuId, NodeId, Topology};

/// Per CPU a fresh queue (tasks at home that never moved), an away queue (the rest).
#[derive(Clone)]
struct Queues<'t> {
    topo: &'t Topology,
    slot_cpu: Vec<CpuId>,
    fresh: Vec<VecDeque<TaskMeta>>,
    away: Vec<VecDeque<TaskMeta>>,
    thief_load: u64,
    refusals: Vec<(usize, Refusal)>,
    /// Whether `take_batch` takes batches (else the trait's one-task default).
    batches: bool,
    /// The batch being handed out by `next_batched`.
    staged: VecDeque<TaskMeta>,
    /// Tasks of batches kept for the thief (`keep`), with their slot.
    kept: Vec<(usize, TaskMeta)>,
}

impl<'t> Queues<'t> {
    fn new(topo: &'t Topology, walker: &StealWalker, tasks: &[TaskMeta]) -> Self {
        let n = topo.cpu_count();
        let mut q = Self {
            topo,
            slot_cpu: walker.slots().map(|s| s.victim.cpu).collect(),
            fresh: vec![VecDeque::new(); n],
            away: vec![VecDeque::new(); n],
            thief_load: 0,
            refusals: Vec::new(),
            batches: false,
            staged: VecDeque::new(),
            kept: Vec::new(),
        };
        for t in tasks {
            let rep = FreshSteal::task(topo, t.cpu);
            if t.origin == rep.origin && t.migrations == 0 {
                q.fresh[t.cpu.index()].push_back(*t);
            } else {
                q.away[t.cpu.index()].push_back(*t);
            }
        }
        q
    }

    fn ids(&self) -> Vec<TaskId> {
        self.fresh
            .iter()
            .chain(&self.away)
            .flatten()
            .chain(self.kept.iter().map(|(_, t)| t))
            .map(|t| t.id)
            .collect()
    }
}

impl VictimQueues for Queues<'_> {
    type Task = TaskMeta;

    fn thief_load(&self) -> u64 {
        self.thief_load
    }

    fn probe(&mut self, slot: usize) -> Probe {
        Probe {
            away: self.away[self.slot_cpu[slot].index()].len(),
            shared: false,
        }
    }

    fn fresh_len(&mut self, slot: usize) -> usize {
        self.fresh[self.slot_cpu[slot].index()].len()
    }

    fn take(&mut self, slot: usize, from: Source) -> Option<TaskMeta> {
        let c = self.slot_cpu[slot].index();
        match from {
            Source::Fresh => self.fresh[c].pop_front(),
            _ => self.away[c].pop_front(),
        }
    }

    fn take_batch(&mut self, slot: usize, max: usize) -> Option<TaskMeta> {
        if !self.batches {
            return self.take(slot, Source::Fresh);
        }
        assert!(self.staged.is_empty(), "a batch is drained before the next");
        let q = &mut self.fresh[self.slot_cpu[slot].index()];
        let n = max.min(q.len().div_ceil(2));
        let first = q.pop_front()?;
        self.staged.extend(q.drain(..n - 1));
        Some(first)
    }

    fn next_batched(&mut self) -> Option<TaskMeta> {
        self.staged.pop_front()
    }

    fn keep(&mut self, slot: usize, t: TaskMeta) {
        self.kept.push((slot, t));
    }

    fn meta(&self, _slot: usize, from: Source, t: &TaskMeta) -> Option<TaskMeta> {
        let rep = FreshSteal::task(self.topo, t.cpu);
        let same = TaskMeta { id: rep.id, ..*t } == rep;
        (from != Source::Fresh || !same).then_some(*t)
    }

    fn put_back(&mut self, slot: usize, _from: Source, t: TaskMeta) {
        self.away[self.slot_cpu[slot].index()].push_back(t);
    }

    fn refused(&mut self, slot: usize, why: Refusal) {
        self.refusals.push((slot, why));
    }
}

fn tasks(topo: &Topology, seeds: &[(usize, usize, bool, u32, bool)]) -> Vec<TaskMeta> {
    let nodes: Vec<NodeId> = topo.cpu_nodes().collect();
    seeds
        .iter()
        .enumerate()
        .map(|(i, &(cpu, origin, home, migrations, heavy))| {
            let cpu = CpuId::new(cpu % topo.cpu_count());
            let origin = if home {
                topo.node_of(cpu)
            } else {
                nodes[origin % nodes.len()]
            };
            let mut t = TaskMeta::new(TaskId(i as u64), origin, cpu);
            t.migrations = migrations;
            if heavy {
                t.weight = zonal_policy::nice_to_weight(-5);
            }
            t
        })
        .collect()
}

/// Walks until nothing more may be taken (with batches or without); checks every law on
/// the way.
fn check(cfg: &PolicyConfig, topo: &Topology, all: &[TaskMeta], thief: CpuId, batches: bool) {
    let p = cfg.build().unwrap();
    let side = p.steal_side();
    let w = StealWalker::new(side, topo, thief, |_| true);
    let mut q = Queues::new(topo, &w, all);
    q.batches = batches;
    let ctx = MoveContext::steal(0);
    let mut taken = HashSet::new();
    let mut replay = q.clone();
    while let Some(s) = w.walk(side, topo, ctx, &mut q) {
        // Determinism: the same queues give the same steal, and the same batch.
        let again = w.walk(side, topo, ctx, &mut replay).expect("same walk");
        assert_eq!((again.task.id, again.slot), (s.task.id, s.slot));
        assert_eq!(replay.kept, q.kept);
        assert!(q.staged.is_empty(), "a walk drains its batch");
        let t = s.task;
        let victim = w.slot(s.slot).victim;
        assert_eq!(t.cpu, victim.cpu);
        assert!(taken.insert(t.id), "{}: taken twice {t:?}", p.name());
        assert_eq!(w.decide(side, topo, s.slot, &t, ctx, s.loads), Ok(()));
        let (from, to) = (topo.node_of(victim.cpu), topo.node_of(thief));
        if is_hard(cfg) {
            assert!(victim.level.index() < topo.zone_depth(), "{}", p.name());
            assert!(topo.node_in_zone(to, from));
        }
        if is_conservative(cfg) {
            assert!(t.migrations < age_limit(cfg), "{}: aged {t:?}", p.name());
            assert_eq!(side.ageing().limit(), Some(age_limit(cfg)));
            let farther = topo.distance(t.origin, to) > topo.distance(t.origin, from);
            match cfg.origin {
                OriginRule::NoFarther if t.origin != from => assert!(!farther, "{t:?}"),
                OriginRule::Strict => assert!(!farther, "{t:?}"),
                _ => {}
            }
        }
        q.thief_load = 0;
        replay.thief_load = 0;
    }
    // A batch hands the thief only tasks `decide` allows, from its own node, fresh at home;
    // (no task is kept twice: `ids` below would count it twice).
    let home = topo.node_of(thief);
    for &(slot, t) in &q.kept {
        let s = w.slot(slot);
        assert!(batches && s.batch > 1, "{}: kept without a batch", p.name());
        assert_eq!(s.fresh, Some(FreshSteal::Allowed));
        assert_eq!(t.cpu, s.victim.cpu);
        assert_eq!(
            topo.node_of(t.cpu),
            home,
            "{}: batch from another node",
            p.name()
        );
        assert_eq!(
            (t.origin, t.migrations),
            (home, 0),
            "{}: not fresh at home",
            p.name()
        );
        assert_eq!(
            w.decide(side, topo, slot, &t, ctx, None),
            Ok(()),
            "{}",
            p.name()
        );
        assert!(!taken.contains(&t.id), "{}: kept and taken {t:?}", p.name());
    }
    // Nothing lost: what is left plus what was taken (and kept) is what there was.
    let mut left = q.ids();
    left.extend(taken.iter().copied());
    left.sort();
    let mut want: Vec<TaskId> = all
        .iter()
        .filter(|t| t.cpu != thief)
        .map(|t| t.id)
        .collect();
    want.extend(all.iter().filter(|t| t.cpu == thief).map(|t| t.id));
    want.sort();
    assert_eq!(left, want, "{}", p.name());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn walker_laws(
        topo in topology(),
        seeds in prop::collection::vec(
            (any::<usize>(), any::<usize>(), any::<bool>(), 0u32..=4, prop::bool::weighted(0.1)),
            0..80,
        ),
        thief in any::<usize>(),
    ) {
        let all = tasks(&topo, &seeds);
        let thief = CpuId::new(thief % topo.cpu_count());
        for cfg in configs() {
            check(&cfg, &topo, &all, thief, false);
            check(&cfg, &topo, &all, thief, true);
        }
    }
}

/// S1, policy `name`, and CPU 0's walk over every other CPU.
fn on_s1(name: &str) -> (Topology, Arc<dyn Policy>, StealWalker) {
    let topo = zonal_topology::presets::preset("s1").unwrap();
    let p = PolicyConfig::named(name).unwrap().build().unwrap();
    let w = StealWalker::new(p.steal_side(), &topo, CpuId(0), |_| true);
    (topo, p, w)
}

fn fresh_on(topo: &Topology, cpu: CpuId) -> TaskMeta {
    FreshSteal::task(topo, cpu)
}

#[test]
fn takes_the_nearest_fresh_task_first() {
    let (topo, p, w) = on_s1("linux");
    let far = topo.cpus_of(NodeId(8))[0];
    let mut q = Queues::new(
        &topo,
        &w,
        &[fresh_on(&topo, far), fresh_on(&topo, CpuId(1))],
    );
    let ctx = MoveContext::steal(0);
    let got = w.walk(p.steal_side(), &topo, ctx, &mut q).unwrap();
    assert_eq!(
        (got.task.cpu, got.source, got.slot),
        (CpuId(1), Source::Fresh, 0)
    );
    assert_eq!(
        w.walk(p.steal_side(), &topo, ctx, &mut q).unwrap().task.cpu,
        far
    );
    assert!(w.walk(p.steal_side(), &topo, ctx, &mut q).is_none());
}

#[test]
fn the_hard_zone_stops_the_walk_and_counts_once() {
    let (topo, p, w) = on_s1("conservative-hard");
    let far = topo.cpus_of(NodeId(8))[0];
    let mut q = Queues::new(&topo, &w, &[fresh_on(&topo, far)]);
    assert!(w
        .walk(p.steal_side(), &topo, MoveContext::steal(0), &mut q)
        .is_none());
    assert_eq!(q.refusals.len(), 1);
    assert_eq!(q.refusals[0].1, Refusal::Zone);
    assert_eq!(q.ids().len(), 1, "a refused victim keeps its task");
}

#[test]
fn refused_away_tasks_go_back_and_aged_ones_never_move() {
    let (topo, p, w) = on_s1("conservative-hard");
    let mut aged = TaskMeta::new(TaskId(7), NodeId(0), CpuId(1));
    aged.migrations = 3;
    let mut q = Queues::new(&topo, &w, &[aged]);
    let ctx = MoveContext::steal(0);
    assert!(w.walk(p.steal_side(), &topo, ctx, &mut q).is_none());
    assert_eq!(q.refusals, vec![(0, Refusal::Aged)]);
    assert_eq!(q.away[1].len(), 1);
    assert_eq!(
        w.decide(p.steal_side(), &topo, 0, &aged, ctx, None),
        Err(Refusal::Aged)
    );
    let young = TaskMeta {
        migrations: 1,
        ..aged
    };
    assert_eq!(
        w.decide(p.steal_side(), &topo, 0, &young, ctx, None),
        Ok(())
    );
}

#[test]
fn keep_restricts_the_order() {
    let (topo, p, _) = on_s1("unrestricted");
    let w = StealWalker::new(p.steal_side(), &topo, CpuId(0), |c| c.index() < 4);
    let cpus: Vec<_> = w.slots().map(|s| s.victim.cpu.index()).collect();
    assert_eq!(cpus.len(), 3);
    assert!(cpus.iter().all(|&c| c != 0 && c < 4));
    assert_eq!(w.slot_of(CpuId(1)), Some(0));
    assert_eq!(w.slot_of(CpuId(9)), None);
}

/// Allowed in advance inside a node (like every built-in policy), but refuses every task of
/// another weight: a batch must check each task that is not the representative.
#[derive(Debug)]
struct NoHeavy;

impl zonal_policy::StealSide for NoHeavy {
    fn victim(
        &self,
        _: &Topology,
        _: CpuId,
        _: &zonal_topology::Victim,
        _: u64,
        _: u64,
    ) -> zonal_policy::VictimDecision {
        zonal_policy::VictimDecision::Examine
    }

    fn eligibility(
        &self,
        _: &Topology,
        task: &TaskMeta,
        _: CpuId,
        _: MoveContext,
    ) -> zonal_policy::Eligibility {
        if task.weight == zonal_policy::NICE_0_WEIGHT {
            zonal_policy::Eligibility::Allowed
        } else {
            zonal_policy::Eligibility::Refused(Refusal::CacheHot)
        }
    }

    fn static_fresh_steal(
        &self,
        _: &Topology,
        _: CpuId,
        _: &zonal_topology::Victim,
    ) -> Option<FreshSteal> {
        Some(FreshSteal::Allowed)
    }
}

#[test]
fn a_batch_takes_half_of_a_same_node_deque_and_one_task_elsewhere() {
    let (topo, p, w) = on_s1("conservative-hard");
    let far = topo.cpus_of(NodeId(1))[0];
    assert_eq!(w.slot(0).batch, zonal_policy::BATCH_MAX);
    assert_eq!(w.slot(w.slot_of(far).unwrap()).batch, 1);
    let mut tasks: Vec<TaskMeta> = (0..10).map(|_| fresh_on(&topo, CpuId(1))).collect();
    tasks.extend((0..4).map(|_| fresh_on(&topo, far)));
    for (i, t) in tasks.iter_mut().enumerate() {
        t.id = TaskId(i as u64);
    }
    let mut q = Queues::new(&topo, &w, &tasks);
    q.batches = true;
    let ctx = MoveContext::steal(0);
    let s = w.walk(p.steal_side(), &topo, ctx, &mut q).unwrap();
    // Half of 10: the steal and four kept for the thief, oldest first.
    assert_eq!(s.task.id, TaskId(0));
    let kept: Vec<u64> = q.kept.iter().map(|(_, t)| t.id.0).collect();
    assert_eq!(kept, vec![1, 2, 3, 4]);
    assert_eq!(q.fresh[1].len(), 5);
    // Another node: one task at a time.
    q.fresh[1].clear();
    let s = w.walk(p.steal_side(), &topo, ctx, &mut q).unwrap();
    assert_eq!((s.task.cpu, q.kept.len()), (far, 4));
    assert_eq!(q.fresh[far.index()].len(), 3);
}

#[test]
fn a_batch_checks_every_task_that_is_not_the_representative() {
    let topo = zonal_topology::presets::preset("s1").unwrap();
    let w = StealWalker::new(&NoHeavy, &topo, CpuId(0), |_| true);
    assert_eq!(w.slot(0).batch, zonal_policy::BATCH_MAX);
    // Heavy tasks first and among the rest: none of them may move.
    let tasks: Vec<TaskMeta> = (0..12)
        .map(|i| {
            let mut t = fresh_on(&topo, CpuId(1));
            t.id = TaskId(i);
            if i % 3 == 0 {
                t.weight = zonal_policy::nice_to_weight(-5);
            }
            t
        })
        .collect();
    let mut q = Queues::new(&topo, &w, &tasks);
    q.batches = true;
    let ctx = MoveContext::steal(0);
    let s = w.walk(&NoHeavy, &topo, ctx, &mut q).unwrap();
    // The batch was tasks 0..6: 0 and 3 refused (back to the away queue), 1 stolen.
    assert_eq!(s.task.id, TaskId(1));
    let kept: Vec<u64> = q.kept.iter().map(|(_, t)| t.id.0).collect();
    assert_eq!(kept, vec![2, 4, 5]);
    let back: Vec<u64> = q.away[1].iter().map(|t| t.id.0).collect();
    assert_eq!(back, vec![0, 3]);
    assert_eq!(q.refusals, vec![(0, Refusal::CacheHot); 2]);
    for (slot, t) in &q.kept {
        assert_eq!(w.decide(&NoHeavy, &topo, *slot, t, ctx, None), Ok(()));
    }
}
