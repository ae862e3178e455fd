//! Rendering of the `paper` example: the paper's Tables 1–5 in markdown with its figures
//! beside ours, and CSV.
//!
//! Every figure of ours is a mean over seeds with a 95% interval (Student's t). Gains are
//! `(linux − policy) / linux` in percent, computed per seed (every policy sees the same
//! workload for a seed) and then summarised.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use zonal::policy::Refusal;
use zonal_sim::experiment::{Summary, System, WorkloadId};
use zonal_sim::paper;
use zonal_sim::report::Row;
use zonal_sim::RunStats;

/// (system, label, procs, policy) → runs sorted by seed.
type Groups<'a> = BTreeMap<(System, String, usize, String), Vec<&'a Row>>;

fn group(rows: &[Row]) -> Groups<'_> {
    let mut g: Groups<'_> = BTreeMap::new();
    for r in rows {
        g.entry((
            r.job.system,
            r.job.label.clone(),
            r.job.workload.procs,
            r.job.policy.name.to_string(),
        ))
        .or_default()
        .push(r);
    }
    for v in g.values_mut() {
        v.sort_by_key(|r| r.job.seed);
    }
    g
}

fn summary(runs: &[&Row], f: impl Fn(&RunStats) -> f64) -> Summary {
    Summary::of(&runs.iter().map(|r| f(&r.stats)).collect::<Vec<_>>())
}

/// Per-seed gain of `policy` over `base` in average TAT, percent.
fn gain(base: &[&Row], policy: &[&Row]) -> Summary {
    let xs: Vec<f64> = base
        .iter()
        .filter_map(|b| {
            let p = policy.iter().find(|p| p.job.seed == b.job.seed)?;
            Some(100.0 * (b.stats.avg_tat_us - p.stats.avg_tat_us) / b.stats.avg_tat_us)
        })
        .collect();
    Summary::of(&xs)
}

/// A point of Tables 3–5: machine, workload family, processes.
pub(crate) type GridPoint = (System, WorkloadId, usize);

/// Every grid point, in the tables' order.
fn grid_points() -> impl Iterator<Item = GridPoint> {
    [System::S1, System::S2, System::S3]
        .into_iter()
        .flat_map(|system| {
            WorkloadId::ALL.into_iter().flat_map(move |w| {
                crate::experiment::paper_procs(system)
                    .iter()
                    .map(move |&procs| (system, w, procs))
            })
        })
}

/// The paper's gain of Cons. over Linux at each grid point it gives, percent.
#[must_use]
pub(crate) fn paper_gains() -> Vec<(GridPoint, f64)> {
    grid_points()
        .filter_map(|pt @ (system, w, procs)| {
            let (l, c) = paper::tat(system, w, procs)?;
            Some((pt, 100.0 * f64::from(l - c) / f64::from(l)))
        })
        .collect()
}

/// Per grid point with runs of both: the per-seed gain of `policy` over linux, summarised.
#[must_use]
pub(crate) fn point_gains(rows: &[Row], policy: &str) -> Vec<(GridPoint, Summary)> {
    let g = group(rows);
    grid_points()
        .filter_map(|pt @ (system, w, procs)| {
            let key = |p: &str| (system, w.as_str().to_string(), procs, p.to_string());
            let (lin, runs) = (g.get(&key("linux"))?, g.get(&key(policy))?);
            let s = gain(lin, runs);
            (s.n > 0).then_some((pt, s))
        })
        .collect()
}

/// Gains across the grid in one line: mean, extremes, points ahead (mean gain above zero)
/// and points lost (95% interval below zero).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GainLine {
    pub(crate) mean: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) ahead: usize,
    pub(crate) loses: usize,
    pub(crate) points: usize,
}

impl GainLine {
    /// Of per-point mean gains `xs`, `loses` of them lost.
    #[must_use]
    pub(crate) fn of(xs: &[f64], loses: usize) -> Self {
        Self {
            mean: Summary::of(xs).mean,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ahead: xs.iter().filter(|&&x| x > 0.0).count(),
            loses,
            points: xs.len(),
        }
    }

    /// Of [`point_gains`].
    #[must_use]
    pub(crate) fn of_points(gains: &[(GridPoint, Summary)]) -> Self {
        let xs: Vec<f64> = gains.iter().map(|(_, s)| s.mean).collect();
        let loses = gains.iter().filter(|(_, s)| s.mean + s.ci95 < 0.0).count();
        Self::of(&xs, loses)
    }

    /// The table cells `mean | min | max | A of N | L of N`.
    #[must_use]
    pub(crate) fn cells(&self) -> String {
        format!(
            "{:.2} | {:.2} | {:.2} | {} of {} | {} of {}",
            self.mean, self.min, self.max, self.ahead, self.points, self.loses, self.points
        )
    }
}

