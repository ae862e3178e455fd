//! Table 1's count (`t1_attempts`, `t1_failed`: periodic calls of busy CPUs), the
//! imbalanced attempts beside it, and the 2.6 balancer's cost model: the modern era's
//! figures do not move, the 2.6 cost is deterministic, and the counts keep their
//! invariants.

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
        assert_eq!(s.imbalanced_attempts, s.lb_attempts);
        assert_eq!(s.imbalanced_failed, s.lb_attempts_unsuccessful);
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
    assert!(a.imbalanced_attempts > 0);
    assert_eq!(a.imbalanced_attempts, a.lb_attempts);
    // Moves decided on lagged loads may not be performed: failures only grow.
    assert!(a.imbalanced_failed >= a.lb_attempts_unsuccessful);
    assert!(a.imbalanced_failed <= a.imbalanced_attempts);
    // Table 1's attempts are calls (a subset of them), and each success moved a task.
    assert!(a.t1_attempts > 0 && a.t1_attempts <= a.lb_calls);
    assert!(a.t1_failed <= a.t1_attempts);
    assert!(a.t1_attempts - a.t1_failed <= a.migrations);
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
    assert_eq!(s.imbalanced_failed, s.lb_attempts_unsuccessful);
    assert_eq!(s.stale_migrations, 0);
}

mod common;

mod lagged {
    //! A hand-built run of the counting: every process starts on CPU 0 and the idle CPUs
    //! pull its queued tasks at the same ticks.

    use zonal_policy::{
        BalanceOutcome, BalanceSide, CpuPass, Eligibility, MachineView, MoveContext, Placement,
        Policy, Rng, StealSide, TaskMeta, VictimDecision,
    };
    use zonal_sim::cost::Linux26Cost;
    use zonal_sim::{simulate, Burst, CostModel, RunStats, SimConfig, Workload};
    use zonal_topology::{CpuId, Level, Topology, Victim};

    use super::common::Greedy;

    /// [`Greedy`], but every process is placed on CPU 0.
    #[derive(Debug, Default)]
    struct Pile(Greedy);

    impl Policy for Pile {
        fn name(&self) -> &str {
            "pile-test"
        }
        fn steal_side(&self) -> &dyn StealSide {
            self
        }
        fn balance_side(&self) -> Option<&dyn BalanceSide> {
            Some(self)
        }
    }

    impl StealSide for Pile {
        fn victim(&self, t: &Topology, c: CpuId, v: &Victim, a: u64, b: u64) -> VictimDecision {
            self.0.victim(t, c, v, a, b)
        }
        fn eligibility(&self, t: &Topology, k: &TaskMeta, c: CpuId, x: MoveContext) -> Eligibility {
            self.0.eligibility(t, k, c, x)
        }
    }

    impl BalanceSide for Pile {
        fn balance(&self, pass: CpuPass<'_>) -> BalanceOutcome {
            self.0.balance(pass)
        }
        fn idle_balance(&self, _: CpuPass<'_>) -> BalanceOutcome {
            BalanceOutcome::default()
        }
        fn place(&self, _: &dyn MachineView, _: CpuId, _: &TaskMeta, _: &mut Rng) -> Placement {
            Placement {
                cpu: CpuId(0),
                level: Level::LOCAL,
            }
        }
    }

    fn run(load_lag_us: u64) -> RunStats {
        let topo = zonal_topology::presets::preset("s1").unwrap();
        let mut w = Workload::default();
        for _ in 0..4 {
            w.push(
                0,
                0,
                0.0,
                &[Burst {
                    cpu_us: 50_000,
                    io_us: 0,
                }],
            );
        }
        let cost = CostModel {
            linux_2_6: Some(Linux26Cost {
                load_lag_us,
                tick_us: 4_000,
                ..Linux26Cost::default()
            }),
            ..CostModel::free()
        };
        let cfg = SimConfig {
            cost,
            ..SimConfig::default()
        };
        simulate(&topo, &Pile::default(), &w, &cfg).stats
    }

    #[test]
    fn live_loads_every_pull_succeeds() {
        let s = run(0);
        assert_eq!(s.finished, 4);
        assert!(s.imbalanced_attempts > 0);
        assert_eq!((s.imbalanced_failed, s.stale_migrations), (0, 0));
    }

    #[test]
    fn only_periodic_calls_of_busy_cpus_are_table_1_attempts() {
        // Four 50 ms processes, so at most 200 ms of busy CPU time in all, and `Greedy`
        // balances a CPU at most once per 8 ms: at most one attempt per 8 ms of busy time
        // and one more per CPU that was ever busy. The idle CPUs' calls (they pull CPU 0's
        // queue) are calls but not attempts.
        for lag in [0, 4_000] {
            let s = run(lag);
            assert_eq!(s.finished, 4);
            assert!(s.t1_attempts > 0, "{s:?}");
            assert!(s.t1_attempts <= 200 / 8 + 4, "{s:?}");
            assert!(s.lb_calls > s.t1_attempts, "{s:?}");
            assert!(s.t1_failed <= s.t1_attempts);
            assert!(s.t1_attempts - s.t1_failed <= s.migrations);
        }
    }

    #[test]
    fn lagged_loads_pulls_of_a_task_already_taken_fail() {
        // With a load lag, the idle CPUs of one tick all read CPU 0's queue as it was, pick
        // the same tail task, and all but the first find it gone: each of those attempts
        // failed, though the policy chose a move (`lb_attempts_unsuccessful` stays 0).
        let s = run(4_000);
        assert_eq!(s.finished, 4);
        assert_eq!(s.lb_attempts_unsuccessful, 0);
        assert!(s.imbalanced_failed > 0, "{s:?}");
        assert_eq!(s.imbalanced_failed, s.stale_migrations);
        assert_eq!(s.imbalanced_attempts, s.lb_attempts);
        assert!(s.imbalanced_failed < s.imbalanced_attempts);
    }
}
