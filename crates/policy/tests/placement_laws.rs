//! The paper-faithful placement mode (`placement = "paper"`): the conservative policies'
//! fork placement ([`BalanceSide::place`]) and new-idle balancing
//! ([`BalanceSide::idle_balance`]) decide exactly as `linux` of the same era, over
//! generated machines and loads, for both eras; under the default `"zone"` they differ
//! from `linux` somewhere (the law is not vacuous).

mod common;

use std::sync::Arc;

use common::topology;
use proptest::prelude::*;
use zonal_policy::{
    BalanceOutcome, BalanceSide, CpuPass, LinuxEra, MachineView, Placement, PlacementMode, Policy,
    PolicyConfig, PolicyName, Rng, SnapshotView, TaskId, TaskMeta,
};
use zonal_topology::{presets, CpuId, NodeId, Topology};

const NOW: u64 = 50_000_000;

/// Generated tasks: (cpu, origin, at home, migrations, nice), by index modulo the machine.
type Seed = (usize, usize, bool, u32, i32);

fn seeds() -> impl Strategy<Value = Vec<Seed>> {
    prop::collection::vec(
        (
            any::<usize>(),
            any::<usize>(),
            any::<bool>(),
            0u32..=4,
            -5i32..=5,
        ),
        0..48,
    )
}

fn build_view(topo: &Arc<Topology>, seeds: &[Seed]) -> SnapshotView {
    let mut v = SnapshotView::new(Arc::clone(topo));
    v.set_now(NOW);
    let nodes: Vec<NodeId> = topo.cpu_nodes().collect();
    for (i, &(cpu, origin, at_home, migrations, nice)) in seeds.iter().enumerate() {
        let cpu = CpuId::new(cpu % topo.cpu_count());
        let origin = if at_home {
            topo.node_of(cpu)
        } else {
            nodes[origin % nodes.len()]
        };
        let mut t = TaskMeta::new(TaskId(i as u64), origin, cpu);
        t.running = v.tasks(cpu).is_empty();
        t.migrations = migrations;
        t.weight = zonal_policy::nice_to_weight(nice);
        v.push_task(t);
    }
    v
}

fn policy(name: PolicyName, era: LinuxEra, placement: PlacementMode) -> Arc<dyn Policy> {
    let mut c = PolicyConfig::new(name);
    c.linux_era = era;
    c.placement = placement;
    c.build().unwrap()
}

/// Fork placement from `parent` and new-idle balancing of `cpu`, with seed `seed`.
fn decide(
    b: &dyn BalanceSide,
    v: &SnapshotView,
    parent: CpuId,
    cpu: CpuId,
    seed: u64,
) -> (Placement, BalanceOutcome) {
    let task = TaskMeta::new(TaskId(1 << 40), v.topology().node_of(parent), parent);
    let pl = b.place(v, parent, &task, &mut Rng::new(seed));
    let mut st = b.new_state(v.topology(), cpu);
    let mut rng = Rng::new(seed);
    (pl, b.idle_balance(CpuPass::new(v, &mut st, &mut rng)))
}

const CONSERVATIVE: [PolicyName; 2] =
    [PolicyName::CONSERVATIVE_HARD, PolicyName::CONSERVATIVE_SOFT];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Under `placement = "paper"`, conservative-hard and conservative-soft place forks and
    /// balance new-idle CPUs exactly as `linux` of the same era.
    #[test]
    fn paper_placement_is_linux(
        topo in topology(),
        seeds in seeds(),
        parent in any::<usize>(),
        cpu in any::<usize>(),
        seed in any::<u64>(),
    ) {
        let v = build_view(&topo, &seeds);
        let n = topo.cpu_count();
        let (parent, cpu) = (CpuId::new(parent % n), CpuId::new(cpu % n));
        for era in LinuxEra::ALL {
            let linux = policy(PolicyName::LINUX, era, PlacementMode::Zone);
            let want = decide(linux.balance_side().unwrap(), &v, parent, cpu, seed);
            for name in CONSERVATIVE {
                let p = policy(name, era, PlacementMode::Paper);
                let got = decide(p.balance_side().unwrap(), &v, parent, cpu, seed);
                prop_assert_eq!(&got, &want, "{} ({:?})", name, era);
            }
        }
    }
}

/// Node 0's CPUs carry three tasks each (born elsewhere), the rest idle: `linux` forks and
/// pulls across the zone, the conservative policies under the default placement do not.
fn lopsided(topo: &Arc<Topology>) -> SnapshotView {
    let mut v = SnapshotView::new(Arc::clone(topo));
    v.set_now(NOW);
    let far = topo.cpu_nodes().last().unwrap();
    let mut id = 0;
    for &c in topo.cpus_of(NodeId(0)) {
        for k in 0..3 {
            let mut t = TaskMeta::new(TaskId(id), if k == 0 { NodeId(0) } else { far }, c);
            t.running = k == 0;
            v.push_task(t);
            id += 1;
        }
    }
    v
}

/// Not vacuous: under the default `"zone"` each conservative policy differs from `linux`
/// in some fork placement or new-idle balancing, in each era, on the paper's presets; and
/// under `"paper"` the same cases agree.
#[test]
fn zone_placement_differs_from_linux() {
    for era in LinuxEra::ALL {
        let linux = policy(PolicyName::LINUX, era, PlacementMode::Zone);
        for name in CONSERVATIVE {
            let zone = policy(name, era, PlacementMode::Zone);
            let paper = policy(name, era, PlacementMode::Paper);
            let mut differ = 0;
            for preset in ["s1", "s2", "s3"] {
                let topo = Arc::new(presets::preset(preset).unwrap());
                let v = lopsided(&topo);
                let parent = topo.cpus_of(NodeId(0))[0];
                for cpu in (0..topo.cpu_count()).map(CpuId::new) {
                    let want = decide(linux.balance_side().unwrap(), &v, parent, cpu, 7);
                    let z = decide(zone.balance_side().unwrap(), &v, parent, cpu, 7);
                    let p = decide(paper.balance_side().unwrap(), &v, parent, cpu, 7);
                    assert_eq!(p, want, "{name} paper ({era:?}, {preset}, {cpu:?})");
                    differ += usize::from(z != want);
                }
            }
            assert!(differ > 0, "{name} zone never differs from linux ({era:?})");
        }
    }
}

/// The periodic balancer stays restricted under `"paper"`: its pass is the zone mode's.
#[test]
fn paper_keeps_the_periodic_balancer() {
    for era in LinuxEra::ALL {
        for name in CONSERVATIVE {
            let zone = policy(name, era, PlacementMode::Zone);
            let paper = policy(name, era, PlacementMode::Paper);
            for preset in ["s1", "s2", "s3"] {
                let topo = Arc::new(presets::preset(preset).unwrap());
                let v = lopsided(&topo);
                for cpu in (0..topo.cpu_count()).map(CpuId::new) {
                    let run = |p: &Arc<dyn Policy>| {
                        let b = p.balance_side().unwrap();
                        let mut st = b.new_state(&topo, cpu);
                        let mut rng = Rng::new(3);
                        b.balance(CpuPass::new(&v, &mut st, &mut rng))
                    };
                    assert_eq!(
                        run(&paper),
                        run(&zone),
                        "{name} ({era:?}, {preset}, {cpu:?})"
                    );
                }
            }
        }
    }
}
