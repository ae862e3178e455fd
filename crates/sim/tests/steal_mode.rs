//! The work-stealing mode: every task exactly once under every policy, determinism, the
//! conservative laws on the walker-driven steals, and typed errors for bad specs.

use zonal_policy::{PolicyConfig, PolicyName};
use zonal_sim::{simulate_stealing, GraphSpec, StealModeError, StealRun, TaskGraph};
use zonal_topology::{presets, Topology};

fn small() -> GraphSpec {
    GraphSpec {
        roots: 12,
        depth: 3,
        fanout: 3,
        inner_us: 5,
        leaf_us: (20, 120),
        segments: 4,
        root_nodes: 1,
    }
}

fn run(topo: &Topology, name: &str, seed: u64) -> StealRun {
    let p = PolicyConfig::named(name).unwrap().build().unwrap();
    simulate_stealing(
        topo,
        p.as_ref(),
        &TaskGraph::generate(&small(), seed).unwrap(),
    )
}

#[test]
fn every_task_runs_exactly_once_under_every_policy() {
    for preset in ["s1", "s3"] {
        let topo = presets::preset(preset).unwrap();
        for name in PolicyName::all() {
            let r = run(&topo, name.as_str(), 1);
            assert_eq!(r.tasks, 12 * 40, "{name} on {preset}");
            assert_eq!(r.tasks_run, r.tasks, "{name} on {preset}");
            assert_eq!(r.slices_run, r.tasks * 4, "{name} on {preset}");
            assert!(r.makespan_ns >= r.work_ns / topo.cpu_count() as u64);
        }
    }
}

#[test]
fn same_seed_same_run() {
    let topo = presets::preset("s1").unwrap();
    for name in ["linux", "conservative-soft"] {
        assert_eq!(run(&topo, name, 7), run(&topo, name, 7), "{name}");
    }
    assert_ne!(
        run(&topo, "linux", 7).fingerprint,
        run(&topo, "linux", 8).fingerprint
    );
}

#[test]
fn conservative_hard_keeps_steals_in_the_zone_and_near_home() {
    for preset in ["s1", "s3"] {
        let topo = presets::preset(preset).unwrap();
        let hard = run(&topo, "conservative-hard", 2);
        let s = topo.zone_depth();
        assert!(
            hard.steals_by_level.iter().sum::<u64>() > 0,
            "{preset}: no steal"
        );
        assert!(
            hard.steals_by_level[s..].iter().all(|&n| n == 0),
            "{preset}"
        );
        assert_eq!(hard.steals_beyond_zone, 0);
        assert_eq!(hard.moves_farther_from_origin, 0);
        assert_eq!(hard.aged_tasks_stolen, 0);
        // Not vacuous: without the zone, work born on one node is stolen beyond it.
        for free in ["linux", "unrestricted"] {
            let r = run(&topo, free, 2);
            assert!(r.steals_beyond_zone > 0, "{free} on {preset}");
        }
    }
}

#[test]
fn aged_tasks_are_never_stolen() {
    let topo = presets::preset("s1").unwrap();
    let mut cfg = PolicyConfig::named("conservative-hard").unwrap();
    cfg.age_limit = Some(1);
    let p = cfg.build().unwrap();
    let r = simulate_stealing(
        &topo,
        p.as_ref(),
        &TaskGraph::generate(&small(), 3).unwrap(),
    );
    assert!(r.tasks_aged > 0, "no task aged with age_limit 1");
    assert_eq!(r.aged_tasks_stolen, 0);
    assert_eq!(r.tasks_run, r.tasks);
}

#[test]
fn bad_specs_are_refused_by_field() {
    let field = |f: fn(&mut GraphSpec)| {
        let mut s = small();
        f(&mut s);
        match TaskGraph::generate(&s, 1) {
            Err(StealModeError::BadSpec { field, .. }) => field,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(field(|s| s.roots = 0), "roots");
    assert_eq!(field(|s| s.fanout = 0), "fanout");
    assert_eq!(field(|s| s.segments = 0), "segments");
    assert_eq!(field(|s| s.root_nodes = 0), "root_nodes");
    assert_eq!(field(|s| s.leaf_us = (5, 1)), "leaf_us");
    assert_eq!(field(|s| s.depth = 60), "roots/depth/fanout");
    assert_eq!(
        field(|s| {
            s.roots = usize::MAX;
            s.depth = 0
        }),
        "roots/depth/fanout"
    );
}
