//! The Linux baseline's eras in the simulator: the modern era's results are those recorded
//! before the era existed, the 2.6 era is deterministic and runs far from home, and
//! `run_time_by_level` accounts for every µs of run time.

use zonal_policy::{LinuxEra, PolicyConfig};
use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{CostModel, OriginAt, RunStats};

fn job(policy: &str, era: LinuxEra, procs: usize, seed: u64) -> Job {
    let mut cfg = PolicyConfig::named(policy).unwrap();
    cfg.linux_era = era;
    Job {
        system: System::S1,
        label: "w2".into(),
        workload: paper_workload(System::S1, WorkloadId::W2, procs),
        policy: cfg,
        seed,
        cost: CostModel::default(),
        origin_at: OriginAt::Parent,
    }
}

fn stats(policy: &str, era: LinuxEra, procs: usize, seed: u64) -> RunStats {
    experiment::run(&job(policy, era, procs, seed), false)
        .unwrap()
        .stats
}

/// Recorded with `paper --system s1 --workload w2 --procs P --policy NAME --seed S --json`
/// at commit 900434a, before the era existed.
#[test]
fn the_modern_era_gives_the_results_recorded_before_it() {
    let s = stats("linux", LinuxEra::Modern, 200, 1);
    assert_eq!(s.avg_tat_us, 571_290.655);
    assert_eq!(s.makespan_us, 1_604_055);
    assert_eq!(
        (s.migrations, s.futile_migrations, s.events),
        (174, 44, 13_546)
    );
    assert_eq!(
        (s.lb_attempts, s.lb_attempts_unsuccessful, s.lb_passes),
        (480, 311, 3_384)
    );
    assert_eq!(s.exec_by_level, vec![104, 35, 43, 18, 0, 0]);
    assert_eq!(s.placements_by_level, vec![127, 25, 33, 15, 0, 0]);
    assert_eq!(s.run_us, 45_528_263);

    // Re-recorded at the commit that made the soft zone's 150% rule govern fork placement
    // (no group wholly beyond the parent's zone unless the local group is 150% as loaded).
    let s = stats("conservative-soft", LinuxEra::Modern, 100, 2);
    assert!((s.avg_tat_us - 259_484.68).abs() < 1e-6, "{}", s.avg_tat_us);
    assert_eq!(s.makespan_us, 1_269_494);
    assert_eq!((s.migrations, s.events), (13, 10_533));
    assert_eq!(
        (s.lb_attempts, s.lb_attempts_unsuccessful, s.lb_passes),
        (406, 393, 6_710)
    );
    assert_eq!(s.exec_by_level, vec![30, 8, 36, 26, 0, 0]);
    assert_eq!(s.run_us, 25_670_993);
}

#[test]
fn the_2_6_era_is_deterministic() {
    for policy in ["linux", "conservative-soft"] {
        let a = experiment::run(&job(policy, LinuxEra::V2_6, 150, 3), true).unwrap();
        let b = experiment::run(&job(policy, LinuxEra::V2_6, 150, 3), true).unwrap();
        assert_eq!(a.stats, b.stats);
        assert_eq!(a.trace, b.trace);
        assert_eq!(a.migration_log, b.migration_log);
    }
}

#[test]
fn run_time_by_level_sums_to_the_run_time() {
    for era in [LinuxEra::Modern, LinuxEra::V2_6] {
        for policy in ["linux", "conservative-hard", "numalb"] {
            let s = stats(policy, era, 120, 2);
            assert_eq!(s.run_time_by_level.len(), 6);
            assert_eq!(
                s.run_time_by_level.iter().sum::<u64>(),
                s.run_us,
                "{policy} {era}"
            );
            assert!(s.run_us >= s.work_us);
        }
    }
}

#[test]
fn the_2_6_era_runs_linux_far_from_home() {
    // The paper's Table 2 puts 21% of its processes at levels V–VI; modern Linux ~1%.
    let old: f64 = (1..=3)
        .map(|seed| stats("linux", LinuxEra::V2_6, 200, seed).far_run_share_pct(2))
        .sum::<f64>()
        / 3.0;
    let new: f64 = (1..=3)
        .map(|seed| stats("linux", LinuxEra::Modern, 200, seed).far_run_share_pct(2))
        .sum::<f64>()
        / 3.0;
    assert!(old >= 10.0, "2.6: {old:.1}% at levels V–VI");
    assert!(new < old, "modern {new:.1}% vs 2.6 {old:.1}%");
    // The hard zone never runs a process beyond level IV, whatever the era.
    let hard = stats("conservative-hard", LinuxEra::V2_6, 200, 1);
    assert_eq!(hard.far_run_share_pct(2), 0.0);
}
