//! Table 1 (the Linux balancer's unsuccessful attempts): our counts beside the paper's, per
//! row and era, as JSON (`reproduction/table1.json`) and as the report's Table 1 section,
//! and the fit of the 2.6 cost model's two fitted constants (`paper --fit-table1`).
//!
//! An *attempt* and a *failure* are `zonal_sim::RunStats::t1_attempts` and `t1_failed`
//! (the definition, with the paper's heading, is in `zonal-sim`'s `stats.rs` and README).
//!
//! # The fit
//!
//! Rows [`FIT_ROWS`] (0, 2, 4, 6, 8 of Table 1) are the fit half, the others the held-out
//! half. [`fit`] runs `linux` under the 2.6 era (and the imbalance rule given,
//! `--imbalance-rule`; the defaults in `cost.rs` come from the threshold rule, the one whose
//! rows can land on target) and the paper's cost model on the fit rows for every point of a fixed grid of the two fitted constants of
//! `zonal_sim::cost::Linux26Cost` (`tick_us` × `load_lag_us`, [`GRID_TICK_US`] ×
//! [`GRID_LOAD_LAG_US`]), and keeps the first point (grid order) with the most fit rows
//! on target (failure rate in the paper's band, attempts within a factor of 2), ties broken
//! by the smallest squared error (log attempts ratio and failure-rate difference). The
//! chosen values are then written by hand as the defaults in `cost.rs`.

use std::fmt::Write as _;
use std::path::Path;

use zonal_policy::{ImbalanceRule, PolicyConfig};
use zonal_sim::cost::Linux26Cost;
use zonal_sim::experiment::{self, Job, Summary, RANDOM_WINDOW_MS};
use zonal_sim::paper::{self, Table1Row};
use zonal_sim::report::Row;
use zonal_sim::{CostModel, OriginAt, RunStats};

use crate::render::{pct_of, table1_label};
use crate::reproduction::baseline_name;
use crate::reproduction::VariantRuns;

/// Table 1's rows the fit sees; the others are held out.
pub(crate) const FIT_ROWS: [usize; 5] = [0, 2, 4, 6, 8];

/// The grid of `Linux26Cost::tick_us`, µs: `HZ` = 250 and 1000.
pub(crate) const GRID_TICK_US: [u64; 2] = [4_000, 1_000];

/// The grid of `Linux26Cost::load_lag_us`, µs: live loads up to 64 ms, twice the time
/// constant of the slowest decayed load 2.6's node domain reads (`cpu_load[3]`, 8 ticks =
/// 32 ms at `HZ` = 250; a sample held for `L` is on average `L/2` old).
pub(crate) const GRID_LOAD_LAG_US: [u64; 6] = [0, 4_000, 8_000, 16_000, 32_000, 64_000];

/// The paper's failure-rate band over Table 1's rows, percent.
pub(crate) fn paper_band() -> (f64, f64) {
    let pcts = paper::TABLE1.iter().map(paper_pct);
    let lo = pcts.clone().fold(f64::INFINITY, f64::min);
    let hi = pcts.fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

fn paper_pct(r: &Table1Row) -> f64 {
    100.0 * f64::from(r.failed) / f64::from(r.attempts)
}

/// Which half of the fit row `i` is in.
pub(crate) fn fit_half(i: usize) -> &'static str {
    if FIT_ROWS.contains(&i) {
        "fit"
    } else {
        "held-out"
    }
}

/// Table 1's row `i` for `policy` (its era decides which) under `cost`, one job per seed.
pub(crate) fn row_jobs(i: usize, policy: &PolicyConfig, cost: CostModel, seeds: u64) -> Vec<Job> {
    let r = &paper::TABLE1[i];
    (1..=seeds)
        .map(|seed| Job {
            system: r.system,
            label: table1_label(i),
            workload: r.workload(RANDOM_WINDOW_MS),
            policy: policy.clone(),
            seed,
            cost,
            origin_at: OriginAt::Parent,
        })
        .collect()
}

