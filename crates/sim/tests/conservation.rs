//! Every process finishes exactly once, and CPU time adds up.

mod common;

use zonal_policy::{PolicyName, Rng};
use zonal_sim::experiment::{paper_workload, System, WorkloadId};
use zonal_sim::{simulate, CostModel, RunResult, SimConfig, Workload};

fn workload(
    system: System,
    w: WorkloadId,
    procs: usize,
    seed: u64,
) -> (zonal_topology::Topology, Workload) {
    let topo = system.topology().unwrap();
    let spec = paper_workload(system, w, procs);
    let wl = spec.generate(topo.cpu_count(), (0.1, 0.5), &mut Rng::new(seed));
    (topo, wl)
}

fn check(r: &RunResult, wl: &Workload, exact_run_time: bool) {
    let s = &r.stats;
    assert_eq!(s.finished, wl.procs.len());
    assert_eq!(r.procs.len(), wl.procs.len());
    // Each process finishes exactly once, after it arrives, having done all its work.
    for (p, spec) in r.procs.iter().zip(&wl.procs) {
        let f = p.finish_us.expect("finished");
        assert!(f >= spec.arrival_us + spec.demand_us, "{p:?}");
        assert_eq!(p.work_us, spec.demand_us);
        assert!(p.run_us >= p.work_us);
    }
    assert_eq!(s.work_us, s.demand_us);
    assert_eq!(s.demand_us, wl.demand_us());
    if exact_run_time {
        // No remote penalty: wall run time equals demand exactly.
        assert_eq!(s.run_us, s.demand_us);
    } else {
        // Remote slowdown is at most 1 + 0.5 × (40/10 − 1) = 2.5 on the paper's machines,
        // plus at most 1 µs of rounding per segment.
        assert!(s.run_us as f64 <= 2.5 * s.demand_us as f64 + s.events as f64);
    }
    assert_eq!(s.exec_by_level.iter().sum::<u64>(), wl.procs.len() as u64);
    assert_eq!(s.migrations_by_level.iter().sum::<u64>(), s.migrations);
    assert_eq!(
        s.placements_by_level.iter().sum::<u64>(),
        wl.procs.len() as u64
    );
    assert!(s.lb_attempts_unsuccessful <= s.lb_attempts && s.lb_attempts <= s.lb_passes);
    assert!(s.futile_migrations <= s.migrations);
    assert_eq!(s.stale_migrations, 0);
}

#[test]
fn test_policy_conserves_work() {
    for (system, w) in [
        (System::S1, WorkloadId::W1),
        (System::S2, WorkloadId::W3),
        (System::S3, WorkloadId::W2),
    ] {
        let (topo, wl) = workload(system, w, 150, 3);
        let free = SimConfig {
            cost: CostModel::free(),
            ..SimConfig::default()
        };
        check(
            &simulate(&topo, &common::Greedy::default(), &wl, &free),
            &wl,
            true,
        );
        let costly = SimConfig {
            cost: CostModel::default(),
            ..SimConfig::default()
        };
        check(
            &simulate(&topo, &common::Greedy::default(), &wl, &costly),
            &wl,
            false,
        );
    }
}

#[test]
fn every_policy_conserves_work() {
    for name in PolicyName::all() {
        let Some(p) = common::real(name.as_str()) else {
            continue;
        };
        for (system, w, seed) in [
            (System::S1, WorkloadId::W2, 1),
            (System::S2, WorkloadId::W3, 2),
            (System::S3, WorkloadId::W3, 3),
        ] {
            let (topo, wl) = workload(system, w, 200, seed);
            let cfg = SimConfig {
                seed,
                ..SimConfig::default()
            };
            let r = simulate(&topo, p.as_ref(), &wl, &cfg);
            check(&r, &wl, false);
            let free = SimConfig {
                seed,
                cost: CostModel::free(),
                ..SimConfig::default()
            };
            check(&simulate(&topo, p.as_ref(), &wl, &free), &wl, true);
        }
    }
}
