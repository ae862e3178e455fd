//! Wake-up placement on hand-built views: both eras' Linux logic, the conservative mask,
//! the delegating policies and the default.

use std::sync::Arc;

use zonal_topology::{CpuId, NodeId, Topology};

use crate::testing::{machine, s1, two_nodes, TestView};
use crate::{wake_near_prev, MachineView, Policy, PolicyConfig, PolicyName, Rng, TaskId, TaskMeta};

fn policy(name: &str) -> Arc<dyn Policy> {
    PolicyConfig::named(name).unwrap().build().unwrap()
}

fn era_2_6(name: &str) -> Arc<dyn Policy> {
    let mut cfg = PolicyConfig::named(name).unwrap();
    cfg.linux_era = crate::LinuxEra::V2_6;
    cfg.build().unwrap()
}

/// The waking task: born on `origin`, last ran on `prev`.
fn waking(origin: NodeId, prev: u32) -> TaskMeta {
    TaskMeta::new(TaskId(999), origin, CpuId(prev))
}

fn wake(p: &dyn Policy, tv: &TestView, task: &TaskMeta, waker: u32) -> CpuId {
    p.balance_side().unwrap().select_wake(
        &tv.view,
        crate::WakeUp {
            task,
            prev: task.cpu,
            waker: CpuId(waker),
        },
        &mut Rng::new(1),
    )
}

/// One node of four CPUs and a second node at distance 20.
fn quad() -> Arc<Topology> {
    machine(4, vec![vec![10, 20], vec![20, 10]])
}

#[test]
fn default_is_prev_then_first_idle_sibling_then_prev() {
    let topo = quad();
    let mut tv = TestView::new(&topo);
    let t = waking(NodeId(0), 2);
    assert_eq!(wake_near_prev(&tv.view, &t, CpuId(2)), CpuId(2));
    tv.load(2, 1);
    // CPUs 0, 1 and 3 idle: the first of the node.
    assert_eq!(wake_near_prev(&tv.view, &t, CpuId(2)), CpuId(0));
    tv.load(0, 1);
    tv.load(1, 1);
    tv.load(3, 1);
    assert_eq!(wake_near_prev(&tv.view, &t, CpuId(2)), CpuId(2));
    // Another node's idle CPUs are never chosen.
    assert!(tv.view.cpu_load(CpuId(4)).idle);
    let pinned = TaskMeta {
        migratable: false,
        ..t
    };
    let mut tv = TestView::new(&topo);
    tv.load(2, 1);
    assert_eq!(wake_near_prev(&tv.view, &pinned, CpuId(2)), CpuId(2));
}

#[test]
fn modern_with_the_waker_on_prev_is_select_idle_sibling() {
    let topo = quad();
    let p = policy("linux");
    let mut tv = TestView::new(&topo);
    let t = waking(NodeId(0), 2);
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(2), "idle prev");
    tv.load(2, 1);
    tv.load(0, 1);
    // select_idle_cpu scans from prev + 1, wrapping: CPU 3 before CPU 1.
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(3));
    tv.load(3, 1);
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(1));
    tv.load(1, 2);
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(2), "busy node: prev");
}

#[test]
fn modern_wake_affine_pulls_to_a_lighter_waker_within_reclaim_distance() {
    let topo = two_nodes();
    let p = policy("linux");
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    tv.load(1, 1);
    let t = waking(NodeId(0), 0);
    // Idle waker on node 1 (distance 20 ≤ RECLAIM_DISTANCE): 100·1024 < 112·1024.
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(2));
    // A waker as loaded as prev: 100·2048 ≥ 112·1024, prev wins (and its node is busy).
    tv.load(2, 1);
    tv.load(3, 1);
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(0));
}

#[test]
fn modern_prefers_an_idle_prev_and_an_idle_cache_sharing_waker() {
    let topo = quad();
    let p = policy("linux");
    let mut tv = TestView::new(&topo);
    tv.load(2, 1);
    let t = waking(NodeId(0), 2);
    // wake_affine_idle: the waker (CPU 1) is idle and shares the LLC with a busy prev.
    assert_eq!(wake(&*p, &tv, &t, 1), CpuId(1));
    // An idle prev wins over a busy waker on another node.
    let mut tv = TestView::new(&topo);
    tv.load(5, 3);
    assert_eq!(wake(&*p, &tv, &t, 5), CpuId(2));
}