/// One row of `table1.json`: a paper row under one era, ours as means over seeds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct Table1Entry {
    pub(crate) row: usize,
    pub(crate) system: &'static str,
    pub(crate) procs: usize,
    pub(crate) exec_ms: u64,
    pub(crate) io_bound: bool,
    pub(crate) era: String,
    /// The 2.6 era's imbalance rule (`kernel` under the modern era).
    pub(crate) imbalance_rule: ImbalanceRule,
    pub(crate) attempts: f64,
    pub(crate) failed: f64,
    pub(crate) paper_attempts: u32,
    pub(crate) paper_failed: u32,
    /// The earlier reading (`RunStats::imbalanced_attempts` / `imbalanced_failed`), for
    /// comparison.
    pub(crate) imbalanced_attempts: f64,
    pub(crate) imbalanced_failed: f64,
    /// Section II's reading, the primary one (`RunStats::sec2_attempts` / `sec2_failed`):
    /// every balancing call of one CPU in one domain, failed when no busier group or
    /// processor was found.
    pub(crate) sec2_attempts: f64,
    pub(crate) sec2_failed: f64,
    /// Balance calls (`RunStats::lb_calls`), those that moved nothing
    /// (`lb_calls_unsuccessful`) and those in which no level found a busier group
    /// (`lb_calls_balanced`).
    pub(crate) calls: f64,
    pub(crate) calls_no_move: f64,
    pub(crate) calls_balanced: f64,
    /// Our mean makespan, ms: the length of the run the paper's attempts are read against.
    pub(crate) makespan_ms: f64,
    pub(crate) cpus: usize,
    pub(crate) fit_half: &'static str,
    pub(crate) seeds: usize,
}

impl Table1Entry {
    fn of(i: usize, era: &str, rule: ImbalanceRule, stats: &[&RunStats]) -> Self {
        let r = &paper::TABLE1[i];
        let mean = |f: fn(&RunStats) -> u64| {
            Summary::of(&stats.iter().map(|s| f(s) as f64).collect::<Vec<_>>()).mean
        };
        Self {
            row: i,
            system: r.system.paper_label(),
            procs: r.procs,
            exec_ms: r.exec_ms,
            io_bound: r.io_bound,
            era: era.to_string(),
            imbalance_rule: rule,
            attempts: mean(|s| s.t1_attempts),
            failed: mean(|s| s.t1_failed),
            paper_attempts: r.attempts,
            paper_failed: r.failed,
            imbalanced_attempts: mean(|s| s.imbalanced_attempts),
            imbalanced_failed: mean(|s| s.imbalanced_failed),
            sec2_attempts: mean(RunStats::sec2_attempts),
            sec2_failed: mean(RunStats::sec2_failed),
            calls: mean(|s| s.lb_calls),
            calls_no_move: mean(|s| s.lb_calls_unsuccessful),
            calls_balanced: mean(|s| s.lb_calls_balanced),
            makespan_ms: mean(|s| s.makespan_us) / 1000.0,
            cpus: r.system.topology().map_or(0, |t| t.cpu_count()),
            fit_half: fit_half(i),
            seeds: stats.len(),
        }
    }

    /// Our failure rate, percent (0 without attempts).
    pub(crate) fn pct(&self) -> f64 {
        pct_of(self.failed, self.attempts)
    }

    /// The paper's attempts per CPU and second of our run (0 without a run).
    pub(crate) fn paper_rate(&self) -> f64 {
        let cpu_s = self.cpus as f64 * self.makespan_ms / 1000.0;
        if cpu_s > 0.0 {
            f64::from(self.paper_attempts) / cpu_s
        } else {
            0.0
        }
    }

    /// The failure rate of the earlier reading, percent (0 without attempts).
    pub(crate) fn imbalanced_pct(&self) -> f64 {
        pct_of(self.imbalanced_failed, self.imbalanced_attempts)
    }

    /// Attempts and failures under `reading`.
    pub(crate) fn counts(&self, reading: Reading) -> (f64, f64) {
        match reading {
            Reading::SectionII => (self.sec2_attempts, self.sec2_failed),
            Reading::CallBalanced => (self.calls, self.calls_balanced),
            Reading::CallNoMove => (self.calls, self.calls_no_move),
            Reading::BusyTick => (self.attempts, self.failed),
            Reading::Imbalanced => (self.imbalanced_attempts, self.imbalanced_failed),
        }
    }

    /// The failure rate under `reading`, percent (0 without attempts).
    pub(crate) fn pct_by(&self, reading: Reading) -> f64 {
        let (a, f) = self.counts(reading);
        pct_of(f, a)
    }

    /// The paper's failure rate of this row, percent.
    pub(crate) fn paper_pct(&self) -> f64 {
        paper_pct(&paper::TABLE1[self.row])
    }

    /// The baseline's name ([`baseline_name`]).
    pub(crate) fn baseline(&self) -> String {
        baseline_name(&self.era, self.imbalance_rule)
    }

