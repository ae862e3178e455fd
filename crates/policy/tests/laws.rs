//! Laws every policy obeys, over generated machines (the paper's presets, fan-out trees,
//! meshes and tori) and generated loads.
//!
//! - Hard zone: a stolen or migrated task never leaves the zone.
//! - `NoFarther`: no move takes a task that is away from home farther from its origin;
//!   `Strict`: no move takes any task farther.
//! - Aged tasks never move.
//! - No CPU steals from or migrates to itself; every migration names a movable task of its
//!   source CPU, at most once.
//! - Same inputs and seed, same decisions.
//! - `linux` never refuses for origin, zone or age.

mod common;

use std::sync::Arc;

use common::{age_limit, configs, is_builtin, is_conservative, is_hard, topology};
use proptest::prelude::*;
use zonal_policy::{
    BalanceOutcome, CpuBalanceState, CpuPass, Eligibility, GroupId, MachineView, MoveContext,
    OriginRule, Policy, PolicyConfig, PolicyName, Refusal, Rng, SnapshotView, TaskId, TaskMeta,
    VictimDecision,
};
use zonal_topology::{CpuId, NodeId, Topology};

const NOW: u64 = 50_000_000;

/// One generated task, placed and homed by index modulo the machine's size.
#[derive(Clone, Debug)]
struct TaskSeed {
    cpu: usize,
    origin: usize,
    at_home: bool,
    migrations: u32,
    nice: i32,
    ran_ago: Option<u64>,
    pinned: bool,
    group: Option<u32>,
}

fn task_seed() -> impl Strategy<Value = TaskSeed> {
    (
        any::<usize>(),
        any::<usize>(),
        any::<bool>(),
        0u32..=5,
        -5i32..=5,
        prop::option::of(0u64..2_000),
        prop::bool::weighted(0.05),
        prop::option::of(0u32..4),
    )
        .prop_map(
            |(cpu, origin, at_home, migrations, nice, ran_ago, pinned, group)| TaskSeed {
                cpu,
                origin,
                at_home,
                migrations,
                nice,
                ran_ago,
                pinned,
                group,
            },
        )
}

fn build_view(topo: &Arc<Topology>, seeds: &[TaskSeed]) -> SnapshotView {
    let mut v = SnapshotView::new(Arc::clone(topo));
    v.set_now(NOW);
    let nodes: Vec<NodeId> = topo.cpu_nodes().collect();
    for (i, s) in seeds.iter().enumerate() {
        let cpu = CpuId::new(s.cpu % topo.cpu_count());
        let origin = if s.at_home {
            topo.node_of(cpu)
        } else {
            nodes[s.origin % nodes.len()]
        };
        let mut t = TaskMeta::new(TaskId(i as u64), origin, cpu);
        t.running = v.tasks(cpu).is_empty();
        t.migrations = s.migrations;
        t.weight = zonal_policy::nice_to_weight(s.nice);
        t.last_ran_us = s.ran_ago.map(|a| NOW - a);
        t.migratable = !s.pinned;
        t.group = s.group.map(GroupId);
        v.push_task(t);
    }
    v
}

/// Runs every decision for `cpu` and returns the outcomes (periodic, new-idle); nothing for
/// a steal-only policy.
fn decide(p: &dyn Policy, v: &SnapshotView, cpu: CpuId, seed: u64) -> [BalanceOutcome; 2] {
    let Some(b) = p.balance_side() else {
        return Default::default();
    };
    let mut st = CpuBalanceState::new(v.topology(), cpu);
    let mut rng = Rng::new(seed);
    let a = b.balance(CpuPass::new(v, &mut st, &mut rng));
    [a, b.idle_balance(CpuPass::new(v, &mut st, &mut rng))]
}

fn find(v: &SnapshotView, cpu: CpuId, id: TaskId) -> Option<&TaskMeta> {
    v.tasks(cpu).iter().find(|t| t.id == id)
}

