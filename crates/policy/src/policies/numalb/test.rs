use crate::CpuPass;
use zonal_topology::{CpuId, NodeId};

use crate::testing::{two_nodes, TestView};
use crate::{CommCounts, CpuBalanceState, Policy, PolicyConfig, PolicyName, Rng};

fn numalb(alpha: f64) -> std::sync::Arc<dyn Policy> {
    let mut cfg = PolicyConfig::new(PolicyName::NUMALB);
    cfg.numalb_alpha = Some(alpha);
    cfg.build().unwrap()
}

#[test]
fn balanced_machines_see_no_moves() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    for c in 0..4 {
        tv.load(c, 3);
    }
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out = numalb(1.0).balance_side().unwrap().balance(CpuPass::new(
        &tv.view,
        &mut st,
        &mut Rng::new(1),
    ));
    assert!(
        out.migrations.is_empty(),
        "ties keep tasks in place: {out:?}"
    );
    assert_eq!(out.attempts.len(), 1);
}

#[test]
fn heaviest_first_onto_the_cheapest_cpu() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 4);
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out = numalb(1.0).balance_side().unwrap().balance(CpuPass::new(
        &tv.view,
        &mut st,
        &mut Rng::new(1),
    ));
    let mut to: Vec<u32> = out.migrations.iter().map(|m| m.to.0).collect();
    to.sort_unstable();
    assert_eq!(to, [1, 2, 3], "{out:?}");
    // Only the root CPU runs the centralised step.
    let mut st = CpuBalanceState::new(&topo, CpuId(1));
    let out = numalb(1.0).balance_side().unwrap().balance(CpuPass::new(
        &tv.view,
        &mut st,
        &mut Rng::new(1),
    ));
    assert!(out.migrations.is_empty() && out.attempts.is_empty());
}

#[test]
fn communication_keeps_tasks_near_their_partners() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    let chatty = tv.add(0, NodeId(0), |t| {
        t.comm = Some(CommCounts {
            local_msgs: 600,
            remote_msgs: 0,
        })
    });
    tv.load(1, 1);
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    // Staying costs 1024 − 600; CPU 1 (same node, busy) 1024 + 600·1; CPU 2 (idle, remote)
    // 0 + 600·2 = 1200. It stays.
    let out = numalb(1.0).balance_side().unwrap().balance(CpuPass::new(
        &tv.view,
        &mut st,
        &mut Rng::new(1),
    ));
    assert!(out.migrations.iter().all(|m| m.task != chatty), "{out:?}");
    // Without the communication term it moves to an idle CPU.
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out = numalb(0.0).balance_side().unwrap().balance(CpuPass::new(
        &tv.view,
        &mut st,
        &mut Rng::new(1),
    ));
    assert!(out.migrations.iter().any(|m| m.task == chatty), "{out:?}");
}