    /// Whether our failure rate is inside the paper's band.
    pub(crate) fn in_band(&self) -> bool {
        let (lo, hi) = paper_band();
        (lo..=hi).contains(&self.pct())
    }

    /// Whether our attempts are within a factor of 2 of the paper's.
    pub(crate) fn within_2x(&self) -> bool {
        let p = f64::from(self.paper_attempts);
        self.attempts >= p / 2.0 && self.attempts <= 2.0 * p
    }

    fn on_target(&self) -> bool {
        self.in_band() && self.within_2x()
    }

    /// The fit's squared error: log attempts ratio and failure-rate difference (fraction).
    fn error(&self) -> f64 {
        let ratio = (self.attempts.max(0.5) / f64::from(self.paper_attempts)).ln();
        let dp = (self.pct() - paper_pct(&paper::TABLE1[self.row])) / 100.0;
        ratio * ratio + dp * dp
    }
}

/// What counts as a Table 1 attempt and as its failure (`zonal-sim`'s `stats.rs` docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    /// The paper's Section II, the primary reading: each balancing call of one CPU in one
    /// domain, periodic or new-idle; failed when no busier group or processor was found.
    SectionII,
    /// Per call (one periodic tick or new-idle call, however many domains it examined);
    /// failed when no domain found a busier group.
    CallBalanced,
    /// Per call; failed when it performed no migration.
    CallNoMove,
    /// Periodic calls of busy CPUs; failed when they moved no task (the reading chosen with
    /// every row in view).
    BusyTick,
    /// (CPU, domain) attempts that found a busiest queue; failed when no task moved.
    Imbalanced,
}

impl Reading {
    /// Every reading, the primary first.
    pub(crate) const ALL: [Reading; 5] = [
        Reading::SectionII,
        Reading::CallBalanced,
        Reading::CallNoMove,
        Reading::BusyTick,
        Reading::Imbalanced,
    ];

    /// The report's short name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Reading::SectionII => "Section II (primary)",
            Reading::CallBalanced => "per call, none busier",
            Reading::CallNoMove => "per call, no migration",
            Reading::BusyTick => "busy tick",
            Reading::Imbalanced => "imbalanced",
        }
    }

    /// The report's description.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Reading::SectionII => {
                "Section II (primary): each balancing call of a CPU in a domain, periodic and \
                 idle; failed = no busier group/processor found"
            }
            Reading::CallBalanced => {
                "per call across domains; failed = no domain found a busier group"
            }
            Reading::CallNoMove => "per call across domains; failed = no migration",
            Reading::BusyTick => {
                "busy tick: periodic calls of busy CPUs; failed = no task moved (chosen with \
                 every row in view)"
            }
            Reading::Imbalanced => {
                "imbalanced: (CPU, domain) attempts that found a busiest queue; failed = no \
                 task moved"
            }
        }
    }
}

/// The entries of `rows` (runs of `linux`, Table 1's labels), one per paper row present.
pub(crate) fn entries(rows: &[Row], era: &str, rule: ImbalanceRule) -> Vec<Table1Entry> {
    (0..paper::TABLE1.len())
        .filter_map(|i| {
            let label = table1_label(i);
            let stats: Vec<&RunStats> = rows
                .iter()
                .filter(|r| r.job.label == label && r.job.policy.name.as_str() == "linux")
                .map(|r| &r.stats)
                .collect();
            (!stats.is_empty()).then(|| Table1Entry::of(i, era, rule, &stats))
        })
        .collect()
}

/// `table1.json`'s entries from the reproduction's runs: the paper's cost model, both eras,
/// and both imbalance rules under 2.6.
pub(crate) fn reproduction_entries(runs: &[VariantRuns]) -> Vec<Table1Entry> {
    runs.iter()
        .filter(|v| v.variant.cost_name == "paper")
        .flat_map(|v| entries(&v.parent, v.variant.era, v.variant.rule))
        .collect()
}

