//! The report's opening: every claim of the paper judged *reproduced*, *partly* or *not
//! reproduced* against the tolerances of `zonal_sim::verdict` (fixed there, with their list,
//! before any of these numbers was computed), per variant; then Table 1 judged row by row
//! under the paper's Section II reading, beside trivial baselines, and the readings and
//! rules tried as sensitivity.
//!
//! Every verdict is computed here from the runs; nothing in this file names an outcome.

use std::fmt::Write as _;

use zonal_policy::PlacementMode;
use zonal_sim::report::Row;
use zonal_sim::verdict::{self, Verdict};
use zonal_sim::{paper, RunStats};

use crate::render::{point_gains, GainLine};
use crate::reproduction::VariantRuns;
use crate::table1::{self, Reading, Table1Entry};

/// Table 1's trend rows: (machine, fewest-processes row, most-processes row), the rows of
/// one machine with the same execution time and type.
pub(crate) const TRENDS: [(&str, usize, usize); 2] = [("16-2-6", 0, 4), ("8-2-3", 7, 8)];

/// The constant failure rate of the first trivial baseline, percent: a guess inside the
/// paper's band that needs no simulator.
pub(crate) const CONSTANT_GUESS_PCT: f64 = 80.0;

/// The policies whose gain is judged (the paper's one conservative balancer, read two ways).
pub(crate) const POLICIES: [&str; 2] = ["conservative-hard", "conservative-soft"];

/// One cell of the verdict table: the verdict (`None`: not measured in this variant) and
/// the numbers it was judged on.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cell {
    pub(crate) verdict: Option<Verdict>,
    pub(crate) detail: String,
}

impl Cell {
    fn judged(verdict: Verdict, detail: String) -> Self {
        Self {
            verdict: Some(verdict),
            detail,
        }
    }

    fn not_measured() -> Self {
        Self {
            verdict: None,
            detail: String::new(),
        }
    }

    fn render(&self) -> String {
        match self.verdict {
            Some(v) => format!("**{v}** ({})", self.detail),
            None => "not measured".to_string(),
        }
    }
}

/// The rows of `rows` with the conservative policies in the paper's placement mode and
/// `linux`: the headline's runs.
pub(crate) fn paper_mode_rows(v: &VariantRuns) -> Vec<Row> {
    if v.main_mode == PlacementMode::Paper {
        v.parent.clone()
    } else {
        v.parent
            .iter()
            .filter(|r| r.job.policy.name.as_str() == "linux")
            .chain(&v.other_mode)
            .cloned()
            .collect()
    }
}

/// Table 1's entries of a variant (its `linux` runs of Table 1's rows).
pub(crate) fn entries(v: &VariantRuns) -> Vec<Table1Entry> {
    table1::entries(&v.parent, v.variant.era, v.variant.rule)
}

/// Share (percent) of processes that ran most at the two farthest levels, pooled over the
/// runs of `policy` at S1/W2/200 in `rows`; `None` without such runs.
fn far_share(rows: &[Row], policy: &str) -> Option<f64> {
    let mut counts = [0u64; 6];
    let mut any = false;
    for r in rows.iter().filter(|r| {
        r.job.policy.name.as_str() == policy
            && r.job.label == "w2"
            && r.job.workload.procs == 200
            && r.job.system == zonal_sim::experiment::System::S1
    }) {
        any = true;
        for (c, n) in counts.iter_mut().zip(&r.stats.exec_by_level) {
            *c += n;
        }
    }
    let total: u64 = counts.iter().sum();
    (any && total > 0).then(|| 100.0 * (counts[4] + counts[5]) as f64 / total as f64)
}

/// A claim and its cell per variant.
#[derive(Clone, Debug)]
pub(crate) struct Claim {
    pub(crate) name: String,
    pub(crate) cells: Vec<Cell>,
}

