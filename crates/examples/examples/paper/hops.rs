//! Per-process hop counts beside the paper's traces: at Table 2's point (S1, W2, 200
//! processes; the paper's cost model, 2.6 era, origins at the parent), how many times each
//! process was migrated under `linux` and the conservative policies (the paper's placement).
//!
//! The paper prints traces of single processes, such as
//! `Process-255: P10.wait(1384) - P10.run(79) - IO(21) - P10.wait(1680) - P10.run(77) - …`,
//! one process staying on one processor (no hop) while it waits more than it runs; it gives
//! no distribution of hops, so ours is shown beside that one example, not judged.

use std::fmt::Write as _;

use zonal_policy::{LinuxEra, PlacementMode, PolicyConfig};
use zonal_sim::experiment::{self, paper_workload, Job, System, WorkloadId};
use zonal_sim::{CostPreset, OriginAt};

/// Processes at the point.
const PROCS: usize = 200;
/// Hop-count buckets: 0, 1, 2, 3 or more.
const BUCKETS: usize = 4;

/// One policy's hop counts, pooled over seeds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hops {
    pub(crate) policy: String,
    /// Processes with 0, 1, 2, ≥3 migrations.
    pub(crate) counts: [u64; BUCKETS],
    /// Mean migrations per process.
    pub(crate) mean: f64,
    /// Mean share of a process's turnaround spent waiting (not running), percent.
    pub(crate) wait_pct: f64,
}

/// Runs the point for `linux` and the conservative policies (`cfg_of(policy, era)` as the
/// report builds them; the conservative ones set to the paper's placement).
///
/// # Errors
/// A config or run that fails.
pub(crate) fn run(
    seeds: u64,
    threads: usize,
    cfg_of: &dyn Fn(&str, LinuxEra) -> Result<PolicyConfig, String>,
) -> Result<Vec<Hops>, String> {
    let mut out = Vec::new();
    for policy in ["linux", "conservative-hard", "conservative-soft"] {
        let mut cfg = cfg_of(policy, LinuxEra::V2_6)?;
        if policy != "linux" {
            cfg.placement = PlacementMode::Paper;
        }
        let jobs: Vec<Job> = (1..=seeds)
            .map(|seed| Job {
                system: System::S1,
                label: "w2".into(),
                workload: paper_workload(System::S1, WorkloadId::W2, PROCS),
                policy: cfg.clone(),
                seed,
                cost: CostPreset::Paper.model().for_linux_era(true),
                origin_at: OriginAt::Parent,
            })
            .collect();
        let results = experiment::run_all(&jobs, threads, &|| {}).map_err(|e| e.to_string())?;
        let mut counts = [0u64; BUCKETS];
        let (mut hops, mut n, mut wait) = (0u64, 0u64, 0.0);
        for r in &results {
            for p in &r.procs {
                counts[(p.migrations as usize).min(BUCKETS - 1)] += 1;
                hops += u64::from(p.migrations);
                n += 1;
                if let Some(f) = p.finish_us {
                    let tat = f.saturating_sub(p.arrival_us) as f64;
                    if tat > 0.0 {
                        wait += 100.0 * (1.0 - p.run_us as f64 / tat).max(0.0);
                    }
                }
            }
        }
        let n_f = n.max(1) as f64;
        out.push(Hops {
            policy: policy.to_string(),
            counts,
            mean: hops as f64 / n_f,
            wait_pct: wait / n_f,
        });
    }
    Ok(out)
}

/// The section's body (its title is the caller's).
pub(crate) fn markdown(hops: &[Hops], seeds: u64) -> String {
    let mut md = format!(
        "At Table 2's point (S1, W2, {PROCS} processes; 2.6 era, the paper's cost model, \
         origins at the parent; the conservative policies with the paper's placement), \
         processes by the number of times they were migrated, pooled over seeds 1–{seeds}, \
         and the mean share of a process's turnaround spent not running. The paper gives no \
         such distribution, only single traces such as `Process-255: P10.wait(1384) - \
         P10.run(79) - IO(21) - P10.wait(1680) - P10.run(77) - …`: one processor throughout \
         (no hop), waiting far longer than it runs.\n\n\
         | policy | 0 hops | 1 | 2 | 3 or more | mean hops | waiting % of turnaround |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for h in hops {
        let total: u64 = h.counts.iter().sum();
        let pct = |c: u64| 100.0 * c as f64 / total.max(1) as f64;
        let _ = writeln!(
            md,
            "| {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.2} | {:.1}% |",
            h.policy,
            pct(h.counts[0]),
            pct(h.counts[1]),
            pct(h.counts[2]),
            pct(h.counts[3]),
            h.mean,
            h.wait_pct
        );
    }
    md
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn hop_counts_are_bucketed_and_deterministic() {
        let cfg = |p: &str, era| {
            let mut c = PolicyConfig::named(p).map_err(|e| e.to_string())?;
            c.linux_era = era;
            Ok(c)
        };
        let a = run(1, 2, &cfg).unwrap();
        assert_eq!(a, run(1, 2, &cfg).unwrap());
        assert_eq!(a.len(), 3);
        for h in &a {
            assert_eq!(h.counts.iter().sum::<u64>(), PROCS as u64, "{h:?}");
            assert!(
                h.mean >= 0.0 && (0.0..=100.0).contains(&h.wait_pct),
                "{h:?}"
            );
        }
        let md = markdown(&a, 1);
        assert!(md.contains("| linux | "), "{md}");
    }
}
