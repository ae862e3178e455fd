use crate::CpuPass;
use std::sync::Arc;

use zonal_topology::{CpuId, Level, NodeId};

use crate::decision::Refusal;
use crate::testing::{machine, TestView};
use crate::{CpuBalanceState, GroupId, MachineView, PolicyConfig, PolicyName, Rng};

fn three_nodes() -> Arc<zonal_topology::Topology> {
    machine(
        2,
        vec![vec![10, 20, 20], vec![20, 10, 20], vec![20, 20, 10]],
    )
}

fn grouped(tv: &mut TestView, cpu: u32, g: u32) -> crate::TaskId {
    let origin = NodeId(cpu / 2);
    tv.add(cpu, origin, |t| t.group = Some(GroupId(g)))
}

#[test]
fn least_concentrated_group_goes_first() {
    let topo = three_nodes();
    let mut tv = TestView::new(&topo);
    // Node 0, CPU 0: running R, then B (group 2), then A (group 1), tail last.
    tv.load(0, 1);
    let b = grouped(&mut tv, 0, 2);
    let a = grouped(&mut tv, 0, 1);
    // Group 1 lives entirely on node 0 (share 3/3); group 2 has one of three threads there.
    grouped(&mut tv, 1, 1);
    grouped(&mut tv, 1, 1);
    grouped(&mut tv, 4, 2);
    grouped(&mut tv, 5, 2);

    let view = &tv.view;
    let tasks = view.tasks(CpuId(0));
    let mut order = [2usize, 1, 0];
    let counts = super::order(view, CpuId(0), CpuId(2), tasks, &mut order);
    assert_eq!(tasks[order[0]].id, b, "share 1/3 before 3/3");
    assert_eq!(tasks[order[1]].id, a);
    assert!(!counts.more_concentrated(&tasks[order[0]]));

    let ta = PolicyConfig::new(PolicyName::THREAD_AWARE).build().unwrap();
    let mut st = CpuBalanceState::new(&topo, CpuId(2));
    let out = ta
        .balance_side()
        .unwrap()
        .balance(CpuPass::new(view, &mut st, &mut Rng::new(1)));
    let cross: Vec<_> = out
        .migrations
        .iter()
        .filter(|m| m.level == Level(1))
        .collect();
    assert!(!cross.is_empty(), "{out:?}");
    assert_eq!(cross[0].task, b, "{out:?}");

    let lin = PolicyConfig::new(PolicyName::LINUX).build().unwrap();
    let mut st = CpuBalanceState::new(&topo, CpuId(2));
    let out = lin
        .balance_side()
        .unwrap()
        .balance(CpuPass::new(view, &mut st, &mut Rng::new(1)));
    assert_eq!(out.migrations[0].task, a, "Linux takes the tail");
}

#[test]
fn a_thread_does_not_join_a_node_holding_more_of_its_group() {
    let topo = three_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    let lone = grouped(&mut tv, 0, 7);
    tv.load(1, 3);
    // Two siblings already on node 1.
    grouped(&mut tv, 2, 7);
    grouped(&mut tv, 3, 7);
    let view = &tv.view;
    let tasks = view.tasks(CpuId(0));
    let mut order = [1usize];
    let counts = super::order(view, CpuId(0), CpuId(2), tasks, &mut order);
    assert_eq!(tasks[1].id, lone);
    assert!(
        counts.more_concentrated(&tasks[1]),
        "0 + 1 > 1 is false, 2 + 1 > 1 is true"
    );
    // Moving towards node 2 (no siblings) is fine.
    let counts = super::order(view, CpuId(0), CpuId(4), tasks, &mut order);
    assert!(!counts.more_concentrated(&tasks[1]));
}

#[test]
fn refusal_is_reported_by_the_pass() {
    let topo = three_nodes();
    let mut tv = TestView::new(&topo);
    // Node 0: CPU 0 runs R and queues G (group 9) then X (no group); CPU 1 runs one task.
    tv.load(0, 1);
    let g = grouped(&mut tv, 0, 9);
    let x = tv.add(0, NodeId(0), |_| {});
    tv.load(1, 1);
    // Node 1: CPU 2 idle, CPU 3 runs G's sibling.
    tv.add(3, NodeId(1), |t| t.group = Some(GroupId(9)));
    let ta = PolicyConfig::new(PolicyName::THREAD_AWARE).build().unwrap();
    let mut st = CpuBalanceState::new(&topo, CpuId(2));
    let out = ta
        .balance_side()
        .unwrap()
        .balance(CpuPass::new(&tv.view, &mut st, &mut Rng::new(1)));
    // G (share 1/2) is tried first but would join a node holding as many of its group as it
    // leaves: refused. X (alone) moves.
    assert_eq!(out.refused.get(Refusal::GroupConcentration), 1, "{out:?}");
    assert_eq!(out.migrations.len(), 1);
    assert_eq!(out.migrations[0].task, x);
    assert_ne!(out.migrations[0].task, g);
}
