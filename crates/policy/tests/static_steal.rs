//! The promise of [`StealSide::static_fresh_steal`], over generated machines (the paper's
//! presets, fan-out trees, meshes and tori), every policy name and its variants:
//!
//! - whenever it answers `Some(s)`, `victim` answers `s.victim_decision()` for *any* loads;
//! - and, when that is `Examine`, `eligibility` of the fresh task at home answers
//!   `s.fresh_eligibility()` in *any* context (clock, failures, kind) and for any task id;
//! - every built-in policy answers for every pair except beyond a soft zone (so that callers
//!   can skip the policy calls everywhere else), and a hard zone is never crossed: beyond it
//!   the answer is `Stop(Zone)`.

mod common;

use common::{configs, is_builtin, is_hard, topology};
use proptest::prelude::*;
use zonal_policy::{
    FreshSteal, MoveContext, MoveKind, Policy, PolicyConfig, PolicyName, Refusal, TaskId,
    VictimDecision,
};
use zonal_topology::{presets, CpuId, Topology};

fn is_soft(cfg: &PolicyConfig) -> bool {
    cfg.name == PolicyName::CONSERVATIVE_SOFT
}

/// Loads with the edge cases weighted in.
fn load() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..64, 1 => Just(0u64), 1 => Just(u64::MAX), 1 => any::<u64>()]
}

fn context() -> impl Strategy<Value = MoveContext> {
    (any::<bool>(), any::<u64>(), 0u32..8).prop_map(|(periodic, now_us, failed)| MoveContext {
        kind: if periodic {
            MoveKind::Periodic
        } else {
            MoveKind::Steal
        },
        now_us,
        nr_balance_failed: failed,
    })
}

fn check(
    cfg: &PolicyConfig,
    p: &dyn Policy,
    topo: &Topology,
    thief: CpuId,
    loads: &[(u64, u64)],
    ctxs: &[MoveContext],
    id: u64,
) {
    for victim in topo.victims(thief) {
        let name = p.name();
        let beyond = victim.level.index() >= topo.zone_depth();
        let Some(s) = p.steal_side().static_fresh_steal(topo, thief, victim) else {
            assert!(
                !is_builtin(cfg) || (is_soft(cfg) && beyond),
                "{name}: no static answer for {thief:?} <- {victim:?}"
            );
            continue;
        };
        assert!(
            !(is_soft(cfg) && beyond),
            "{name}: soft zone answered {s:?}"
        );
        if is_hard(cfg) && beyond {
            assert_eq!(s, FreshSteal::Stop(Refusal::Zone), "{name}: {victim:?}");
        }
        for &(tl, vl) in loads {
            assert_eq!(
                p.steal_side().victim(topo, thief, victim, tl, vl),
                s.victim_decision(),
                "{name}: {thief:?} <- {victim:?}, loads {tl}/{vl}"
            );
        }
        if s.victim_decision() == VictimDecision::Examine {
            let mut task = FreshSteal::task(topo, victim.cpu);
            task.id = TaskId(id);
            for &ctx in ctxs {
                assert_eq!(
                    Some(p.steal_side().eligibility(topo, &task, thief, ctx)),
                    s.fresh_eligibility(),
                    "{name}: {thief:?} <- {victim:?}, {ctx:?}"
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn static_answers_hold_for_any_load_and_clock(
        topo in topology(),
        loads in prop::collection::vec((load(), load()), 1..6),
        ctxs in prop::collection::vec(context(), 1..4),
        id in any::<u64>(),
    ) {
        for cfg in configs() {
            let p = cfg.build().unwrap();
            for c in 0..topo.cpu_count() {
                check(&cfg, &*p, &topo, CpuId::new(c), &loads, &ctxs, id);
            }
        }
    }
}

/// Same-node victims: every built-in policy lets a fresh task go (the runtime's hot case).
/// (A policy added to the catalogue need not answer in advance; when it does, the promise
/// is checked above.)
#[test]
fn same_node_fresh_steals_are_allowed_everywhere() {
    for preset in ["s1", "s2", "s3"] {
        let topo = presets::preset(preset).unwrap();
        for cfg in configs().into_iter().filter(is_builtin) {
            let p = cfg.build().unwrap();
            for c in 0..topo.cpu_count() {
                let thief = CpuId::new(c);
                for v in topo.victims(thief) {
                    if topo.node_of(v.cpu) == topo.node_of(thief) {
                        assert_eq!(
                            p.steal_side().static_fresh_steal(&topo, thief, v),
                            Some(FreshSteal::Allowed),
                            "{} on {preset}",
                            p.name()
                        );
                    }
                }
            }
        }
    }
}
