//! Fork placement: the downward walk of `sched_balance_find_dst_cpu` on hand-built views.

use std::sync::Arc;

use zonal_topology::{CpuId, Level, NodeId, Topology};

use crate::testing::{machine, s1, two_nodes, TestView};
use crate::{Placement, Policy, PolicyConfig, PolicyName, Rng, TaskId, TaskMeta};

fn policy(name: &str) -> Arc<dyn Policy> {
    PolicyConfig::named(name).unwrap().build().unwrap()
}

fn place(p: &dyn Policy, tv: &TestView, parent: u32) -> Placement {
    let topo = tv.view.topology_arc();
    let task = TaskMeta::new(TaskId(999), topo.node_of(CpuId(parent)), CpuId(parent));
    p.balance_side()
        .unwrap()
        .place(&tv.view, CpuId(parent), &task, &mut Rng::new(1))
}

fn linux(tv: &TestView, parent: u32) -> (CpuId, Level) {
    let pl = place(&*policy("linux"), tv, parent);
    (pl.cpu, pl.level)
}

/// Nodes 0, 1, 2 at distance 20 from each other, node 3 at 30 from all (2 CPUs each): the
/// level-III domain of node 0 has two groups of unequal size, {0, 1, 2} (6 CPUs) and {3}.
fn lopsided() -> Arc<Topology> {
    machine(
        2,
        vec![
            vec![10, 20, 20, 30],
            vec![20, 10, 20, 30],
            vec![20, 20, 10, 30],
            vec![30, 30, 30, 10],
        ],
    )
}

#[test]
fn an_idle_machine_keeps_the_parent_cpu() {
    for topo in [two_nodes(), lopsided(), s1()] {
        let tv = TestView::new(&topo);
        assert_eq!(linux(&tv, 0), (CpuId(0), Level(0)));
        assert_eq!(linux(&tv, 3), (CpuId(3), Level(0)));
    }
}

#[test]
fn local_group_with_spare_capacity_keeps_the_task_local() {
    // Each node runs one task on its first CPU: the nodes tie on idle CPUs, so the walk
    // stays on node 0 and takes its idle CPU.
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    tv.load(2, 1);
    assert_eq!(linux(&tv, 0), (CpuId(1), Level(0)));

    // The local group {0, 1, 2} has 3 idle CPUs of 6; the remote group {3} 2 of 2. The
    // local group has at least as many idle CPUs, so the task stays on node 0 (a per-CPU
    // idle ratio would have sent it to node 3).
    let topo = lopsided();
    let mut tv = TestView::new(&topo);
    for c in [0, 2, 4] {
        tv.load(c, 1);
    }
    assert_eq!(linux(&tv, 0), (CpuId(1), Level(0)));
}

#[test]
fn more_idle_cpus_elsewhere_win_over_a_local_group_with_spare_capacity() {
    // Node 0 has one idle CPU, node 1 two: `local.idle_cpus < idlest.idle_cpus`, remote.
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    assert_eq!(linux(&tv, 0), (CpuId(2), Level(1)));
}

#[test]
fn an_overloaded_local_node_sends_the_task_to_an_idle_remote_node() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 3);
    tv.load(1, 2);
    // Node 1 is idle: its first CPU, and the walk inside node 1 keeps it.
    assert_eq!(linux(&tv, 0), (CpuId(2), Level(1)));

    // On s1: both CPUs of node 0 overloaded, everything else idle. Level IV: the local
    // group {0, 1, 2, 3, 14, 15} has 10 idle CPUs, the others (clipped to the domain) 8:
    // stay. Level III: the local group {0, 1} has 2 idle CPUs, {2, 3} and {14, 15} have 4:
    // the first of those, {2, 3}, and its first idle CPU, CPU 4 (level III), which the walk
    // inside node 2's domains keeps.
    let topo = s1();
    let mut tv = TestView::new(&topo);
    for &c in topo.cpus_of(NodeId(0)) {
        tv.load(c.0, 3);
    }
    assert_eq!(linux(&tv, 0), (CpuId(4), Level(2)));
}

#[test]
fn busy_groups_compare_load_with_the_imbalance_margin() {
    // Node 0: 3 + 3 tasks (avg 3072); node 1: 3 + 2 (avg 2560). 100·3072 ≤ 125·2560: the
    // paper's 25% keeps the task on node 0, where both CPUs tie: the parent's.
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 3);
    tv.load(1, 3);
    tv.load(2, 3);
    tv.load(3, 2);
    assert_eq!(linux(&tv, 0), (CpuId(0), Level(0)));
    // At 10% the same loads are imbalanced: node 1's least loaded CPU.
    let mut cfg = PolicyConfig::new(PolicyName::LINUX);
    cfg.numa_imbalance_pct = Some(10);
    let p = cfg.build().unwrap();
    let pl = place(&*p, &tv, 0);
    assert_eq!((pl.cpu, pl.level), (CpuId(3), Level(1)));
}

#[test]
fn ties_keep_the_task_local() {
    let topo = two_nodes();
    // Every CPU equally loaded (fully busy, then overloaded): the parent's CPU.
    for n in [1, 2] {
        let mut tv = TestView::new(&topo);
        for c in 0..4 {
            tv.load(c, n);
        }
        assert_eq!(linux(&tv, 1), (CpuId(1), Level(0)));
    }
    // Level I: a sibling with the same load does not attract the task.
    let mut tv = TestView::new(&topo);
    tv.load(0, 2);
    tv.load(1, 2);
    tv.load(2, 4);
    tv.load(3, 4);
    assert_eq!(linux(&tv, 0), (CpuId(0), Level(0)));
}

#[test]
fn the_local_cpu_loses_to_an_idle_sibling() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    tv.load(2, 1);
    tv.load(3, 1);
    assert_eq!(linux(&tv, 0), (CpuId(1), Level(0)));
}

#[test]
fn the_hard_zone_clips_the_walk() {
    // s1's zone is levels I..IV; RECLAIM_DISTANCE also stops at IV. Load everything within
    // level IV of node 0: linux and conservative-hard may only spread inside level IV.
    let topo = s1();
    let mut tv = TestView::new(&topo);
    for c in 0..topo.cpu_count() as u32 {
        if topo.level_between(CpuId(0), CpuId(c)) <= Level(3) {
            tv.load(c, 2);
        }
    }
    for name in ["linux", "conservative-hard", "conservative-soft"] {
        let pl = place(&*policy(name), &tv, 0);
        assert!(pl.level <= Level(3), "{name}: {pl:?}");
    }
}

#[test]
fn placement_is_deterministic() {
    let topo = s1();
    let mut tv = TestView::new(&topo);
    let mut rng = Rng::new(42);
    for c in 0..topo.cpu_count() as u32 {
        tv.load(c, (rng.next_u64() % 4) as usize);
    }
    let p = policy("linux");
    for parent in 0..topo.cpu_count() as u32 {
        let a = place(&*p, &tv, parent);
        let b = place(&*p, &tv, parent);
        assert_eq!(a, b);
        assert_eq!(a.level, topo.level_between(CpuId(parent), a.cpu));
    }
}
