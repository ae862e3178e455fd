//! Table 1's count (`t1_attempts`, `t1_failed`) and the 2.6 balancer's cost model: the
//! modern era's figures do not move, the 2.6 cost is deterministic, and the counts keep
//! their invariants.

use zonal_policy::{LinuxEra, PolicyConfig};
use zonal_sim::cost::Linux26Cost;
use zonal_sim::experiment::{self, Job, System};
use zonal_sim::{Arrival, CostModel, ExecTime, OriginAt, RunStats, WorkloadSpec};

/// Table 1's row 7 (8-2-3, 100 CPU-bound processes of 300 ms, random arrival).
fn job(era: LinuxEra, cost: CostModel, seed: u64) -> Job {
    let mut cfg = PolicyConfig::named("linux").unwrap();
    cfg.linux_era = era;
    Job {
        system: System::T823,
        label: "t1-7".into(),
        workload: WorkloadSpec {
            procs: 100,
            exec: ExecTime::Fixed(300),
            arrival: Arrival::Uniform { window_ms: 1_000 },
            io_share: 0.0,
        },
        policy: cfg,
        seed,
        cost,
        origin_at: OriginAt::Parent,
    }
}

fn stats(era: LinuxEra, cost: CostModel, seed: u64) -> RunStats {
    experiment::run(&job(era, cost, seed), false).unwrap().stats
}

#[test]
fn the_modern_era_counts_as_before() {
    // Without the 2.6 cost model no chosen move goes unperformed: Table 1's count is the
    // policy's own, and the run is the one `for_linux_era(false)` leaves unchanged.
    for seed in 1..=3 {
        let s = stats(LinuxEra::Modern, CostModel::default(), seed);
        assert_eq!(s.t1_attempts, s.lb_attempts);
        assert_eq!(s.t1_failed, s.lb_attempts_unsuccessful);
        let again = stats(
            LinuxEra::Modern,
            CostModel::default().for_linux_era(false),
            seed,
        );
        assert_eq!(s, again);
    }
    // The cost model's JSON (run reports) has no 2.6 entry outside the 2.6 era.
    let json = serde_json::to_string(&CostModel::default()).unwrap();
    assert!(!json.contains("linux_2_6"), "{json}");
}

#[test]
fn the_2_6_cost_is_deterministic_and_counts_failures() {
    let cost = CostModel::default().for_linux_era(true);
    let a = stats(LinuxEra::V2_6, cost, 1);
    let b = stats(LinuxEra::V2_6, cost, 1);
    assert_eq!(a, b);
    assert_eq!(a.finished, a.procs);
    assert!(a.t1_attempts > 0);
    assert_eq!(a.t1_attempts, a.lb_attempts);
    // Moves decided on lagged loads may not be performed: failures only grow.
    assert!(a.t1_failed >= a.lb_attempts_unsuccessful);
    assert!(a.t1_failed <= a.t1_attempts);
    // Balancing costs more under the 2.6 model than without it, same decisions aside.
    let plain = stats(LinuxEra::V2_6, CostModel::default(), 1);
    assert!(a.lb_cost_us > 0.0 && plain.lb_cost_us > 0.0);
}

#[test]
fn without_load_lag_every_chosen_move_is_performed() {
    let cost = CostModel::default().for_linux_era(true);
    let live = CostModel {
        linux_2_6: Some(Linux26Cost {
            load_lag_us: 0,
            ..Linux26Cost::default()
        }),
        ..cost
    };
    let s = stats(LinuxEra::V2_6, live, 2);
    assert_eq!(s.t1_failed, s.lb_attempts_unsuccessful);
    assert_eq!(s.stale_migrations, 0);
}