fn check_laws(cfg: &PolicyConfig, v: &SnapshotView, cpu: CpuId, seed: u64) {
    let p = cfg.build().unwrap();
    let topo = v.topology();
    let outs = decide(&*p, v, cpu, seed);
    // Determinism.
    assert_eq!(outs, decide(&*p, v, cpu, seed), "{}", p.name());
    for out in &outs {
        let mut seen = std::collections::HashSet::new();
        for m in &out.migrations {
            assert_ne!(m.from, m.to, "{}: self-migration {m:?}", p.name());
            assert!(seen.insert(m.task), "{}: task moved twice {m:?}", p.name());
            let t = find(v, m.from, m.task).unwrap_or_else(|| panic!("{}: {m:?}", p.name()));
            assert!(!t.running && t.migratable, "{}: {t:?}", p.name());
            assert_eq!(m.level, topo.level_between(m.to, m.from));
            let (from, to) = (topo.node_of(m.from), topo.node_of(m.to));
            if is_hard(cfg) {
                assert!(
                    topo.node_in_zone(to, from),
                    "{}: left the zone {m:?}",
                    p.name()
                );
            }
            if is_conservative(cfg) {
                assert!(t.migrations < age_limit(cfg), "{}: aged {t:?}", p.name());
                let (d_from, d_to) = (topo.distance(t.origin, from), topo.distance(t.origin, to));
                match cfg.origin {
                    OriginRule::NoFarther if t.origin != from => {
                        assert!(d_to <= d_from, "{}: farther {t:?} {m:?}", p.name())
                    }
                    OriginRule::Strict => assert!(d_to <= d_from, "{}: {t:?}", p.name()),
                    _ => {}
                }
                if cfg.origin != OriginRule::Off {
                    assert!(topo.node_in_zone(to, t.origin), "{}: {t:?}", p.name());
                }
            }
        }
        if cfg.name == PolicyName::LINUX {
            for r in [
                Refusal::Zone,
                Refusal::SoftThreshold,
                Refusal::OriginOutsideZone,
                Refusal::Origin,
                Refusal::Aged,
            ] {
                assert_eq!(out.refused.get(r), 0, "linux refused for {r}");
            }
        }
    }
}

fn check_steal_path(cfg: &PolicyConfig, v: &SnapshotView, thief: CpuId) {
    let p = cfg.build().unwrap();
    let topo = v.topology();
    let ctx = MoveContext::steal(NOW);
    for victim in topo.victims(thief) {
        assert_ne!(victim.cpu, thief);
        let vl = v.cpu_load(victim.cpu).weighted_load;
        let tl = v.cpu_load(thief).weighted_load;
        let d = p.steal_side().victim(topo, thief, victim, tl, vl);
        let beyond = victim.level.index() >= topo.zone_depth();
        if is_hard(cfg) && beyond {
            assert_eq!(d, VictimDecision::Stop(Refusal::Zone));
        }
        if is_builtin(cfg) && !is_conservative(cfg) {
            assert_eq!(d, VictimDecision::Examine);
        }
        for t in v.tasks(victim.cpu) {
            let e = p.steal_side().eligibility(topo, t, thief, ctx);
            if let Eligibility::Refused(r) = e {
                if cfg.name == PolicyName::LINUX || cfg.name == PolicyName::UNRESTRICTED {
                    assert!(
                        !matches!(
                            r,
                            Refusal::Zone
                                | Refusal::Origin
                                | Refusal::OriginOutsideZone
                                | Refusal::Aged
                        ),
                        "{} refused {t:?} for {r}",
                        p.name()
                    );
                }
            } else {
                if is_hard(cfg) {
                    assert!(!beyond, "{}: eligible beyond the zone", p.name());
                }
                if is_conservative(cfg) {
                    assert!(t.migrations < age_limit(cfg));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn balancing_laws(
        topo in topology(),
        seeds in prop::collection::vec(task_seed(), 0..160),
        cpu in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let v = build_view(&topo, &seeds);
        let cpu = CpuId::new(cpu % topo.cpu_count());
        for cfg in configs() {
            check_laws(&cfg, &v, cpu, seed);
            if cfg.name == PolicyName::NUMALB {
                // NUMALB's step runs on the root CPU.
                check_laws(&cfg, &v, CpuId(0), seed);
            }
        }
    }

    #[test]
    fn steal_path_laws(
        topo in topology(),
        seeds in prop::collection::vec(task_seed(), 0..120),
        thief in any::<usize>(),
    ) {
        let v = build_view(&topo, &seeds);
        let thief = CpuId::new(thief % topo.cpu_count());
        for cfg in configs() {
            check_steal_path(&cfg, &v, thief);
        }
    }

    #[test]
    fn placement_is_deterministic_and_in_bounds(
        topo in topology(),
        seeds in prop::collection::vec(task_seed(), 0..120),
        parent in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let v = build_view(&topo, &seeds);
        let parent = CpuId::new(parent % topo.cpu_count());
        let t = TaskMeta::new(TaskId(u64::MAX), topo.node_of(parent), parent);
        for cfg in configs() {
            let p = cfg.build().unwrap();
            let Some(side) = p.balance_side() else {
                continue;
            };
            let a = side.place(&v, parent, &t, &mut Rng::new(seed));
            let b = side.place(&v, parent, &t, &mut Rng::new(seed));
            prop_assert_eq!(a, b);
            prop_assert!(a.cpu.index() < topo.cpu_count());
            prop_assert_eq!(a.level, topo.level_between(parent, a.cpu));
            if is_hard(&cfg) {
                prop_assert!(a.level.index() < topo.zone_depth());
            }
        }
    }
}
