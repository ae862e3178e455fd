//! Small hand-checked scenarios with known answers (no costs, no remote penalty).

mod common;

use zonal_sim::{simulate, Burst, CostModel, SimConfig, Workload};
use zonal_topology::presets;

fn cfg() -> SimConfig {
    SimConfig {
        cost: CostModel::free(),
        trace: true,
        ..SimConfig::default()
    }
}

fn cpu_bound(n: usize, ms: u64) -> Workload {
    let mut w = Workload::default();
    for _ in 0..n {
        w.push(
            0,
            0,
            0.3,
            &[Burst {
                cpu_us: ms * 1000,
                io_us: 0,
            }],
        );
    }
    w
}

#[test]
fn two_cpus_two_equal_processes_run_side_by_side() {
    let topo = presets::mesh(1, 1, false, 2).unwrap();
    let r = simulate(
        &topo,
        &common::Greedy::default(),
        &cpu_bound(2, 200),
        &cfg(),
    );
    assert_eq!(r.stats.finished, 2);
    assert_eq!(r.stats.avg_tat_us, 200_000.0);
    assert_eq!(r.stats.makespan_us, 200_000);
    assert_eq!(r.stats.migrations, 0);
}

#[test]
fn one_cpu_round_robins_with_100ms_slices() {
    let topo = presets::mesh(1, 1, false, 1).unwrap();
    let r = simulate(
        &topo,
        &common::Greedy::default(),
        &cpu_bound(2, 200),
        &cfg(),
    );
    // P0 0-100, P1 100-200, P0 200-300 (done), P1 300-400 (done).
    assert_eq!(r.procs[0].finish_us, Some(300_000));
    assert_eq!(r.procs[1].finish_us, Some(400_000));
    assert_eq!(r.stats.avg_tat_us, 350_000.0);
    assert_eq!(
        r.trace.as_deref(),
        Some("Process-0: P0.run(100) - P0.wait(100) - P0.run(100)\nProcess-1: P0.wait(100) - P0.run(100) - P0.wait(100) - P0.run(100)\n")
    );
}

#[test]
fn idle_cpu_pulls_the_queued_task() {
    // Placement: P0→cpu0, P1→cpu1, P2→cpu0. At 200 ms cpu1 finishes P1 and pulls P0, the
    // queued task of cpu0 (P2 runs there since 100 ms); both end at 300 ms.
    let topo = presets::mesh(1, 1, false, 2).unwrap();
    let r = simulate(
        &topo,
        &common::Greedy::default(),
        &cpu_bound(3, 200),
        &cfg(),
    );
    let fin: Vec<_> = r.procs.iter().map(|p| p.finish_us.unwrap()).collect();
    assert_eq!(fin, vec![300_000, 200_000, 300_000]);
    assert_eq!(r.stats.migrations, 1);
    assert_eq!(r.stats.futile_migrations, 0);
    assert_eq!(r.migration_log[0].from, 0);
    assert_eq!(r.migration_log[0].to, 1);
}

#[test]
fn io_bound_process_waits_and_resumes() {
    let topo = presets::mesh(1, 1, false, 1).unwrap();
    let mut w = Workload::default();
    w.push(
        0,
        0,
        0.0,
        &[
            Burst {
                cpu_us: 80_000,
                io_us: 20_000,
            },
            Burst {
                cpu_us: 80_000,
                io_us: 0,
            },
        ],
    );
    let r = simulate(&topo, &common::Greedy::default(), &w, &cfg());
    assert_eq!(r.procs[0].finish_us, Some(180_000));
    assert_eq!(
        r.trace.as_deref(),
        Some("Process-0: P0.run(80) - IO(20) - P0.run(80)\n")
    );
}

#[test]
fn remote_memory_slows_work_by_the_numa_factor() {
    // Two nodes of one CPU, distance 20 (factor 2). P0 (200 ms) and P2 (100 ms, 50% memory
    // bound) go to cpu0, P1 (50 ms) to cpu1. At 50 ms cpu1 pulls P2, whose memory stays on
    // node 0: its 100 ms of work take 100 × (1 + 0.5 × (2 − 1)) = 150 ms, ending at 200 ms.
    let topo = presets::mesh(2, 1, false, 1).unwrap();
    assert_eq!(topo.levels(), &[10, 20]);
    let mut w = Workload::default();
    for (ms, mb) in [(200, 0.0), (50, 0.0), (100, 0.5)] {
        w.push(
            0,
            0,
            mb,
            &[Burst {
                cpu_us: ms * 1000,
                io_us: 0,
            }],
        );
    }
    let cfg = SimConfig {
        cost: CostModel {
            remote_scale: 1.0,
            ..CostModel::free()
        },
        ..cfg()
    };
    let r = simulate(&topo, &common::Greedy::default(), &w, &cfg);
    // Work is accounted in whole µs: a slice that ends mid-burst rounds the work done down,
    // so each cut-short segment may add 1 µs.
    assert!((200_000..=200_001).contains(&r.procs[2].finish_us.unwrap()));
    assert!((150_000..=150_001).contains(&r.procs[2].run_us));
    assert_eq!(r.procs[2].work_us, 100_000);
    assert_eq!(r.procs[0].finish_us, Some(200_000));
    assert_eq!(r.stats.migrations_by_level, vec![0, 1]);
    // Origins are the parent's node (node 0): P2 and P1 ran at level II, P0 at level I.
    assert_eq!(r.procs[2].main_level, 1);
    assert_eq!(r.stats.exec_by_level, vec![1, 2]);
}

#[test]
fn arrivals_later_than_zero_count_from_arrival() {
    let topo = presets::mesh(1, 1, false, 1).unwrap();
    let mut w = Workload::default();
    w.push(
        50_000,
        0,
        0.0,
        &[Burst {
            cpu_us: 30_000,
            io_us: 0,
        }],
    );
    let r = simulate(&topo, &common::Greedy::default(), &w, &cfg());
    assert_eq!(r.stats.avg_tat_us, 30_000.0);
    assert_eq!(r.stats.makespan_us, 80_000);
}

#[test]
fn every_real_policy_runs_two_equal_processes_side_by_side() {
    // Fork balancing puts the second process on the idle CPU: both finish at 200 ms.
    // `unrestricted` does no fork balancing: the idle CPU steals it at its first 4 ms tick.
    let topo = presets::mesh(1, 1, false, 2).unwrap();
    for (name, p) in common::balancing_policies() {
        let r = simulate(&topo, p.as_ref(), &cpu_bound(2, 200), &cfg());
        if name == zonal_policy::PolicyName::UNRESTRICTED {
            assert_eq!(r.stats.avg_tat_us, 202_000.0, "{name}");
            assert_eq!(r.stats.migrations, 1, "{name}");
        } else {
            assert_eq!(r.stats.avg_tat_us, 200_000.0, "{name}");
            assert_eq!(r.stats.migrations, 0, "{name}");
        }
    }
}

#[test]
fn every_real_policy_balances_three_processes_on_two_cpus() {
    // However the first pass goes, 600 ms of work on 2 CPUs cannot end before 300 ms, and
    // with new-idle balancing no CPU idles while work waits: the makespan is 300 ms.
    let topo = presets::mesh(1, 1, false, 2).unwrap();
    for (name, p) in common::balancing_policies() {
        let r = simulate(&topo, p.as_ref(), &cpu_bound(3, 200), &cfg());
        assert_eq!(r.stats.finished, 3, "{name}");
        assert!(r.stats.makespan_us >= 300_000, "{name}");
        assert!(
            r.stats.makespan_us <= 400_000,
            "{name}: {}",
            r.stats.makespan_us
        );
    }
}
