//! The paper's measures as it defines them: page moves apart from
//! migrations, and balance attempts counted per call as well as per domain level.

use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{CostModel, RunStats};

fn job(policy: &str, seed: u64) -> Job {
    let policy = zonal_policy::PolicyConfig::named(policy).unwrap();
    Job {
        system: System::S2,
        label: "w3".into(),
        workload: paper_workload(System::S2, WorkloadId::W3, 100),
        policy,
        seed,
        cost: CostModel::default(),
        origin_at: Default::default(),
    }
}

fn stats(policy: &str, seed: u64) -> RunStats {
    experiment::run(&job(policy, seed), false).unwrap().stats
}

#[test]
fn aged_processes_move_their_pages_and_linux_never_does() {
    let job = job("conservative-soft", 5);
    assert!(experiment::effective_age_limit(&job.policy).is_some());
    let s = experiment::run(&job, false).unwrap().stats;
    assert!(s.page_moves > 0, "{s:?}");
    assert!(s.page_move_ns > 0);
    assert_eq!(s.page_moves, s.pages_migrated);
    assert_eq!(
        s.page_move_ns,
        s.page_moves * CostModel::default().page_migration_ns
    );
    assert!(s.page_moves <= s.aged_tasks);
    assert!(s.page_move_ns / 1000 <= s.overhead_us);
    let v = zonal_sim::report::json(&job, &s);
    assert_eq!(v["page_moves"], s.page_moves);
    assert!(v["page_move_time_ms"].as_f64().unwrap() > 0.0);

    let linux = stats("linux", 5);
    assert_eq!(linux.page_moves, 0);
    assert_eq!(linux.page_move_ns, 0);
    assert!(linux.migrations > 0);
}

#[test]
fn page_moves_are_deterministic() {
    let (a, b) = (stats("conservative-soft", 9), stats("conservative-soft", 9));
    assert_eq!(
        (a.page_moves, a.page_move_ns),
        (b.page_moves, b.page_move_ns)
    );
    assert_eq!(
        (a.lb_calls, a.lb_calls_unsuccessful),
        (b.lb_calls, b.lb_calls_unsuccessful)
    );
}

#[test]
fn balance_calls_relate_to_passes_and_migrations() {
    for name in ["linux", "conservative-soft"] {
        let job = job(name, 3);
        let s = experiment::run(&job, false).unwrap().stats;
        assert!(s.lb_calls > 0, "{name}");
        assert!(s.lb_calls <= s.lb_passes, "{name}: {s:?}");
        assert!(s.lb_calls_unsuccessful <= s.lb_calls, "{name}");
        assert!(
            s.lb_calls - s.lb_calls_unsuccessful <= s.migrations,
            "{name}"
        );
        // Section II's failures: calls, and (CPU, level) passes, that found no busier group.
        assert!(s.lb_calls_balanced <= s.lb_calls, "{name}");
        assert!(s.sec2_failed() <= s.sec2_attempts(), "{name}");
        assert_eq!(s.sec2_attempts(), s.lb_passes, "{name}");
        assert_eq!(
            s.sec2_failed() + s.imbalanced_attempts,
            s.lb_passes,
            "{name}"
        );
        // A call with every level balanced moved nothing.
        assert!(
            s.lb_calls_balanced <= s.lb_calls_unsuccessful,
            "{name}: {s:?}"
        );
        let v = zonal_sim::report::json(&job, &s);
        assert_eq!(v["lb_calls_balanced"], s.lb_calls_balanced);
        assert_eq!(v["lb_calls"], s.lb_calls);
        assert_eq!(v["lb_calls_unsuccessful"], s.lb_calls_unsuccessful);
    }
}
