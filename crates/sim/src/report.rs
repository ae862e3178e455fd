//! Report data: one finished run ([`Row`]) and the JSON object of one run (the interface of
//! `paper --json`). Rendering — the paper's Tables 1–5 in markdown, CSV, plots —
//! lives in the `paper` example (`crates/examples/examples/paper/`).

use zonal_policy::{PlacementMode, Refusal};

use crate::experiment::Job;
use crate::stats::{RunResult, RunStats};

/// One finished run.
#[derive(Clone, Debug)]
pub struct Row {
    /// What ran.
    pub job: Job,
    /// What it recorded.
    pub stats: RunStats,
}

impl Row {
    /// Each job beside what its run recorded, in order (`results` as
    /// [`run_all`](crate::experiment::run_all) returns them for `jobs`).
    #[must_use]
    pub fn of_runs(jobs: Vec<Job>, results: Vec<RunResult>) -> Vec<Row> {
        jobs.into_iter()
            .zip(results)
            .map(|(job, r)| Row {
                job,
                stats: r.stats,
            })
            .collect()
    }
}

/// The JSON object of one run (the `paper --json` interface). Times are in ms;
/// `run_time_by_level` is [`RunStats::run_time_by_level`] in ms (index 0 = level I, summing
/// to `run_ms`), and `linux_era` the era of the Linux walk the policy ran on.
/// `page_move_time_ms` is [`RunStats::page_move_ns`] in ms; `lb_calls`,
/// `lb_calls_unsuccessful` and `lb_calls_balanced` count balance calls (see [`RunStats::lb_calls`]);
/// `wake_migrations` the wake-ups on another node (part of `migrations`). `cost` is the
/// cost model's preset (`paper` or `hardware`, [`crate::cost::CostPreset`]),
/// `numa_balancing` whether Linux's automatic NUMA balancing was on, with its moves in
/// `numa_balancing_page_moves` (part of `page_moves`) and `numa_balancing_page_move_time_ms`
/// (part of `page_move_time_ms`), and `arrival_window_ms` the arrival window (`null` when
/// every process arrives at once). `placement` (`"paper"`, [`PlacementMode`]) appears only
/// when the policy ran in a placement mode other than the default `"zone"`.
#[must_use]
pub fn json(job: &Job, s: &RunStats) -> serde_json::Value {
    let refused: serde_json::Map<String, serde_json::Value> = Refusal::ALL
        .iter()
        .map(|r| (r.as_str().to_string(), s.refused.get(*r).into()))
        .collect();
    let mut v = serde_json::json!({
        "system": job.system.as_str(),
        "workload": job.label,
        "procs": job.workload.procs,
        "policy": job.policy.name.as_str(),
        "linux_era": job.policy.linux_era.as_str(),
        "numa_balancing": job.policy.numa_balancing,
        "cost": job.cost.preset().as_str(),
        "arrival_window_ms": match job.workload.arrival {
            crate::Arrival::Uniform { window_ms } => Some(window_ms),
            _ => None,
        },
        "origin": job.policy.origin,
        "age_limit": crate::experiment::effective_age_limit(&job.policy),
        "seed": job.seed,
        "finished": s.finished,
        "avg_tat_ms": s.avg_tat_us / 1000.0,
        "makespan_ms": s.makespan_us as f64 / 1000.0,
        "lb_attempts": s.lb_attempts,
        "lb_attempts_unsuccessful": s.lb_attempts_unsuccessful,
        "lb_unsuccessful_pct": s.unsuccessful_pct(),
        "lb_passes": s.lb_passes,
        "lb_passes_newidle": s.lb_passes_newidle,
        "lb_calls": s.lb_calls,
        "lb_calls_unsuccessful": s.lb_calls_unsuccessful,
        "lb_calls_balanced": s.lb_calls_balanced,
        "lb_cost_ms": s.lb_cost_us / 1000.0,
        "migrations": s.migrations,
        "migrations_by_level": s.migrations_by_level,
        "wake_migrations": s.wake_migrations,
        "futile_migrations": s.futile_migrations,
        "stale_migrations": s.stale_migrations,
        "exec_by_level": s.exec_by_level,
        "placements_by_level": s.placements_by_level,
        "run_time_by_level": s
            .run_time_by_level
            .iter()
            .map(|&us| us as f64 / 1000.0)
            .collect::<Vec<_>>(),
        "refused": refused,
        "aged_tasks": s.aged_tasks,
        "pages_migrated": s.pages_migrated,
        "page_moves": s.page_moves,
        "page_move_time_ms": s.page_move_ns as f64 / 1e6,
        "numa_balancing_page_moves": s.numa_balancing_page_moves,
        "numa_balancing_page_move_time_ms": s.numa_balancing_page_move_ns as f64 / 1e6,
        "numa_scans": s.numa_scans,
        "demand_ms": s.demand_us as f64 / 1000.0,
        "run_ms": s.run_us as f64 / 1000.0,
        "overhead_ms": s.overhead_us as f64 / 1000.0,
        "events": s.events,
    });
    if job.policy.placement != PlacementMode::Zone {
        // Only when not the default, so runs in the default mode print what they did.
        v["placement"] = job.policy.placement.as_str().into();
    }
    v
}
