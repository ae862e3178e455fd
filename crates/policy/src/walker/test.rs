//! The walk over plain vectors: order, zone, refusals, and no task lost or duplicated.

use std::collections::VecDeque;

use zonal_topology::{presets, CpuId, NodeId, Topology};

use super::*;
use crate::view::TaskId;
use crate::PolicyConfig;

/// Per CPU: a fresh queue, an away queue (tasks with their metadata), no shared queues.
struct Vecs {
    fresh: Vec<VecDeque<TaskMeta>>,
    away: Vec<VecDeque<TaskMeta>>,
    slot_cpu: Vec<CpuId>,
    refusals: Vec<(usize, Refusal)>,
}

impl Vecs {
    fn new(topo: &Topology, walker: &StealWalker) -> Self {
        let n = topo.cpu_count();
        Self {
            fresh: vec![VecDeque::new(); n],
            away: vec![VecDeque::new(); n],
            slot_cpu: walker.slots().iter().map(|s| s.victim.cpu).collect(),
            refusals: Vec::new(),
        }
    }

    fn total(&self) -> usize {
        self.fresh.iter().chain(&self.away).map(VecDeque::len).sum()
    }
}

impl VictimQueues for Vecs {
    type Task = TaskMeta;

    fn thief_load(&self) -> u64 {
        0
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
            Source::Away => self.away[c].pop_front(),
            Source::Shared => None,
        }
    }

    fn meta(&self, _slot: usize, from: Source, task: &TaskMeta) -> Option<TaskMeta> {
        (from != Source::Fresh).then_some(*task)
    }

    fn put_back(&mut self, slot: usize, _from: Source, task: TaskMeta) {
        self.away[self.slot_cpu[slot].index()].push_back(task);
    }

    fn refused(&mut self, slot: usize, why: Refusal) {
        self.refusals.push((slot, why));
    }
}

fn s1() -> Topology {
    presets::preset("s1").unwrap()
}

#[test]
fn takes_the_nearest_fresh_task_first() {
    let topo = s1();
    let p = PolicyConfig::named("linux").unwrap().build().unwrap();
    let w = StealWalker::new(p.steal_side(), &topo, CpuId(0), |_| true);
    let mut q = Vecs::new(&topo, &w);
    let far = topo.cpus_of(NodeId(8))[0];
    q.fresh[far.index()].push_back(FreshSteal::task(&topo, far));
    q.fresh[1].push_back(FreshSteal::task(&topo, CpuId(1)));
    let got = w
        .walk(p.steal_side(), &topo, MoveContext::steal(0), &mut q)
        .unwrap();
    assert_eq!(
        (got.task.cpu, got.source, got.slot),
        (CpuId(1), Source::Fresh, 0)
    );
    let got = w
        .walk(p.steal_side(), &topo, MoveContext::steal(0), &mut q)
        .unwrap();
    assert_eq!(got.task.cpu, far);
    assert!(w
        .walk(p.steal_side(), &topo, MoveContext::steal(0), &mut q)
        .is_none());
}

#[test]
fn the_hard_zone_stops_the_walk_and_counts_once() {
    let topo = s1();
    let p = PolicyConfig::named("conservative-hard")
        .unwrap()
        .build()
        .unwrap();
    let w = StealWalker::new(p.steal_side(), &topo, CpuId(0), |_| true);
    let mut q = Vecs::new(&topo, &w);
    let far = topo.cpus_of(NodeId(8))[0];
    q.fresh[far.index()].push_back(FreshSteal::task(&topo, far));
    assert!(w
        .walk(p.steal_side(), &topo, MoveContext::steal(0), &mut q)
        .is_none());
    assert_eq!(q.refusals.len(), 1);
    assert_eq!(q.refusals[0].1, Refusal::Zone);
    assert_eq!(q.total(), 1, "a refused victim keeps its task");
}

#[test]
fn refused_away_tasks_go_back_and_aged_ones_never_move() {
    let topo = s1();
    let p = PolicyConfig::named("conservative-hard")
        .unwrap()
        .build()
        .unwrap();
    let w = StealWalker::new(p.steal_side(), &topo, CpuId(0), |_| true);
    let mut q = Vecs::new(&topo, &w);
    let mut aged = TaskMeta::new(TaskId(7), NodeId(0), CpuId(1));
    aged.migrations = 3;
    q.away[1].push_back(aged);
    assert!(w
        .walk(p.steal_side(), &topo, MoveContext::steal(0), &mut q)
        .is_none());
    assert_eq!(q.refusals, vec![(0, Refusal::Aged)]);
    assert_eq!(q.away[1].len(), 1);
    assert_eq!(
        w.decide(p.steal_side(), &topo, 0, &aged, MoveContext::steal(0), None),
        Err(Refusal::Aged)
    );
    let mut young = aged;
    young.migrations = 1;
    assert_eq!(
        w.decide(
            p.steal_side(),
            &topo,
            0,
            &young,
            MoveContext::steal(0),
            None
        ),
        Ok(())
    );
}

#[test]
fn keep_restricts_the_order() {
    let topo = s1();
    let p = PolicyConfig::named("unrestricted")
        .unwrap()
        .build()
        .unwrap();
    let w = StealWalker::new(p.steal_side(), &topo, CpuId(0), |c| c.index() < 4);
    let cpus: Vec<_> = w.slots().iter().map(|s| s.victim.cpu.index()).collect();
    assert_eq!(cpus.len(), 3);
    assert!(cpus.iter().all(|&c| c != 0 && c < 4));
    assert_eq!(w.slot_of(CpuId(1)), Some(0));
    assert_eq!(w.slot_of(CpuId(9)), None);
}