/// `table1.json`: an array of [`Table1Entry`], pretty-printed, with a final newline.
pub(crate) fn json(entries: &[Table1Entry]) -> String {
    let mut s = serde_json::to_string_pretty(entries).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

/// Writes `dir/reproduction/table1.json`.
///
/// # Errors
/// A message naming the file that could not be written.
pub(crate) fn write_json(dir: &Path, entries: &[Table1Entry]) -> Result<(), String> {
    let d = dir.join("reproduction");
    std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    let path = d.join("table1.json");
    std::fs::write(&path, json(entries))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The report's Table 1 section (markdown): the definition, per era every row beside the
/// paper's, the fit half and the held-out half apart, and a generated summary.
pub(crate) fn section(entries: &[Table1Entry]) -> String {
    let (lo, hi) = paper_band();
    let rates: Vec<f64> = entries.iter().map(Table1Entry::paper_rate).collect();
    let rate_lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let rate_hi = rates.iter().copied().fold(0.0, f64::max);
    let mut md = format!(
        "## Table 1 by the busy-tick reading (sensitivity) and the 2.6 fit\n\n\
         Not the verdict's reading (that is Section II's, above): this section keeps the \
         reading the 2.6 cost model was fitted under, chosen with every row in view. It \
         counts as one *attempt* a call of the periodic balancer on a busy CPU (a tick at which one of its domains was due, \
         on a CPU running a task; 2.6's `rebalance_tick` calling `load_balance` for a busy \
         CPU), whether or not it found an imbalance, and as *failed* one that moved no task \
         (`zonal-sim`'s `stats.rs` gives the definition and why). The paper's attempts, per \
         CPU and second of our `linux` runs of the same rows, are {rate_lo:.1}–{rate_hi:.1} \
         (*paper /CPU·s* below), near one per 256 ms, 2.6's balancing interval for a busy \
         CPU at the node domain (8 ms × `busy_factor` 32): they follow the machine and the \
         length of the run, not the load. The earlier reading (attempts of one CPU at one \
         level that found a busiest group and queue, periodic or new-idle; failed if no task \
         moved after it) is in the *imbalanced* columns. The paper's Linux failed \
         {lo:.1}–{hi:.1}% of its attempts.\n\n\
         Under 2.6 two baselines are counted: the kernel's `find_busiest_group` arithmetic \
         (`imbalance_rule = \"kernel\"`, the report's 2.6 baseline elsewhere) and the paper's \
         own description of its Linux's periodic balancing as a threshold test \
         (`\"threshold\"`: past the 25% threshold, move toward the domain average, at least \
         one task; `zonal-policy`'s `linux/era.rs`). The 2.6 cost model's two constants \
         (`Linux26Cost::tick_us`, `load_lag_us`) are fitted on rows {:?} under the threshold \
         rule (`paper -- --fit-table1 --imbalance-rule threshold`); the other rows are held \
         out, and the kernel rule's rows use the same constants. Nothing is fitted under the \
         modern era: its rows are split the same way only to be read alike. Ours: means \
         over seeds; *band* = failure rate within {lo:.1}–{hi:.1}%; *×2* = attempts within a \
         factor of 2 of the paper's.\n\n",
        FIT_ROWS
    );
    let mut baselines: Vec<String> = entries.iter().map(Table1Entry::baseline).collect();
    baselines.dedup();
    for baseline in baselines {
        let _ = writeln!(md, "### Linux era {baseline}\n");
        for half in ["fit", "held-out"] {
            let rows: Vec<&Table1Entry> = entries
                .iter()
                .filter(|e| e.baseline() == baseline && e.fit_half == half)
                .collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(
                md,
                "{} rows:\n\n| row | system | workload | paper attempts | paper failed | paper % | paper /CPU·s | ours attempts | ours failed | ours % | band | ×2 | imbalanced attempts | imbalanced % |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
                if half == "fit" { "Fit" } else { "Held-out" }
            );
            for e in &rows {
                let _ = writeln!(
                    md,
                    "| {} | {} | {}; {}; {} ms | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {:.1} | {:.1} |",
                    e.row,
                    e.system,
                    if e.io_bound { "IO bound" } else { "CPU bound" },
                    e.procs,
                    e.exec_ms,
                    e.paper_attempts,
                    e.paper_failed,
                    paper_pct(&paper::TABLE1[e.row]),
                    e.paper_rate(),
                    e.attempts,
                    e.failed,
                    e.pct(),
                    yes(e.in_band()),
                    yes(e.within_2x()),
                    e.imbalanced_attempts,
                    e.imbalanced_pct(),
                );
            }
            let band = rows.iter().filter(|e| e.in_band()).count();
            let both = rows.iter().filter(|e| e.on_target()).count();
            let _ = writeln!(
                md,
                "\n{baseline}, {half} rows: failure rate in the band on {band} of {}, in the band \
                 with attempts within ×2 on {both} of {}.\n",
                rows.len(),
                rows.len()
            );
        }
        let all: Vec<&Table1Entry> = entries
            .iter()
            .filter(|e| e.baseline() == baseline)
            .collect();
        md.push_str(&trend_line(&baseline, &all));
        md.push_str(&target_line(&baseline, &all));
    }
    md
}

/// How the failure rate moves with load on 16-2-6 (rows 0 and 4: 50 and 400 processes of
/// 500 ms), ours beside the paper's; empty without both rows.
fn trend_line(baseline: &str, all: &[&Table1Entry]) -> String {
    let row = |i: usize| all.iter().find(|e| e.row == i);
    let (Some(lo), Some(hi)) = (row(0), row(4)) else {
        return String::new();
    };
    let (p_lo, p_hi) = (paper_pct(&paper::TABLE1[0]), paper_pct(&paper::TABLE1[4]));
    format!(
        "From 50 to 400 processes on 16-2-6 (rows 0 and 4) the paper's failure rate goes from \
         {p_lo:.1}% to {p_hi:.1}% ({:+.1} points); under {baseline} ours goes from {:.1}% to \
         {:.1}% ({:+.1} points).\n\n",
        p_hi - p_lo,
        lo.pct(),
        hi.pct(),
        hi.pct() - lo.pct()
    )
}

/// The target's verdict for one baseline's rows: the failure rate in the band with attempts
/// within ×2 on at least two thirds of the rows, and of the held-out rows.
fn target_line(baseline: &str, all: &[&Table1Entry]) -> String {
    let both = all.iter().filter(|e| e.on_target()).count();
    let held: Vec<&&Table1Entry> = all.iter().filter(|e| e.fit_half == "held-out").collect();
    let held_both = held.iter().filter(|e| e.on_target()).count();
    let target = 3 * both >= 2 * all.len() && 3 * held_both >= 2 * held.len();
    format!(
        "The earlier target (failure rate in the band with attempts within ×2 on at least \
         two thirds of the rows, held-out rows included; too loose to mean anything — a \
         constant 80% is in the band on every row — and superseded by the verdict's per-row \
         tolerance): {} under era {baseline} ({both} of {} rows, {held_both} of {} held \
         out).\n\n",
        if target { "met" } else { "not met" },
        all.len(),
        held.len()
    )
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// One grid point's result on the fit rows.
#[derive(Clone, Debug)]
pub(crate) struct FitPoint {
    pub(crate) cost: Linux26Cost,
    pub(crate) on_target: usize,
    pub(crate) error: f64,
    pub(crate) entries: Vec<Table1Entry>,
}

/// Runs the fit (module docs): `linux` under `policy` (the 2.6 era) and the paper's cost
/// model with each grid point's constants, on the fit rows, `seeds` seeds, `threads`
/// threads. Returns every point, grid order, and the index of the chosen one.
///
/// # Errors
/// A run that failed to build.
pub(crate) fn fit(
    policy: &PolicyConfig,
    seeds: u64,
    threads: usize,
) -> Result<(Vec<FitPoint>, usize), String> {
    let mut points = Vec::new();
    for &tick_us in &GRID_TICK_US {
        for &load_lag_us in &GRID_LOAD_LAG_US {
            let lb = Linux26Cost {
                tick_us,
                load_lag_us,
                ..Linux26Cost::default()
            };
            let cost = CostModel {
                linux_2_6: Some(lb),
                ..CostModel::default()
            };
            let jobs: Vec<Job> = FIT_ROWS
                .iter()
                .flat_map(|&i| row_jobs(i, policy, cost, seeds))
                .collect();
            let results = experiment::run_all(&jobs, threads, &|| {}).map_err(|e| e.to_string())?;
            let rows = Row::of_runs(jobs, results);
            let entries = entries(&rows, "2.6", policy.imbalance_rule);
            points.push(FitPoint {
                cost: lb,
                on_target: entries.iter().filter(|e| e.on_target()).count(),
                error: entries.iter().map(Table1Entry::error).sum(),
                entries,
            });
        }
    }
    let mut best = 0;
    for (k, p) in points.iter().enumerate() {
        let b = &points[best];
        if p.on_target > b.on_target || (p.on_target == b.on_target && p.error < b.error) {
            best = k;
        }
    }
    Ok((points, best))
}

/// The fit's report (markdown): every grid point, then the chosen one's rows.
pub(crate) fn fit_report(points: &[FitPoint], best: usize, seeds: u64) -> String {
    let mut md = format!(
        "# Table 1 fit: 2.6 cost model, rows {FIT_ROWS:?}, {seeds} seeds\n\n\
         | tick µs | load lag µs | rows on target | error |\n|---|---|---|---|\n"
    );
    for p in points {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.4} |",
            p.cost.tick_us, p.cost.load_lag_us, p.on_target, p.error
        );
    }
    if let Some(p) = points.get(best) {
        let _ = writeln!(
            md,
            "\nChosen: tick_us = {}, load_lag_us = {} ({} of {} fit rows on target).\n",
            p.cost.tick_us,
            p.cost.load_lag_us,
            p.on_target,
            FIT_ROWS.len()
        );
        md.push_str(&section(&p.entries));
    }
    md
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn halves_partition_the_rows() {
        let fit = (0..paper::TABLE1.len())
            .filter(|&i| fit_half(i) == "fit")
            .count();
        assert_eq!(fit, FIT_ROWS.len());
        assert_eq!(fit_half(1), "held-out");
    }

    fn entry(row: usize, attempts: f64, failed: f64) -> Table1Entry {
        let r = &paper::TABLE1[row];
        Table1Entry {
            row,
            system: r.system.paper_label(),
            procs: r.procs,
            exec_ms: r.exec_ms,
            io_bound: r.io_bound,
            era: "2.6".into(),
            imbalance_rule: ImbalanceRule::Threshold,
            attempts,
            failed,
            paper_attempts: r.attempts,
            paper_failed: r.failed,
            imbalanced_attempts: 0.0,
            imbalanced_failed: 0.0,
            sec2_attempts: attempts,
            sec2_failed: failed,
            calls: 0.0,
            calls_no_move: 0.0,
            calls_balanced: 0.0,
            makespan_ms: 2_000.0,
            cpus: 32,
            fit_half: fit_half(row),
            seeds: 1,
        }
    }

    #[test]
    fn the_target_and_trend_lines_follow_the_numbers() {
        // Rows 0–9 with the paper's own counts are on target; divide every failure count by
        // three and every failure rate leaves the band (its floor is row 9's 35.9%).
        let paper_like: Vec<Table1Entry> = (0..10)
            .map(|i| {
                let r = &paper::TABLE1[i];
                entry(i, f64::from(r.attempts), f64::from(r.failed))
            })
            .collect();
        let refs: Vec<&Table1Entry> = paper_like.iter().collect();
        let line = target_line("2.6 (threshold rule)", &refs);
        assert!(
            line.contains(": met under era 2.6 (threshold rule) (10 of 10 rows, 5 of 5 held out)"),
            "{line}"
        );
        assert!(trend_line("x", &refs).contains("ours goes from 86.5% to 52.5% (-34.0 points)"));
        let off: Vec<Table1Entry> = paper_like
            .iter()
            .map(|e| entry(e.row, e.attempts, e.failed / 3.0))
            .collect();
        let refs: Vec<&Table1Entry> = off.iter().collect();
        let line = target_line("2.6", &refs);
        assert!(
            line.contains("not met under era 2.6 (0 of 10 rows, 0 of 5 held out)"),
            "{line}"
        );
        let flat = [entry(0, 100.0, 50.0), entry(4, 100.0, 90.0)];
        let refs: Vec<&Table1Entry> = flat.iter().collect();
        assert!(trend_line("x", &refs).contains("ours goes from 50.0% to 90.0% (+40.0 points)"));
        assert_eq!(trend_line("x", &refs[..1]), "");
        // The paper's rate per CPU-second reads the run's length and the machine.
        assert!((entry(0, 1.0, 0.0).paper_rate() - 244.0 / 64.0).abs() < 1e-9);
    }

    #[test]
    fn json_is_deterministic_for_a_small_run() {
        let mut policy = PolicyConfig::named("linux").expect("linux is a policy");
        policy.linux_era = zonal_policy::LinuxEra::V2_6;
        let cost = CostModel::default().for_linux_era(true);
        let once = || {
            let jobs = row_jobs(7, &policy, cost, 2);
            let results = experiment::run_all(&jobs, 2, &|| {}).expect("runs");
            let rows = Row::of_runs(jobs, results);
            json(&entries(&rows, "2.6", ImbalanceRule::Kernel))
        };
        let a = once();
        assert_eq!(a, once());
        assert!(a.contains("\"fit_half\": \"held-out\""));
        assert!(a.contains("\"paper_attempts\": 148"));
    }
}