/// Every claim judged for every variant (columns in `runs`' order).
pub(crate) fn claims(runs: &[VariantRuns]) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    let mut push = |name: String, cell: Cell, col: usize| {
        if let Some(c) = out.iter_mut().find(|c| c.name == name) {
            c.cells.push(cell);
        } else {
            debug_assert_eq!(col, 0);
            out.push(Claim {
                name,
                cells: vec![cell],
            });
        }
    };
    for (col, v) in runs.iter().enumerate() {
        let es = entries(v);
        for (i, r) in paper::TABLE1.iter().enumerate() {
            let name = format!(
                "Table 1 row {i} ({}; {}; {}; {} ms)",
                r.system.paper_label(),
                if r.io_bound { "IO" } else { "CPU" },
                r.procs,
                r.exec_ms
            );
            let cell = es
                .iter()
                .find(|e| e.row == i)
                .map_or_else(Cell::not_measured, |e| {
                    let (a, _) = e.counts(Reading::SectionII);
                    let pct = e.pct_by(Reading::SectionII);
                    Cell::judged(
                        verdict::table1_row(pct, a, e.paper_pct(), f64::from(e.paper_attempts)),
                        format!(
                            "{pct:.1}% of {a:.0}; paper {:.1}% of {}",
                            e.paper_pct(),
                            e.paper_attempts
                        ),
                    )
                });
            push(name, cell, col);
        }
        for (machine, lo, hi) in TRENDS {
            let name = format!("Table 1 trend on {machine} (rows {lo} → {hi})");
            let row = |i: usize| es.iter().find(|e| e.row == i);
            let cell = match (row(lo), row(hi)) {
                (Some(a), Some(b)) => {
                    let ours = b.pct_by(Reading::SectionII) - a.pct_by(Reading::SectionII);
                    let paper = b.paper_pct() - a.paper_pct();
                    Cell::judged(
                        verdict::trend(ours, paper),
                        format!("{ours:+.1} points; paper {paper:+.1}"),
                    )
                }
                _ => Cell::not_measured(),
            };
            push(name, cell, col);
        }
        let cell = far_share(&v.placement, "linux").map_or_else(Cell::not_measured, |far| {
            Cell::judged(
                verdict::table2(far),
                format!("{far:.1}% at V–VI; paper {:.1}%", verdict::T2_PAPER_FAR_PCT),
            )
        });
        push(
            "Table 2 on `s1`, origin = first CPU queued on (the paper's trace measure)".into(),
            cell,
            col,
        );
        let rows = paper_mode_rows(v);
        for p in POLICIES {
            let gains = point_gains(&rows, p);
            let g = GainLine::of_points(&gains);
            let cell = if gains.is_empty() {
                Cell::not_measured()
            } else {
                Cell::judged(
                    verdict::gain(g.mean, g.ahead, g.points),
                    format!("mean {:.2}%, ahead on {} of {}", g.mean, g.ahead, g.points),
                )
            };
            push(format!("The 45 gains, `{p}`, paper placement"), cell, col);
        }
        for p in POLICIES {
            let cell = v.calibration.as_ref().map_or_else(Cell::not_measured, |c| {
                let (verdict, all, held) = c.verdict(p);
                Cell::judged(
                    verdict,
                    format!(
                        "mean {:.2}%, ahead on {} of {}; held out: mean {:.2}%, ahead on {} of {}",
                        all.mean, all.ahead, all.points, held.mean, held.ahead, held.points
                    ),
                )
            });
            push(
                format!("The 45 gains, `{p}`, paper placement, calibrated baseline"),
                cell,
                col,
            );
        }
        for p in POLICIES {
            let xs: Vec<f64> = point_gains(&rows, p).iter().map(|(_, s)| s.mean).collect();
            let cell = verdict::median(&xs).map_or_else(Cell::not_measured, |m| {
                Cell::judged(verdict::range(m), format!("median {m:.2}%"))
            });
            push(
                format!("The 7–12% range, `{p}`, paper placement"),
                cell,
                col,
            );
        }
        for p in POLICIES {
            let free = GainLine::of_points(&point_gains(&v.free_balancing, p));
            let modelled = GainLine::of_points(&point_gains(&rows, p));
            let cell = if free.points == 0 || modelled.points == 0 {
                Cell::not_measured()
            } else {
                let (g1, g0) = (modelled.mean, free.mean);
                let share = verdict::overhead_share(g1, g0).map_or_else(
                    || "no gain to explain".into(),
                    |s| format!("{:.1}%", 100.0 * s),
                );
                Cell::judged(
                    verdict::overhead(g1, g0),
                    format!("gain {g1:.2}% → {g0:.2}% with free balancing; share {share}"),
                )
            };
            push(
                format!("\"The gain comes from reduced balancing overhead\", `{p}`"),
                cell,
                col,
            );
        }
    }
    out
}