fn pm(s: Summary, digits: usize) -> String {
    if s.n == 0 {
        "–".into()
    } else {
        format!("{:.*} ± {:.*}", digits, s.mean, digits, s.ci95)
    }
}

const TAT_MS: fn(&RunStats) -> f64 = |s| s.avg_tat_us / 1000.0;

/// The label of Table 1's row `i`.
#[must_use]
pub(crate) fn table1_label(i: usize) -> String {
    format!("t1-{i}")
}

/// Passes (one CPU, one level) that moved nothing: balanced ones and failed ones.
pub(crate) fn passes_unsuccessful(s: &RunStats) -> f64 {
    (s.lb_passes - (s.lb_attempts - s.lb_attempts_unsuccessful)) as f64
}

pub(crate) fn pct_of(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// Table 1: the Linux balancer's unsuccessful attempts, paper beside ours, counted four
/// ways: attempts by Table 1's definition (`RunStats::t1_attempts`, `t1_failed`: periodic
/// calls of busy CPUs; failed = no task moved), the attempts that found a busiest queue
/// (`imbalanced_attempts`), every domain-level pass (one CPU, one level, balanced ones
/// included), and every balance call (one periodic tick that ran a pass, or one new-idle
/// call, however many levels it saw).
#[must_use]
pub(crate) fn table1(rows: &[Row]) -> String {
    let g = group(rows);
    let mut out = String::from(
        "## Table 1 — unsuccessful balancing attempts of the Linux balancer\n\n\
         Ours counted four ways (means over seeds): *attempts* = periodic calls of busy \
         CPUs, *failed* those that moved no task (Table 1's definition, `t1_attempts` / \
         `t1_failed`); *imbalanced* = (CPU, level) attempts that found a busiest queue, \
         unsuccessful = no task moved after it; *per pass* = every (CPU, level) pass, \
         unsuccessful = moved nothing; *per call* = every periodic or new-idle call, \
         unsuccessful = no migration.\n\n\
         | system | workload | paper attempts | paper failed | paper % | attempts | failed | % | imbalanced | unsucc. | % | per pass | unsucc. | % | per call | unsucc. | % |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (i, r) in paper::TABLE1.iter().enumerate() {
        let key = (r.system, table1_label(i), r.procs, "linux".to_string());
        let Some(runs) = g.get(&key) else { continue };
        let mean = |f: &dyn Fn(&RunStats) -> f64| summary(runs, f).mean;
        let (passes, passes_u) = (mean(&|s| s.lb_passes as f64), mean(&passes_unsuccessful));
        let (imb, imb_u) = (
            mean(&|s| s.imbalanced_attempts as f64),
            mean(&|s| s.imbalanced_failed as f64),
        );
        let (calls, calls_u) = (
            mean(&|s| s.lb_calls as f64),
            mean(&|s| s.lb_calls_unsuccessful as f64),
        );
        let _ = writeln!(
            out,
            "| {} | {}; {}; {} ms | {} | {} | {:.2} | {} | {} | {} | {imb:.0} | {imb_u:.0} | {:.1} | {passes:.0} | {passes_u:.0} | {:.1} | {calls:.0} | {calls_u:.0} | {:.1} |",
            r.system.paper_label(),
            if r.io_bound { "IO bound" } else { "CPU bound" },
            r.procs,
            r.exec_ms,
            r.attempts,
            r.failed,
            100.0 * f64::from(r.failed) / f64::from(r.attempts),
            pm(summary(runs, |s| s.t1_attempts as f64), 0),
            pm(summary(runs, |s| s.t1_failed as f64), 0),
            pm(summary(runs, RunStats::t1_failed_pct), 1),
            pct_of(imb_u, imb),
            pct_of(passes_u, passes),
            pct_of(calls_u, calls),
        );
    }
    out
}

/// Table 2: where 200 processes ran (S1, W2), by the level relative to their origin on
/// which each ran most (`zonal_sim::ran_most_level`, the paper's measure), means over
/// seeds, with the two farthest levels (V–VI) summed in the last column.
#[must_use]
pub(crate) fn table2(rows: &[Row], policies: &[String], origin_at: &str) -> String {
    let g = group(rows);
    let mut out = format!(
        "## Table 2 — level (relative to origin) on which 200 processes ran most (S1, W2; origin at {origin_at})\n\n\
         | source | I | II | III | IV | V | VI | V–VI |\n|---|---|---|---|---|---|---|---|\n",
    );
    let cell = |n: f64| format!("{n:.1} ({:.1}%)", n / 2.0);
    let paper_far: u32 = paper::TABLE2.iter().rev().take(2).sum();
    let _ = writeln!(
        out,
        "| paper, Linux | {} | {} |",
        paper::TABLE2
            .iter()
            .map(|n| format!("{n} ({:.1}%)", f64::from(*n) / 2.0))
            .collect::<Vec<_>>()
            .join(" | "),
        format_args!("{paper_far} ({:.1}%)", f64::from(paper_far) / 2.0)
    );
    for p in policies {
        let key = (System::S1, "w2".to_string(), 200, p.clone());
        let Some(runs) = g.get(&key) else { continue };
        let means: Vec<f64> = (0..6)
            .map(|l| {
                summary(runs, |s| {
                    s.exec_by_level.get(l).copied().unwrap_or(0) as f64
                })
                .mean
            })
            .collect();
        let cells: Vec<String> = means.iter().map(|&n| cell(n)).collect();
        let _ = writeln!(
            out,
            "| ours, {p} | {} | {} |",
            cells.join(" | "),
            cell(means[4] + means[5])
        );
    }
    out.push_str(
        "\nShare of run time by level between the CPU and the process's origin (`run_time_by_level`, \
         summed over seeds):\n\n| source | I | II | III | IV | V | VI |\n|---|---|---|---|---|---|---|\n",
    );
    for p in policies {
        let key = (System::S1, "w2".to_string(), 200, p.clone());
        let Some(runs) = g.get(&key) else { continue };
        let mut by_level = [0u64; 6];
        for r in runs {
            for (l, t) in r.stats.run_time_by_level.iter().take(6).enumerate() {
                by_level[l] += t;
            }
        }
        let total: u64 = by_level.iter().sum();
        let cells: Vec<String> = by_level
            .iter()
            .map(|&t| format!("{:.1}%", pct_of(t as f64, total as f64)))
            .collect();
        let _ = writeln!(out, "| ours, {p} | {} |", cells.join(" | "));
    }
    out
}

/// Tables 3–5: average TAT of Linux and the conservative policies, paper beside ours.
#[must_use]
pub(crate) fn tat_tables(rows: &[Row]) -> String {
    let g = group(rows);
    let mut out = String::new();
    for (n, system) in [(3, System::S1), (4, System::S2), (5, System::S3)] {
        let _ = writeln!(
            out,
            "## Table {n} — {} ({}): average turnaround time, ms\n",
            system.as_str().to_uppercase(),
            system.paper_label()
        );
        for w in WorkloadId::ALL {
            let _ = writeln!(
                out,
                "### {} {}\n\n| procs | paper Linux | paper Cons. | paper gain % | ours linux | ours cons-hard | gain % | ours cons-soft | gain % |\n|---|---|---|---|---|---|---|---|---|",
                system.as_str().to_uppercase(),
                w.as_str().to_uppercase()
            );
            for &procs in crate::experiment::paper_procs(system) {
                let get = |p: &str| {
                    g.get(&(system, w.as_str().to_string(), procs, p.to_string()))
                        .map(Vec::as_slice)
                        .unwrap_or(&[])
                };
                let (lin, hard, soft) = (
                    get("linux"),
                    get("conservative-hard"),
                    get("conservative-soft"),
                );
                if lin.is_empty() {
                    continue;
                }
                let (pl, pc) = paper::tat(system, w, procs).unwrap_or((0, 0));
                let _ = writeln!(
                    out,
                    "| {procs} | {pl} | {pc} | {:.2} | {} | {} | {} | {} | {} |",
                    100.0 * f64::from(pl.saturating_sub(pc)) / f64::from(pl.max(1)),
                    pm(summary(lin, TAT_MS), 0),
                    pm(summary(hard, TAT_MS), 0),
                    pm(gain(lin, hard), 2),
                    pm(summary(soft, TAT_MS), 0),
                    pm(gain(lin, soft), 2),
                );
            }
            out.push('\n');
        }
    }
    out
}

/// Every policy on every grid point: TAT, gain over linux, and the mechanisms the paper
/// credits (attempts, migrations, futile migrations, remote execution).
#[must_use]
pub(crate) fn all_policies(rows: &[Row], policies: &[String]) -> String {
    let g = group(rows);
    let mut out = String::from(
        "## All policies\n\nMeans over seeds. *far* = processes that ran most beyond level IV (V–VI) of their origin.\n\n\
         | point | policy | avg TAT ms | gain % vs linux | attempts | unsucc. % | migrations | futile | aged | far |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for system in [System::S1, System::S2, System::S3] {
        for w in WorkloadId::ALL {
            for &procs in crate::experiment::paper_procs(system) {
                let key = |p: &str| (system, w.as_str().to_string(), procs, p.to_string());
                let Some(lin) = g.get(&key("linux")) else {
                    continue;
                };
                for p in policies {
                    let Some(runs) = g.get(&key(p)) else { continue };
                    let mean = |f: fn(&RunStats) -> f64| summary(runs, f).mean;
                    let _ = writeln!(
                        out,
                        "| {} {} {procs} | {p} | {} | {} | {:.0} | {:.1} | {:.0} | {:.0} | {:.0} | {:.1} |",
                        system.as_str().to_uppercase(),
                        w.as_str().to_uppercase(),
                        pm(summary(runs, TAT_MS), 0),
                        pm(gain(lin, runs), 2),
                        mean(|s| s.lb_attempts as f64),
                        mean(RunStats::unsuccessful_pct),
                        mean(|s| s.migrations as f64),
                        mean(|s| s.futile_migrations as f64),
                        mean(|s| s.aged_tasks as f64),
                        mean(|s| s.exec_by_level.iter().skip(4).sum::<u64>() as f64),
                    );
                }
            }
        }
    }
    out
}

/// Mean gain of each policy over linux across the whole grid (Tables 3–5's points).
#[must_use]
pub(crate) fn headline(rows: &[Row], policies: &[String]) -> String {
    let mut out = String::from(
        "## Headline — gain over linux across the grid\n\n| policy | mean gain % | min | max | points ahead | points where it loses |\n|---|---|---|---|---|---|\n",
    );
    let row = |name: &str, g: GainLine| {
        format!(
            "| {name} | {:.2} | {:.2} | {:.2} | {} of {n} | {} of {n} |\n",
            g.mean,
            g.min,
            g.max,
            g.ahead,
            g.loses,
            n = g.points
        )
    };
    let paper: Vec<f64> = paper_gains().into_iter().map(|(_, x)| x).collect();
    out.push_str(&row("paper: Cons. vs Linux", GainLine::of(&paper, 0)));
    for p in policies.iter().filter(|p| *p != "linux") {
        let gains = point_gains(rows, p);
        if !gains.is_empty() {
            out.push_str(&row(&format!("ours: {p}"), GainLine::of_points(&gains)));
        }
    }
    out.push_str(
        "\n\"Ahead\" = the mean per-seed gain is above zero; \"loses\" = the 95% interval of \
         the per-seed gain lies below zero.\n",
    );
    out
}

/// One CSV line per run.
#[must_use]
pub(crate) fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "system,workload,procs,policy,seed,avg_tat_ms,makespan_ms,lb_attempts,lb_attempts_unsuccessful,lb_passes,lb_cost_ms,migrations,futile_migrations,aged_tasks,pages_migrated,events",
    );
    for l in 1..=6 {
        let _ = write!(out, ",migrations_l{l}");
    }
    for l in 1..=6 {
        let _ = write!(out, ",exec_l{l}");
    }
    for r in Refusal::ALL {
        let _ = write!(out, ",refused_{}", r.as_str());
    }
    out.push_str(",cost,numa_balancing,numa_balancing_page_moves,arrival_window_ms");
    out.push('\n');
    for r in rows {
        let s = &r.stats;
        let _ = write!(
            out,
            "{},{},{},{},{},{:.3},{:.3},{},{},{},{:.3},{},{},{},{},{}",
            r.job.system,
            r.job.label,
            r.job.workload.procs,
            r.job.policy.name,
            r.job.seed,
            s.avg_tat_us / 1000.0,
            s.makespan_us as f64 / 1000.0,
            s.lb_attempts,
            s.lb_attempts_unsuccessful,
            s.lb_passes,
            s.lb_cost_us / 1000.0,
            s.migrations,
            s.futile_migrations,
            s.aged_tasks,
            s.pages_migrated,
            s.events
        );
        for l in 0..6 {
            let _ = write!(
                out,
                ",{}",
                s.migrations_by_level.get(l).copied().unwrap_or(0)
            );
        }
        for l in 0..6 {
            let _ = write!(out, ",{}", s.exec_by_level.get(l).copied().unwrap_or(0));
        }
        for reason in Refusal::ALL {
            let _ = write!(out, ",{}", s.refused.get(reason));
        }
        let window = match r.job.workload.arrival {
            zonal_sim::Arrival::Uniform { window_ms } => window_ms.to_string(),
            _ => String::new(),
        };
        let _ = write!(
            out,
            ",{},{},{},{window}",
            r.job.cost.preset(),
            r.job.policy.numa_balancing,
            s.numa_balancing_page_moves
        );
        out.push('\n');
    }
    out
}
