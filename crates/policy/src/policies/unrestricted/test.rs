use crate::CpuPass;
use zonal_topology::{CpuId, NodeId};

use crate::testing::{s1, TestView};
use crate::{CpuBalanceState, Policy, PolicyConfig, PolicyName, Rng, TaskId, TaskMeta};

fn un() -> std::sync::Arc<dyn Policy> {
    PolicyConfig::new(PolicyName::UNRESTRICTED).build().unwrap()
}

#[test]
fn steals_the_oldest_movable_task_of_a_random_victim() {
    let topo = s1();
    let mut tv = TestView::new(&topo);
    let far = topo.cpus_of(NodeId(8))[0];
    let ids = tv.load(far.0, 3);
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out = un().balance_side().unwrap().idle_balance(CpuPass::new(
        &tv.view,
        &mut st,
        &mut Rng::new(3),
    ));
    assert_eq!(out.migrations.len(), 1);
    assert_eq!(out.migrations[0].task, ids[1], "the running one is skipped");
    assert_eq!(out.refused.get(crate::Refusal::Running), 1);
    // Same seed, same decision; and any seed finds the only victim.
    for seed in 0..20 {
        let a = un().balance_side().unwrap().idle_balance(CpuPass::new(
            &tv.view,
            &mut st,
            &mut Rng::new(seed),
        ));
        let b = un().balance_side().unwrap().idle_balance(CpuPass::new(
            &tv.view,
            &mut st,
            &mut Rng::new(seed),
        ));
        assert_eq!(a, b);
        assert_eq!(a.migrations[0].from, far);
    }
}

#[test]
fn random_start_spreads_thieves() {
    let topo = s1();
    let mut tv = TestView::new(&topo);
    for c in 2..topo.cpu_count() as u32 {
        tv.load(c, 2);
    }
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let victims: std::collections::BTreeSet<_> = (0..50)
        .map(|seed| {
            un().balance_side()
                .unwrap()
                .idle_balance(CpuPass::new(&tv.view, &mut st, &mut Rng::new(seed)))
                .migrations[0]
                .from
        })
        .collect();
    assert!(victims.len() > 5, "{victims:?}");
}

#[test]
fn busy_cpus_do_not_balance_and_children_stay_home() {
    let topo = s1();
    let mut tv = TestView::new(&topo);
    tv.load(0, 1);
    tv.load(1, 5);
    let mut st = CpuBalanceState::new(&topo, CpuId(0));
    let out =
        un().balance_side()
            .unwrap()
            .balance(CpuPass::new(&tv.view, &mut st, &mut Rng::new(1)));
    assert!(out.attempts.is_empty());
    let t = TaskMeta::new(TaskId(77), NodeId(0), CpuId(1));
    assert_eq!(
        un().balance_side()
            .unwrap()
            .place(&tv.view, CpuId(1), &t, &mut Rng::new(1))
            .cpu,
        CpuId(1)
    );
    // Everything but running/pinned is eligible: aged, far-born, cache-hot alike.
    let mut t = TaskMeta::new(TaskId(5), NodeId(8), CpuId(1));
    t.migrations = 99;
    t.last_ran_us = Some(0);
    let ctx = crate::MoveContext::steal(1);
    assert!(un()
        .steal_side()
        .eligibility(&topo, &t, topo.cpus_of(NodeId(9))[0], ctx)
        .is_allowed());
}
