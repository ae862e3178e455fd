//! Automatic NUMA balancing for the modern Linux baseline, and the hardware-calibrated cost
//! preset: page moves counted apart, every process finishing once,
//! determinism, and a smaller remote penalty under `hardware` than under `paper`.

use zonal_policy::{LinuxEra, PolicyConfig};
use zonal_sim::experiment::{self, paper_workload, Job, SimError, System, WorkloadId};
use zonal_sim::{CostModel, CostPreset, RunResult};

/// S1 W2 with 200 processes under `linux`, NUMA balancing on or off; `delay` sets
/// `numa_scan_delay_ms`.
fn job(numa: bool, delay: Option<u32>, seed: u64, cost: CostModel) -> Job {
    let mut policy = PolicyConfig::named("linux").unwrap();
    policy.numa_balancing = numa;
    policy.numa_scan_delay_ms = delay;
    Job {
        system: System::S1,
        label: "w2".into(),
        workload: paper_workload(System::S1, WorkloadId::W2, 200),
        policy,
        seed,
        cost,
        origin_at: Default::default(),
    }
}

fn run(job: &Job) -> RunResult {
    experiment::run(job, false).unwrap()
}

/// Every process finished exactly once, having done exactly its demand.
fn each_finished_once(r: &RunResult) {
    assert_eq!(r.stats.finished, r.stats.procs);
    assert_eq!(r.procs.len(), r.stats.procs);
    for (i, p) in r.procs.iter().enumerate() {
        assert!(p.finish_us.is_some(), "process {i} did not finish");
        assert_eq!(p.work_us, p.demand_us, "process {i}");
    }
    assert_eq!(r.stats.work_us, r.stats.demand_us);
}

#[test]
fn with_a_short_scan_delay_linux_moves_pages_and_every_process_finishes_once() {
    let r = run(&job(true, Some(50), 1, CostModel::default()));
    let s = &r.stats;
    assert!(s.numa_scans > 0, "{s:?}");
    assert!(s.numa_balancing_page_moves > 0, "{s:?}");
    assert!(s.numa_balancing_page_moves <= s.numa_scans);
    // linux does not age tasks: every page move is NUMA balancing's.
    assert_eq!(s.pages_migrated, 0);
    assert_eq!(s.page_moves, s.pages_migrated + s.numa_balancing_page_moves);
    assert_eq!(
        s.numa_balancing_page_move_ns,
        s.numa_balancing_page_moves * CostModel::default().page_migration_ns
    );
    assert_eq!(s.page_move_ns, s.numa_balancing_page_move_ns);
    assert!(s.page_move_ns / 1000 <= s.overhead_us);
    each_finished_once(&r);
}

#[test]
fn at_the_kernel_defaults_no_paper_process_runs_long_enough_to_scan() {
    // The first scan needs 1 s of CPU time; S1 W2's processes need 200 ms.
    let r = run(&job(true, None, 1, CostModel::default()));
    assert_eq!(r.stats.numa_scans, 0);
    assert_eq!(r.stats.numa_balancing_page_moves, 0);
    each_finished_once(&r);
}

#[test]
fn with_numa_balancing_off_it_moves_nothing() {
    let r = run(&job(false, None, 1, CostModel::default()));
    assert_eq!(r.stats.numa_scans, 0);
    assert_eq!(r.stats.numa_balancing_page_moves, 0);
    assert_eq!(r.stats.numa_balancing_page_move_ns, 0);
    assert_eq!(r.stats.page_moves, 0);
    each_finished_once(&r);
}

#[test]
fn the_same_seed_gives_byte_identical_json() {
    let j = job(true, Some(50), 7, CostModel::default());
    let a = zonal_sim::report::json(&j, &run(&j).stats).to_string();
    let b = zonal_sim::report::json(&j, &run(&j).stats).to_string();
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["numa_balancing"], true);
    assert!(v["numa_balancing_page_moves"].as_u64().unwrap() > 0);
    assert_eq!(v["cost"], "paper");
    assert_eq!(v["arrival_window_ms"], 1000);
}

#[test]
fn numa_balancing_is_refused_for_the_2_6_era_and_the_conservative_policies() {
    let mut j = job(true, None, 1, CostModel::default());
    j.policy.linux_era = LinuxEra::V2_6;
    match experiment::run(&j, false) {
        Err(SimError::Policy(e)) => assert!(e.to_string().contains("numa_balancing"), "{e}"),
        other => panic!("expected a policy error, got {:?}", other.map(|r| r.stats)),
    }
    let mut j = job(true, None, 1, CostModel::default());
    j.policy = PolicyConfig::named("conservative-soft").unwrap();
    j.policy.numa_balancing = true;
    assert!(matches!(
        experiment::run(&j, false),
        Err(SimError::Policy(_))
    ));
}

#[test]
fn the_hardware_preset_lowers_linux_remote_penalty() {
    // The remote penalty: CPU time beyond the work done at local speed.
    let penalty = |cost: CostModel| {
        (1..=3)
            .map(|seed| {
                let s = run(&job(false, None, seed, cost)).stats;
                s.run_us - s.work_us
            })
            .sum::<u64>()
    };
    let paper = penalty(CostPreset::Paper.model());
    let hardware = penalty(CostPreset::Hardware.model());
    assert!(paper > 0);
    assert!(hardware < paper, "hardware {hardware} ≥ paper {paper}");
    // S1's farthest SLIT ratio is charged as 2× instead of itself.
    let c = CostModel::hardware_calibrated();
    let topo = System::S1.topology().unwrap();
    let far = (0..topo.node_count() as u32)
        .map(|b| topo.numa_factor(zonal_topology::NodeId(0), zonal_topology::NodeId(b)))
        .fold(1.0, f64::max);
    assert!(far > 2.0);
    assert!((c.latency_ratio(far, far) - 2.0).abs() < 1e-12);
    assert_eq!(CostModel::default().latency_ratio(far, far), far);
    let j = job(false, None, 1, c);
    assert_eq!(
        zonal_sim::report::json(&j, &run(&j).stats)["cost"],
        "hardware"
    );
}
