//! Laws of wake-up placement ([`BalanceSide::select_wake`]) over the paper's presets and
//! generated loads, for every policy configuration and both Linux eras.
//!
//! - Every answer is a CPU of the machine; a pinned task wakes on its previous CPU.
//! - Same inputs and seed, same answer.
//! - Conservative configurations (hard and soft zone, and the filters composed with
//!   thread-aware, NUMALB and average-weight): the woken CPU lies in the zone of the
//!   previous CPU's node; under `NoFarther` a task away from home never wakes farther from
//!   its origin than its previous CPU, under `Strict` no task does, and with an origin rule
//!   a task that changes node wakes inside its origin's zone; an aged task wakes on its
//!   previous CPU's node.

mod common;

use std::sync::Arc;

use common::{age_limit, configs, is_conservative};
use proptest::prelude::*;
use zonal_policy::{
    LinuxEra, MachineView, OriginRule, PolicyConfig, Rng, SnapshotView, TaskId, TaskMeta, WakeUp,
};
use zonal_topology::{presets, CpuId, NodeId, Topology};

const NOW: u64 = 50_000_000;

fn preset() -> impl Strategy<Value = Arc<Topology>> {
    prop_oneof![Just("s1"), Just("s2"), Just("s3")]
        .prop_map(|n| Arc::new(presets::preset(n).unwrap()))
}

/// Queue lengths per CPU (indexes modulo the machine's size): (cpu, tasks).
fn loads() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((any::<usize>(), 1usize..=3), 0..48)
}

fn build_view(topo: &Arc<Topology>, loads: &[(usize, usize)]) -> SnapshotView {
    let mut v = SnapshotView::new(Arc::clone(topo));
    v.set_now(NOW);
    let mut id = 0;
    for &(cpu, n) in loads {
        let cpu = CpuId::new(cpu % topo.cpu_count());
        for _ in 0..n {
            let mut t = TaskMeta::new(TaskId(id), topo.node_of(cpu), cpu);
            t.running = v.tasks(cpu).is_empty();
            v.push_task(t);
            id += 1;
        }
    }
    v
}

/// The generated waking task and its waker.
#[derive(Clone, Debug)]
struct Waking {
    prev: usize,
    waker: usize,
    origin: Option<usize>,
    migrations: u32,
    pinned: bool,
}

fn waking() -> impl Strategy<Value = Waking> {
    (
        any::<usize>(),
        prop_oneof![1 => Just(None), 3 => any::<usize>().prop_map(Some)],
        prop::option::of(any::<usize>()),
        0u32..=4,
        prop::bool::weighted(0.05),
    )
        .prop_map(|(prev, waker, origin, migrations, pinned)| Waking {
            prev,
            // `None`: the waker is the previous CPU, as in the simulator.
            waker: waker.unwrap_or(prev),
            origin,
            migrations,
            pinned,
        })
}

fn with_era(cfg: &PolicyConfig, era: LinuxEra) -> PolicyConfig {
    let mut c = cfg.clone();
    c.linux_era = era;
    c
}

fn check(cfg: &PolicyConfig, v: &SnapshotView, w: &Waking, seed: u64) {
    let topo = v.topology();
    let n = topo.cpu_count();
    let p = cfg.build().unwrap();
    let Some(b) = p.balance_side() else { return };
    let nodes: Vec<NodeId> = topo.cpu_nodes().collect();
    let prev = CpuId::new(w.prev % n);
    let waker = CpuId::new(w.waker % n);
    let prev_node = topo.node_of(prev);
    let origin = w.origin.map_or(prev_node, |o| nodes[o % nodes.len()]);
    let mut task = TaskMeta::new(TaskId(1 << 40), origin, prev);
    task.migrations = w.migrations;
    task.migratable = !w.pinned;
    let wake = WakeUp {
        task: &task,
        prev,
        waker,
    };
    let got = b.select_wake(v, wake, &mut Rng::new(seed));
    let again = b.select_wake(v, wake, &mut Rng::new(seed));
    let name = p.name();
    assert_eq!(got, again, "{name}: not deterministic");
    assert!(got.index() < n, "{name}: {got:?} is not a CPU");
    if w.pinned {
        assert_eq!(got, prev, "{name}: a pinned task moved");
    }
    if !is_conservative(cfg) {
        return;
    }
    let to = topo.node_of(got);
    assert!(
        topo.node_in_zone(to, prev_node),
        "{name}: woke outside the zone of {prev:?}: {got:?}"
    );
    if w.migrations >= age_limit(cfg) {
        assert_eq!(to, prev_node, "{name}: an aged task left its node");
    }
    let (d_prev, d_to) = (topo.distance(origin, prev_node), topo.distance(origin, to));
    match cfg.origin {
        OriginRule::NoFarther if origin != prev_node => {
            assert!(d_to <= d_prev, "{name}: woke farther from {origin:?}");
        }
        OriginRule::Strict => assert!(d_to <= d_prev, "{name}: woke farther from {origin:?}"),
        _ => {}
    }
    if cfg.origin != OriginRule::Off && to != prev_node {
        assert!(
            topo.node_in_zone(to, origin),
            "{name}: outside the origin's zone"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn wake_laws(
        topo in preset(),
        loads in loads(),
        wakes in prop::collection::vec(waking(), 1..8),
        seed in any::<u64>(),
    ) {
        let v = build_view(&topo, &loads);
        for cfg in configs() {
            for era in LinuxEra::ALL {
                let cfg = with_era(&cfg, era);
                for w in &wakes {
                    check(&cfg, &v, w, seed);
                }
            }
        }
    }

    /// A conservative configuration answers as `linux` whenever `linux`'s answer is allowed
    /// (the filter only restricts): checked where every CPU but the waker is busy, so
    /// Linux's choice is the waker (within `RECLAIM_DISTANCE`) or prev.
    #[test]
    fn conservative_hard_only_restricts_linux(
        topo in preset(),
        w in waking(),
    ) {
        let n = topo.cpu_count();
        let prev = CpuId::new(w.prev % n);
        let waker = CpuId::new(w.waker % n);
        let loads: Vec<(usize, usize)> =
            (0..n).filter(|&c| c != waker.index()).map(|c| (c, 1)).collect();
        let v = build_view(&topo, &loads);
        let task = TaskMeta::new(TaskId(1 << 40), topo.node_of(prev), prev);
        let linux = PolicyConfig::named("linux").unwrap().build().unwrap();
        let hard = PolicyConfig::named("conservative-hard").unwrap().build().unwrap();
        let wake = WakeUp { task: &task, prev, waker };
        let l = linux.balance_side().unwrap().select_wake(&v, wake, &mut Rng::new(0));
        let h = hard.balance_side().unwrap().select_wake(&v, wake, &mut Rng::new(0));
        let (ln, pn) = (topo.node_of(l), topo.node_of(prev));
        if topo.node_in_zone(ln, pn) {
            // A task at home may leave it within the zone under NoFarther.
            prop_assert_eq!(l, h);
        } else {
            prop_assert_eq!(topo.node_of(h), pn);
        }
    }
}
