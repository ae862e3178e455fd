//! Wake-up placement in the simulator: I/O completions ask the policy's
//! `BalanceSide::select_wake`; a wake-up on another node is a migration.
//!
//! - W3 (half the processes I/O-bound) completes every process exactly once, with exactly
//!   its demand of work, under every policy and both Linux eras.
//! - On the paper's machines (two CPUs per node) the waker is the previous CPU, so no
//!   built-in policy wakes a process on another node.
//! - On a machine of one CPU per node, the 2.6 era's `wake_idle` searches the node domain:
//!   wake-ups cross nodes, are booked as migrations, and under `conservative-hard` never
//!   leave the zone nor move an aged process.

use std::sync::Arc;

use zonal_policy::{LinuxEra, NoPolicy, Policy, PolicyConfig, PolicyName, Rng};
use zonal_sim::experiment::{paper_workload, Job, System, WorkloadId};
use zonal_sim::{simulate, CostModel, RunResult, SimConfig, Workload};
use zonal_topology::{presets, Topology};

/// Every catalogue policy in both eras, and the steal-only `NoPolicy`.
fn every_policy() -> Vec<(String, Arc<dyn Policy>)> {
    let mut out: Vec<(String, Arc<dyn Policy>)> = vec![("none".into(), Arc::new(NoPolicy))];
    for name in PolicyName::all() {
        for era in LinuxEra::ALL {
            let mut cfg = PolicyConfig::new(name);
            cfg.linux_era = era;
            out.push((format!("{name} ({era})"), cfg.build().unwrap()));
        }
    }
    out
}

fn era_policy(name: &str, era: LinuxEra) -> Arc<dyn Policy> {
    let mut cfg = PolicyConfig::named(name).unwrap();
    cfg.linux_era = era;
    cfg.build().unwrap()
}

fn io_workload(topo: &Topology, system: System, procs: usize, seed: u64) -> Workload {
    paper_workload(system, WorkloadId::W3, procs).generate(
        topo.cpu_count(),
        (0.1, 0.5),
        &mut Rng::new(seed),
    )
}

fn run(topo: &Topology, p: &dyn Policy, wl: &Workload, seed: u64) -> RunResult {
    let cfg = SimConfig {
        seed,
        trace: true,
        ..SimConfig::default()
    };
    simulate(topo, p, wl, &cfg)
}

/// Every process finished once with its exact demand; the migration counts agree.
fn check_complete(name: &str, r: &RunResult, wl: &Workload) {
    let s = &r.stats;
    assert_eq!(s.finished, wl.procs.len(), "{name}");
    assert_eq!(r.procs.len(), wl.procs.len(), "{name}");
    for (rec, spec) in r.procs.iter().zip(&wl.procs) {
        assert!(rec.finish_us.is_some(), "{name}: {rec:?}");
        assert_eq!(rec.work_us, spec.demand_us, "{name}: {rec:?}");
    }
    assert_eq!(s.work_us, s.demand_us, "{name}");
    assert!(s.wake_migrations <= s.migrations, "{name}");
    assert_eq!(
        s.migrations_by_level.iter().sum::<u64>(),
        s.migrations,
        "{name}"
    );
    assert_eq!(r.migration_log.len() as u64, s.migrations, "{name}");
    let per_proc: u64 = r.procs.iter().map(|p| u64::from(p.migrations)).sum();
    assert_eq!(per_proc, s.migrations, "{name}");
}

#[test]
fn w3_completes_every_process_once_under_every_policy_and_era() {
    for system in [System::S2, System::S3] {
        let topo = system.topology().unwrap();
        let wl = io_workload(&topo, system, 96, 11);
        assert!(
            wl.procs.iter().any(|p| p.bursts > 1),
            "W3 has I/O-bound processes"
        );
        for (name, p) in every_policy() {
            let r = run(&topo, &*p, &wl, 11);
            check_complete(&format!("{system} {name}"), &r, &wl);
            // Two CPUs per node and the waker on the previous CPU: wake-ups stay on the node.
            assert_eq!(r.stats.wake_migrations, 0, "{system} {name}");
        }
    }
}

/// 16 nodes of one CPU each in a fan-out tree (2 × 2 × 4): levels I–IV, zone I–III.
fn one_cpu_per_node() -> Topology {
    presets::hierarchical(&[2, 2, 4], 1).unwrap()
}

#[test]
fn wake_ups_across_nodes_are_migrations_and_respect_the_hard_zone() {
    let topo = one_cpu_per_node();
    let zone = topo.zone_depth();
    assert!(
        zone < topo.mal_count(),
        "the machine has levels beyond the zone"
    );
    let wl = io_workload(&topo, System::S2, 64, 5);
    let linux = run(&topo, &*era_policy("linux", LinuxEra::V2_6), &wl, 5);
    check_complete("linux 2.6", &linux, &wl);
    assert!(
        linux.stats.wake_migrations > 0,
        "2.6's wake_idle searches the node domain"
    );

    let hard = era_policy("conservative-hard", LinuxEra::V2_6);
    let limit = hard.steal_side().ageing().limit().unwrap();
    let r = run(&topo, &*hard, &wl, 5);
    check_complete("conservative-hard 2.6", &r, &wl);
    assert!(r.stats.wake_migrations > 0);
    for m in &r.migration_log {
        assert!(usize::from(m.level) < zone, "{m:?} left the zone");
    }
    assert!(r.stats.migrations_by_level[zone..].iter().all(|&n| n == 0));
    // A process migrates at most `limit` times: once aged, it wakes only on its node.
    for p in &r.procs {
        assert!(p.migrations <= limit, "{p:?}");
    }
    let job = Job {
        system: System::S2,
        label: "w3".into(),
        workload: paper_workload(System::S2, WorkloadId::W3, 64),
        policy: PolicyConfig::named("conservative-hard").unwrap(),
        seed: 5,
        cost: CostModel::default(),
        origin_at: Default::default(),
    };
    let json = zonal_sim::report::json(&job, &r.stats);
    assert_eq!(json["wake_migrations"], r.stats.wake_migrations);
}

#[test]
fn wake_placement_is_deterministic() {
    let topo = one_cpu_per_node();
    let wl = io_workload(&topo, System::S2, 48, 8);
    for name in ["linux", "conservative-soft", "numalb"] {
        let p = era_policy(name, LinuxEra::V2_6);
        let (a, b) = (run(&topo, &*p, &wl, 8), run(&topo, &*p, &wl, 8));
        assert_eq!(a.stats, b.stats, "{name}");
        assert_eq!(a.migration_log, b.migration_log, "{name}");
    }
}