/// The verdict section: the tolerances, then the table (claims × variants) and a count per
/// variant.
pub(crate) fn section(runs: &[VariantRuns]) -> String {
    let claims = claims(runs);
    let mut md = String::from(
        "## Verdict\n\n\
         Each claim of the paper against a tolerance fixed before any number below was \
         computed (`zonal_sim::verdict`, where each is a constant with this list as its \
         comment):\n\n",
    );
    let _ = write!(
        md,
        "- a Table 1 row: failure rate within ±{} points of the paper's and attempts within \
         ×{};\n\
         - Table 1's trend: on 16-2-6 and on 8-2-3, the change in failure rate from the \
         fewest to the most processes has the paper's sign and is within ±{:.0}% of its size;\n\
         - Table 2: the share running most at levels V–VI within ±{} points of {}% on `s1` \
         (the preset, not a variant);\n\
         - the gain: mean within ±{} points of {}% and ahead on at least {} of 45 points is \
         reproduced; ahead on at least {} of 45 with a mean above {}% is partly;\n\
         - \"partly\" elsewhere: within {} times the tolerance (±20 points; attempts within \
         ×1.5² = ×2.25, twice the tolerance on the log scale; ±100% of the paper's change, \
         same sign; ±10 points for Table 2).\n\n\
         Two claims the list does not cover, with tolerances of ours written in the same \
         module before their numbers were computed: the 7–12% range — the median of the 45 \
         per-point gains within {}–{}% ± {} point (partly ± 2); \"the gain comes from \
         reduced balancing overhead\" — with the balancing-attempt cost set to zero, the gain \
         (positive as modelled) loses at least {:.0}% of itself (partly {:.0}%), measured \
         over the 45 grid points with the paper's placement.\n\n",
        verdict::T1_RATE_POINTS,
        verdict::T1_ATTEMPTS_FACTOR,
        100.0 * verdict::TREND_SIZE_FRACTION,
        verdict::T2_FAR_POINTS,
        verdict::T2_PAPER_FAR_PCT,
        verdict::GAIN_MEAN_POINTS,
        verdict::GAIN_PAPER_MEAN_PCT,
        verdict::GAIN_AHEAD_REPRODUCED,
        verdict::GAIN_AHEAD_PARTLY,
        verdict::GAIN_MEAN_PARTLY_PCT,
        verdict::PARTLY_FACTOR,
        verdict::RANGE_LO_PCT,
        verdict::RANGE_HI_PCT,
        verdict::RANGE_SLACK_POINTS,
        100.0 * verdict::OVERHEAD_SHARE,
        100.0 * verdict::OVERHEAD_SHARE / verdict::PARTLY_FACTOR,
    );
    md.push_str(
        "What is judged: Table 1 by the paper's Section II reading of an attempt (each \
         balancing call of a CPU in a scheduling domain, periodic and idle alike; failed when \
         no busier group or processor is found — the Table 1 section below, with the other \
         readings as sensitivity); Table 2 by the paper's trace measure (origin = the first \
         CPU a process was queued on) on the `s1` preset; the gains with the conservative \
         policies' fork placement and idle balancing left to Linux (the paper's \"usual \
         manner\"), origins at the parent, against the same variant's `linux`. Zone-restricted \
         placement, `s1-alt` and origin at the parent for Table 2 are extensions, reported \
         in their own sections and never in this table. A variant is a baseline (Linux era, \
         and the 2.6 imbalance rule) × the cost model; none of them is preferred here.\n\n",
    );
    let _ = write!(
        md,
        "| claim |{}\n|---|{}\n",
        runs.iter()
            .map(|v| format!(" {} |", v.variant.slug()))
            .collect::<String>(),
        "---|".repeat(runs.len())
    );
    for c in &claims {
        let _ = writeln!(
            md,
            "| {} | {} |",
            c.name,
            c.cells
                .iter()
                .map(Cell::render)
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    let count = |col: usize, v: Option<Verdict>| {
        claims
            .iter()
            .filter(|c| c.cells.get(col).map(|x| x.verdict) == Some(v))
            .count()
    };
    let _ = writeln!(
        md,
        "| **count** | {} |",
        (0..runs.len())
            .map(|col| format!(
                "{} reproduced, {} partly, {} not, {} not measured",
                count(col, Some(Verdict::Reproduced)),
                count(col, Some(Verdict::Partly)),
                count(col, Some(Verdict::NotReproduced)),
                count(col, None)
            ))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    md.push('\n');
    md
}

/// One predictor of Table 1's failure rates: a name and a rate per row (row order), with
/// attempts where it has them.
struct Predictor {
    name: String,
    pcts: Vec<f64>,
    attempts: Option<Vec<f64>>,
}

impl Predictor {
    fn of(name: String, es: &[&Table1Entry], reading: Reading) -> Self {
        Self {
            name,
            pcts: es.iter().map(|e| e.pct_by(reading)).collect(),
            attempts: Some(es.iter().map(|e| e.counts(reading).0).collect()),
        }
    }
}

fn paper_pcts() -> Vec<f64> {
    paper::TABLE1
        .iter()
        .map(|r| 100.0 * f64::from(r.failed) / f64::from(r.attempts))
        .collect()
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "—".into(), |x| format!("{x:.digits$}"))
}

/// A predictor's line of the comparison: MAE, rank correlation, rows within the rate's
/// tolerance and twice it, and rows reproduced (rate and attempts).
fn predictor_cells(p: &Predictor) -> String {
    let paper = paper_pcts();
    let within = |k: f64| {
        p.pcts
            .iter()
            .zip(&paper)
            .filter(|(o, q)| (*o - *q).abs() <= k * verdict::T1_RATE_POINTS + 1e-9)
            .count()
    };
    let reproduced = p.attempts.as_ref().map(|a| {
        p.pcts
            .iter()
            .zip(a)
            .zip(paper::TABLE1.iter().zip(&paper))
            .filter(|((pct, att), (r, q))| {
                verdict::table1_row(**pct, **att, **q, f64::from(r.attempts)) == Verdict::Reproduced
            })
            .count()
    });
    let n = paper.len();
    format!(
        "{} | {} | {} of {n} | {} of {n} | {}",
        opt(verdict::mean_abs_error(&p.pcts, &paper), 1),
        opt(verdict::rank_correlation(&p.pcts, &paper), 2),
        within(1.0),
        within(verdict::PARTLY_FACTOR),
        reproduced.map_or_else(|| "— (no attempts)".into(), |k| format!("{k} of {n}")),
    )
}

/// Table 1 judged per row: the Section II reading for every paper-cost baseline, the errors
/// per row, and the summary beside the trivial baselines; then every reading as
/// sensitivity, and the log of what was tried.
pub(crate) fn table1_section(runs: &[VariantRuns]) -> String {
    let paper = paper_pcts();
    let baselines: Vec<(String, Vec<Table1Entry>)> = runs
        .iter()
        .filter(|v| v.variant.cost_name == "paper")
        .map(|v| (v.variant.baseline(), entries(v)))
        .filter(|(_, es)| es.len() == paper.len())
        .collect();
    let mut md = String::from(
        "## Table 1 judged per row\n\n\
         Primary reading (the paper's Section II): an attempt is one balancing call of one CPU \
         in one scheduling domain, periodic or new-idle, busy or idle CPU; it fails when no \
         busier group or processor is found (`RunStats::sec2_attempts` / `sec2_failed`; \
         `zonal-sim`'s `stats.rs`). The paper's cost model; means over seeds. *Δ* = ours − \
         paper, points; *×* = our attempts / the paper's.\n\n",
    );
    let _ = write!(
        md,
        "| row | system | workload | paper % | paper attempts |{}\n|---|---|---|---|---|{}\n",
        baselines
            .iter()
            .map(|(b, _)| format!(" {b} % | Δ | attempts | × | verdict |"))
            .collect::<String>(),
        "---|---|---|---|---|".repeat(baselines.len())
    );
    for (i, r) in paper::TABLE1.iter().enumerate() {
        let _ = write!(
            md,
            "| {i} | {} | {}; {}; {} ms | {:.1} | {} |",
            r.system.paper_label(),
            if r.io_bound { "IO bound" } else { "CPU bound" },
            r.procs,
            r.exec_ms,
            paper[i],
            r.attempts
        );
        for (_, es) in &baselines {
            let e = &es[i];
            let (a, _) = e.counts(Reading::SectionII);
            let pct = e.pct_by(Reading::SectionII);
            let _ = write!(
                md,
                " {pct:.1} | {:+.1} | {a:.0} | {:.2} | {} |",
                pct - paper[i],
                a / f64::from(r.attempts),
                verdict::table1_row(pct, a, paper[i], f64::from(r.attempts))
            );
        }
        md.push('\n');
    }
    let paper_mean = paper.iter().sum::<f64>() / paper.len() as f64;
    let _ = write!(
        md,
        "\nAgainst trivial baselines: a constant {CONSTANT_GUESS_PCT:.0}% on every row; a \
         constant equal to the paper's own mean ({paper_mean:.1}%, fitted on all ten rows, so \
         the best a constant can do); and, for each of ours, the other baselines beside it \
         (the 2.6 kernel rule is the issue's own trivial baseline for the threshold rule). \
         *MAE* = mean absolute error of the failure rate, points; *ρ* = Spearman's rank \
         correlation with the paper's rows (undefined for a constant); *±10* / *±20* = rows \
         whose rate is within the tolerance / twice it; *reproduced* = rows within both the \
         rate's and the attempts' tolerance.\n\n\
         | predictor (Section II reading) | MAE | ρ | ±10 | ±20 | reproduced |\n\
         |---|---|---|---|---|---|\n"
    );
    let mut preds = vec![
        Predictor {
            name: format!("constant {CONSTANT_GUESS_PCT:.0}%"),
            pcts: vec![CONSTANT_GUESS_PCT; paper.len()],
            attempts: None,
        },
        Predictor {
            name: format!("constant {paper_mean:.1}% (the paper's mean)"),
            pcts: vec![paper_mean; paper.len()],
            attempts: None,
        },
    ];
    for (b, es) in &baselines {
        let refs: Vec<&Table1Entry> = es.iter().collect();
        preds.push(Predictor::of(
            format!("ours, {b}"),
            &refs,
            Reading::SectionII,
        ));
    }
    for p in &preds {
        let _ = writeln!(md, "| {} | {} |", p.name, predictor_cells(p));
    }
    md.push_str(
        "\n### Every reading, as sensitivity\n\n\
         The same runs counted by each reading of an attempt (`zonal-sim`'s `stats.rs` \
         defines each). Only the first is judged in the verdict; the busy-tick reading was \
         adopted, with the threshold rule and the 2.6 cost model's refit, after every row \
         had been seen. *Trend* = change in failure rate from the fewest to the most \
         processes, points (paper: 16-2-6 −34.0, 8-2-3 −6.1).\n\n",
    );
    for reading in Reading::ALL {
        let _ = writeln!(md, "- *{}*: {}.", reading.name(), reading.describe());
    }
    md.push_str(
        "\n| reading | baseline | attempts (min–max over rows) | MAE | ρ | ±10 | ±20 | reproduced | trend 16-2-6 | trend 8-2-3 |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for reading in Reading::ALL {
        for (b, es) in &baselines {
            let refs: Vec<&Table1Entry> = es.iter().collect();
            let p = Predictor::of(String::new(), &refs, reading);
            let att = p.attempts.clone().unwrap_or_default();
            let lo = att.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = att.iter().copied().fold(0.0, f64::max);
            let trend = |(_, a, b): (&str, usize, usize)| p.pcts[b] - p.pcts[a];
            let _ = writeln!(
                md,
                "| {} | {b} | {lo:.0}–{hi:.0} | {} | {:+.1} | {:+.1} |",
                reading.name(),
                predictor_cells(&p),
                trend(TRENDS[0]),
                trend(TRENDS[1]),
            );
        }
    }
    md.push_str(LOG);
    md
}

/// The log of readings and rules tried: the ones above with their numbers, and those of the
/// earlier exploration, which this report does not regenerate.
const LOG: &str = "
### What was tried

With numbers above, regenerated by this report: the five readings of an attempt (the table
just above), each under three baselines — modern Linux, the 2.6 kernel's
`find_busiest_group` arithmetic (`imbalance_rule = \"kernel\"`) and the paper's description
of its Linux as a threshold test (`\"threshold\"`) — and the 2.6 cost model's two constants
(`Linux26Cost::tick_us`, `load_lag_us`), fitted on rows 0, 2, 4, 6, 8 under the busy-tick
reading and the threshold rule (`paper -- --fit-table1 --imbalance-rule threshold`; the grid
and every point's score are printed by that command). The fit/held-out split protects only
those two constants: the reading and the rule were chosen after every row had been seen.

From the earlier exploration, tried and not kept, without numbers (not regenerated here):
dropping 2.6's group-capacity check; dropping the single-task skip; spreading execution
times; arrival windows of 0.1–10 s (the arrival-window sweeps below give the gains for
250 ms–4 s, not Table 1); imbalance thresholds of 5, 12 and 18%; fork placement capped at
levels I–IV.

";

/// `linux`'s balancing attempts and migrations per run, and the conservative policies' as a
/// share of them, over the grid in the paper's placement mode: `(policy, attempts,
/// migrations, attempts %, migrations %)` with `linux` first.
pub(crate) fn activity(rows: &[Row]) -> Vec<(String, f64, f64, f64, f64)> {
    let sum = |p: &str, f: fn(&RunStats) -> u64| -> (f64, usize) {
        let xs: Vec<u64> = rows
            .iter()
            .filter(|r| r.job.policy.name.as_str() == p && !r.job.label.starts_with("t1-"))
            .map(|r| f(&r.stats))
            .collect();
        (xs.iter().sum::<u64>() as f64, xs.len())
    };
    let (la, n) = sum("linux", RunStats::sec2_attempts);
    let (lm, _) = sum("linux", |s| s.migrations);
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    for p in std::iter::once("linux").chain(POLICIES) {
        let (a, k) = sum(p, RunStats::sec2_attempts);
        let (m, _) = sum(p, |s| s.migrations);
        if k == 0 {
            continue;
        }
        out.push((
            p.to_string(),
            a / k as f64,
            m / k as f64,
            100.0 * a / la.max(1.0),
            100.0 * m / lm.max(1.0),
        ));
    }
    out
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_constant_has_an_error_but_no_rank_order() {
        let p = Predictor {
            name: "c".into(),
            pcts: vec![CONSTANT_GUESS_PCT; 10],
            attempts: None,
        };
        let cells = predictor_cells(&p);
        // |80 − paper| over the ten rows: 20.4 points; the paper's rows within ±10 of 80%:
        // 86.5, 76.2, 71.4 (three); within ±20 also 67.4 and 60.2 (five).
        assert_eq!(cells, "20.4 | — | 3 of 10 | 5 of 10 | — (no attempts)");
    }

    #[test]
    fn the_papers_own_counts_reproduce_every_row() {
        let paper = paper_pcts();
        let p = Predictor {
            name: "paper".into(),
            pcts: paper.clone(),
            attempts: Some(
                paper::TABLE1
                    .iter()
                    .map(|r| f64::from(r.attempts))
                    .collect(),
            ),
        };
        assert_eq!(
            predictor_cells(&p),
            "0.0 | 1.00 | 10 of 10 | 10 of 10 | 10 of 10"
        );
    }

    #[test]
    fn a_cell_names_its_verdict_and_its_numbers() {
        let c = Cell::judged(Verdict::Partly, "x".into());
        assert_eq!(c.render(), "**partly** (x)");
        assert_eq!(Cell::not_measured().render(), "not measured");
    }
}