#[test]
fn modern_is_never_affine_beyond_reclaim_distance() {
    let topo = machine(2, vec![vec![10, 40], vec![40, 10]]);
    let p = policy("linux");
    let mut tv = TestView::new(&topo);
    tv.load(0, 3);
    tv.load(1, 3);
    let t = waking(NodeId(0), 0);
    // The idle waker is at distance 40 > 30: no SD_WAKE_AFFINE, the task stays at prev.
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(0));
}

#[test]
fn era_2_6_wakes_on_prev_without_an_idle_search_when_prev_wakes_it() {
    let topo = quad();
    let p = era_2_6("linux");
    let mut tv = TestView::new(&topo);
    tv.load(2, 1);
    let t = waking(NodeId(0), 2);
    // SD_CPU_INIT has no SD_WAKE_IDLE: CPUs 0, 1, 3 are idle, yet the task wakes on prev.
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(2));
    // The modern kernel finds the idle sibling.
    assert_eq!(wake(&*policy("linux"), &tv, &t, 2), CpuId(3));
}

#[test]
fn era_2_6_affine_and_passive_balancing() {
    let topo = two_nodes();
    let p = era_2_6("linux");
    let mut tv = TestView::new(&topo);
    tv.load(0, 2);
    let t = waking(NodeId(0), 0);
    // Same node (SD_CPU_INIT: SD_WAKE_AFFINE): 100·(0 + 1024) ≤ 112·2048.
    assert_eq!(wake(&*p, &tv, &t, 1), CpuId(1));
    // Node domain (SD_WAKE_BALANCE only): 112·0 ≤ 100·2048, the lighter waker wins.
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(2));
    // A waker loaded like prev: 112·2048 > 100·2048, prev.
    tv.load(2, 2);
    assert_eq!(wake(&*p, &tv, &t, 2), CpuId(0));
}

#[test]
fn era_2_6_wake_idle_searches_the_node_domain_when_level_i_is_degenerate() {
    // One CPU per node: level I is removed, the node domain (SD_WAKE_IDLE) is the first.
    let topo = machine(1, vec![vec![10, 20], vec![20, 10]]);
    let p = era_2_6("linux");
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    let t = waking(NodeId(0), 0);
    assert_eq!(wake(&*p, &tv, &t, 0), CpuId(1));
}

/// S1 with every CPU of node 0 running two tasks, a task at home on CPU 0, and the first
/// CPU of the farthest node (beyond node 0's zone).
fn s1_busy_home() -> (Arc<Topology>, TestView, TaskMeta, CpuId) {
    let topo = s1();
    let mut tv = TestView::new(&topo);
    let home = topo.node_of(CpuId(0));
    for &c in topo.cpus_of(home) {
        tv.load(c.0, 2);
    }
    let far = topo.victims(CpuId(0)).last().unwrap().cpu;
    assert!(!topo.node_in_zone(topo.node_of(far), home));
    (topo, tv, waking(home, 0), far)
}

/// [`s1_busy_home`], the waker on the far CPU: Linux (2.6, passive balancing across the
/// machine) takes the waker.
#[test]
fn conservative_hard_never_wakes_beyond_the_zone() {
    let (_, tv, t, far) = s1_busy_home();
    assert_eq!(wake(&*era_2_6("linux"), &tv, &t, far.0), far);
    for name in ["conservative-hard", "conservative-soft"] {
        let got = wake(&*era_2_6(name), &tv, &t, far.0);
        assert_eq!(got, CpuId(0), "{name}");
    }
}

/// The ablation's `wake_zone`: `linux` with the hard zone on wake-ups alone wakes as the
/// conservative policies do in the case above, and as `linux` inside the zone.
#[test]
fn linux_with_wake_zone_alone_keeps_wake_ups_in_the_zone() {
    let (topo, tv, t, far) = s1_busy_home();
    let home = topo.node_of(CpuId(0));
    let mut cfg = PolicyConfig::named("linux")
        .unwrap()
        .with_mechanism(crate::Mechanism::WakeZone);
    cfg.linux_era = crate::LinuxEra::V2_6;
    let zoned = cfg.build().unwrap();
    assert_eq!(wake(&*zoned, &tv, &t, far.0), CpuId(0));
    // Inside the zone (the waker on the node next door) it answers as `linux`.
    let near = topo
        .victims(CpuId(0))
        .iter()
        .map(|v| v.cpu)
        .find(|&c| topo.node_of(c) != home)
        .unwrap();
    assert!(topo.node_in_zone(topo.node_of(near), home));
    assert_eq!(
        wake(&*zoned, &tv, &t, near.0),
        wake(&*era_2_6("linux"), &tv, &t, near.0)
    );
}

