use crate::CpuPass;
use zonal_topology::CpuId;

use crate::decision::AttemptOutcome;
use crate::testing::{two_nodes, TestView};
use crate::{CpuBalanceState, Policy, PolicyConfig, PolicyName, Rng};

fn aw() -> std::sync::Arc<dyn Policy> {
    PolicyConfig::new(PolicyName::AVERAGE_WEIGHT)
        .build()
        .unwrap()
}

#[test]
fn a_cpu_above_the_average_sheds_to_those_below() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 4);
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out =
        aw().balance_side()
            .unwrap()
            .balance(CpuPass::new(&tv.view, &mut st, &mut Rng::new(1)));
    // Threshold 4096 / 4 = 1024: three tasks go, one to each idle CPU, nearest first.
    let to: Vec<u32> = out.migrations.iter().map(|m| m.to.0).collect();
    assert_eq!(to.len(), 3, "{out:?}");
    assert_eq!(to[0], 1, "the node sibling first");
    assert!(to.contains(&2) && to.contains(&3));
    assert_eq!(out.attempts[0].outcome, AttemptOutcome::Moved);
}

#[test]
fn cpus_at_or_below_the_average_do_nothing() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    tv.load(0, 4);
    tv.load(1, 1);
    let mut st = CpuBalanceState::new(&topo, CpuId(1));
    let out =
        aw().balance_side()
            .unwrap()
            .balance(CpuPass::new(&tv.view, &mut st, &mut Rng::new(1)));
    assert!(out.migrations.is_empty());
    assert_eq!(out.attempts[0].outcome, AttemptOutcome::Balanced);
}

#[test]
fn weights_follow_nice_values() {
    let topo = two_nodes();
    let mut tv = TestView::new(&topo);
    // One running nice-0 task and one heavy queued task (nice −5: 3121) on CPU 0;
    // threshold (1024 + 3121 + 2048) / 4 = 1548.
    tv.load(0, 1);
    tv.add(0, zonal_topology::NodeId(0), |t| {
        t.weight = crate::nice_to_weight(-5)
    });
    tv.load(2, 2);
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out =
        aw().balance_side()
            .unwrap()
            .balance(CpuPass::new(&tv.view, &mut st, &mut Rng::new(1)));
    assert_eq!(out.migrations.len(), 1);
    assert_eq!(out.migrations[0].to, CpuId(1));
}