#[test]
fn aged_tasks_wake_only_on_prev_node() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    tv.load(1, 1);
    let mut t = waking(NodeId(0), 0);
    assert_eq!(wake(&*policy("conservative-hard"), &tv, &t, 2), CpuId(2));
    t.migrations = crate::DEFAULT_AGE_LIMIT;
    assert_eq!(wake(&*policy("linux"), &tv, &t, 2), CpuId(2));
    assert_eq!(wake(&*policy("conservative-hard"), &tv, &t, 2), CpuId(0));
    // On prev's node an aged task may still take an idle sibling.
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    assert_eq!(wake(&*policy("conservative-hard"), &tv, &t, 0), CpuId(1));
}

#[test]
fn no_farther_keeps_a_task_away_from_home_from_waking_farther() {
    // A line of three nodes: 0 — 1 — 2.
    let topo = machine(
        2,
        vec![vec![10, 20, 30], vec![20, 10, 20], vec![30, 20, 10]],
    );
    let mut tv = TestView::new(&topo);
    tv.load(2, 1);
    tv.load(3, 1);
    // Born on node 0, last ran on node 1 (CPU 2); the idle waker is on node 2, farther.
    let t = waking(NodeId(0), 2);
    assert_eq!(wake(&*policy("linux"), &tv, &t, 4), CpuId(4));
    assert_eq!(wake(&*policy("conservative-hard"), &tv, &t, 4), CpuId(2));
    // A waker on the origin's node is closer: allowed.
    assert_eq!(wake(&*policy("conservative-hard"), &tv, &t, 0), CpuId(0));
}

#[test]
fn delegating_and_filtered_policies_answer_as_their_inner_balancer() {
    let topo = s1();
    let mut tv = TestView::new(&topo);
    for c in 0..topo.cpu_count() as u32 {
        tv.load(c, (c % 3) as usize);
    }
    let home = topo.node_of(CpuId(6));
    let t = waking(home, 6);
    for waker in [6, 7, 9, 20, 31] {
        let linux = wake(&*policy("linux"), &tv, &t, waker);
        let hard = wake(&*policy("conservative-hard"), &tv, &t, waker);
        for name in [PolicyName::NUMALB, PolicyName::AVERAGE_WEIGHT] {
            let plain = PolicyConfig::new(name).build().unwrap();
            assert_eq!(wake(&*plain, &tv, &t, waker), linux, "{name}");
            let mut cfg = PolicyConfig::new(name);
            cfg.conservative_filters = Some(true);
            assert_eq!(wake(&*cfg.build().unwrap(), &tv, &t, waker), hard, "{name}");
        }
        assert_eq!(wake(&*policy("thread-aware"), &tv, &t, waker), linux);
    }
}

#[test]
fn unrestricted_wakes_on_the_waker_and_pinned_tasks_on_prev() {
    let topo = two_nodes();
    let tv = TestView::new(&topo);
    let mut t = waking(NodeId(0), 0);
    assert_eq!(wake(&*policy("unrestricted"), &tv, &t, 3), CpuId(3));
    t.migratable = false;
    for name in ["unrestricted", "linux", "conservative-hard"] {
        assert_eq!(wake(&*policy(name), &tv, &t, 3), CpuId(0), "{name}");
    }
}

#[test]
fn cpus_outside_the_topology_are_never_answered() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    let t = waking(NodeId(0), 0);
    // A bad waker counts as prev: Linux takes prev's idle sibling, unrestricted prev.
    for (name, want) in [("linux", 1), ("conservative-hard", 1), ("unrestricted", 0)] {
        assert_eq!(wake(&*policy(name), &tv, &t, 99), CpuId(want), "{name}");
    }
    // A bad prev is answered as itself by the Linux family and the default.
    let bad = waking(NodeId(0), 99);
    for name in ["linux", "conservative-hard"] {
        assert_eq!(wake(&*policy(name), &tv, &bad, 0), CpuId(99), "{name}");
    }
    assert_eq!(wake_near_prev(&tv.view, &bad, CpuId(99)), CpuId(99));
}
