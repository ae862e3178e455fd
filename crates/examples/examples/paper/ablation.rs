//! Where the gain comes from: the ablation (each mechanism of the conservative policies
//! switched on alone on top of the same era's `linux`, `zonal_policy::Mechanism`), both
//! placement modes of the conservative policies, and the report's closing explanation,
//! whose sentences are generated from those numbers.
//!
//! Gains are per seed against the `linux` run of the same point and seed, averaged per grid
//! point and then summarised over the points ([`GainLine`]), as the report's summary does.
//! Migrations are the total over every point and seed, as a percentage of `linux`'s total
//! over the same runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use zonal_policy::{Mechanism, PlacementMode};
use zonal_sim::experiment::{Summary, System, WorkloadId};
use zonal_sim::report::Row;

use crate::render::{GainLine, GridPoint};

/// (system, workload label, processes, seed).
type RunKey = (System, String, usize, u64);

fn key(r: &Row) -> RunKey {
    (
        r.job.system,
        r.job.label.clone(),
        r.job.workload.procs,
        r.job.seed,
    )
}

/// What one configuration did against `linux` over the grid.
#[derive(Clone, Debug)]
pub(crate) struct Effect {
    /// The configuration, as the report names it.
    pub(crate) name: String,
    /// Gain over linux, per point (summary over points).
    pub(crate) gain: GainLine,
    /// Its migrations as a percentage of linux's over the same runs.
    pub(crate) migrations_pct: f64,
}

/// The per-point gains of `rows` over the `linux` rows of `linux` (same point and seed),
/// and the migrations of both over the runs they share. Rows without a `linux` partner are
/// left out; points are in `GridPoint` order.
pub(crate) fn effect(name: &str, linux: &[Row], rows: &[Row]) -> Effect {
    let base: BTreeMap<RunKey, &Row> = linux
        .iter()
        .filter(|r| r.job.policy.name.as_str() == "linux" && r.job.policy.mechanisms().count() == 0)
        .map(|r| (key(r), r))
        .collect();
    let mut per_point: BTreeMap<GridPoint, Vec<f64>> = BTreeMap::new();
    let (mut mig, mut mig_linux) = (0u64, 0u64);
    for r in rows {
        let Some(b) = base.get(&key(r)) else { continue };
        let Ok(w) = r.job.label.parse::<WorkloadId>() else {
            continue;
        };
        let l = b.stats.avg_tat_us;
        if l > 0.0 {
            per_point
                .entry((r.job.system, w, r.job.workload.procs))
                .or_default()
                .push(100.0 * (l - r.stats.avg_tat_us) / l);
        }
        mig += r.stats.migrations;
        mig_linux += b.stats.migrations;
    }
    let points: Vec<(GridPoint, Summary)> = per_point
        .into_iter()
        .map(|(pt, xs)| (pt, Summary::of(&xs)))
        .collect();
    Effect {
        name: name.to_string(),
        gain: GainLine::of_points(&points),
        migrations_pct: if mig_linux == 0 {
            0.0
        } else {
            100.0 * mig as f64 / mig_linux as f64
        },
    }
}

/// The rows of `rows` that ran `linux` with exactly mechanism `m` on.
fn with_mechanism(rows: &[Row], m: Mechanism) -> Vec<Row> {
    rows.iter()
        .filter(|r| r.job.policy.mechanisms().eq([m]))
        .cloned()
        .collect()
}

/// The rows of `rows` that ran `policy` in placement mode `mode`.
pub(crate) fn of_policy(rows: &[Row], policy: &str, mode: PlacementMode) -> Vec<Row> {
    rows.iter()
        .filter(|r| r.job.policy.name.as_str() == policy && r.job.policy.placement == mode)
        .cloned()
        .collect()
}

/// One era's numbers: the conservative policies in both placement modes and each mechanism
/// alone.
#[derive(Clone, Debug)]
pub(crate) struct EraEffects {
    /// `modern` or `2.6`.
    pub(crate) era: String,
    /// conservative-hard and conservative-soft, zone mode then paper mode.
    pub(crate) policies: Vec<Effect>,
    /// Each mechanism alone, in `Mechanism::ALL`'s order.
    pub(crate) mechanisms: Vec<(Mechanism, Effect)>,
}

/// The policies' effects in both modes: `grid` holds the variant's runs in one mode (and
/// its `linux`), `other_mode` the conservative policies' runs in the other.
pub(crate) fn policy_effects(grid: &[Row], other_mode: &[Row]) -> Vec<Effect> {
    let mut out = Vec::new();
    for mode in PlacementMode::ALL {
        for p in ["conservative-hard", "conservative-soft"] {
            let mut rows = of_policy(grid, p, mode);
            rows.extend(of_policy(other_mode, p, mode));
            if !rows.is_empty() {
                out.push(effect(&format!("{p} ({mode})"), grid, &rows));
            }
        }
    }
    out
}

/// Each mechanism's effect: `ablation` holds `linux` with one switch on, `grid` the
/// baseline `linux` runs.
pub(crate) fn mechanism_effects(grid: &[Row], ablation: &[Row]) -> Vec<(Mechanism, Effect)> {
    Mechanism::ALL
        .into_iter()
        .filter_map(|m| {
            let rows = with_mechanism(ablation, m);
            (!rows.is_empty()).then(|| (m, effect(m.describe(), grid, &rows)))
        })
        .collect()
}

/// The section: per era, one table (each mechanism alone, then the policies in both
/// modes). The sentences that read it open the report's closing section ([`explanation`]).
pub(crate) fn section(eras: &[EraEffects], seeds: u64, grid_seeds: u64) -> String {
    let mut md = format!(
        "## Where the gain comes from: each mechanism alone\n\n\
         `linux` of the same era with one mechanism of the conservative policies switched on \
         (`zonal_policy::Mechanism`: the config switches `zone_periodic`, `origin_check`, \
         `ageing`, `placement_rule`, `newidle_zone`, `fork_zone`, `wake_zone`; each \
         restricts only what it names, wake-ups stay `linux`'s but under `wake_zone`), over the paper's grid, the paper's cost model, origins at \
         the parent. Gain over `linux` per grid point: mean, min and max over \
         the points, points ahead; migrations: the total over every run as a percentage of \
         `linux`'s over the same runs ({seeds} seeds, against the grid's `linux` runs of the \
         same seeds{}). The \
         conservative policies in both placement modes below them, from the summary's runs \
         (every seed). The closing section's first paragraph reads these tables.\n\n",
        if seeds < grid_seeds {
            format!("; fewer than the grid's {grid_seeds}, to keep the report's run time down")
        } else {
            String::new()
        }
    );
    for e in eras {
        let _ = write!(
            md,
            "### Linux era {}\n\n| configuration | mean gain % | min | max | ahead | migrations vs linux |\n|---|---|---|---|---|---|\n",
            e.era
        );
        let rows = e
            .mechanisms
            .iter()
            .map(|(m, x)| (format!("`{}` alone: {}", m.as_str(), m.describe()), x))
            .chain(e.policies.iter().map(|x| (x.name.clone(), x)));
        for (name, x) in rows {
            let _ = writeln!(
                md,
                "| {name} | {:.2} | {:.2} | {:.2} | {} of {} | {:.1}% |",
                x.gain.mean, x.gain.min, x.gain.max, x.gain.ahead, x.gain.points, x.migrations_pct
            );
        }
        md.push('\n');
    }
    md
}

/// The closing explanation, generated from the ablation: for each era, which mechanism
/// alone gives the most, against what the policies gain in either mode; what the placement
/// mode changes; and how far the best of ours is from the paper's mean gain. Every
/// sentence is chosen by the sign and order of the numbers, so it holds whatever they are.
pub(crate) fn explanation(eras: &[EraEffects], paper_mean: f64) -> String {
    let mut md = String::from(
        "**Where the gain comes from** (generated from the ablation and the placement modes \
         above; the paper's cost model):\n\n",
    );
    for e in eras {
        let _ = writeln!(md, "- {}", era_sentences(e, paper_mean));
    }
    md.push('\n');
    md
}

/// The sentences of one era (one bullet).
fn era_sentences(e: &EraEffects, paper_mean: f64) -> String {
    let era = &e.era;
    let mut s = String::new();
    // The headline is the paper's placement: the best configuration in that mode (any mode
    // when it did not run); the zone's placement is an extension, compared below.
    let paper_mode = format!("({})", PlacementMode::Paper);
    let in_paper_mode = e.policies.iter().any(|p| p.name.ends_with(&paper_mode));
    let best_policy = e
        .policies
        .iter()
        .filter(|p| !in_paper_mode || p.name.ends_with(&paper_mode))
        .max_by(|a, b| a.gain.mean.total_cmp(&b.gain.mean));
    // The best configuration's own mechanisms (all of them when it is none of ours).
    let own: Vec<&(Mechanism, Effect)> = {
        let parts = best_policy.map_or(&[][..], |p| parts_of(&p.name));
        let mine: Vec<_> = e
            .mechanisms
            .iter()
            .filter(|(m, _)| parts.contains(m))
            .collect();
        if mine.is_empty() {
            e.mechanisms.iter().collect()
        } else {
            mine
        }
    };
    let best_alone = own
        .iter()
        .copied()
        .max_by(|a, b| a.1.gain.mean.total_cmp(&b.1.gain.mean));
    match (best_policy, best_alone) {
        (Some(p), Some((m, x))) => {
            if p.gain.mean > 0.0 {
                let _ = write!(
                    s,
                    "Under {era}, the best conservative configuration with the paper's \
                     placement, {}, gains {:.2}% on mean over `linux`. ",
                    p.name, p.gain.mean
                );
                if x.gain.mean > 0.0 {
                    let share = 100.0 * x.gain.mean / p.gain.mean;
                    let _ = write!(
                        s,
                        "The largest share comes from {}: alone it gives {:.2}% of those \
                         {:.2}% ({share:.0}%{}). ",
                        m.describe(),
                        x.gain.mean,
                        p.gain.mean,
                        if share > 100.0 {
                            "; the configuration as a whole gains less than this mechanism alone"
                        } else {
                            ""
                        }
                    );
                } else {
                    let _ = write!(
                        s,
                        "No mechanism alone gains anything (the best, {}, gives {:.2}%): the \
                         gain exists only in combination. ",
                        m.describe(),
                        x.gain.mean
                    );
                }
            } else {
                let _ = write!(
                    s,
                    "Under {era}, no conservative configuration with the paper's placement \
                     gains on mean over `linux` (the best, {}, {:.2}%), so there is no gain \
                     to attribute; ",
                    p.name, p.gain.mean
                );
                if x.gain.mean > 0.0 {
                    let _ = write!(
                        s,
                        "yet {} alone gains {:.2}%: the other mechanisms cost more than it \
                         saves. ",
                        m.describe(),
                        x.gain.mean
                    );
                } else {
                    let _ = write!(
                        s,
                        "no mechanism alone gains either (the best, {}, {:.2}%). ",
                        m.describe(),
                        x.gain.mean
                    );
                }
            }
            let sum: f64 = own.iter().map(|(_, x)| x.gain.mean).sum();
            let names: Vec<&str> = own.iter().map(|(m, _)| m.as_str()).collect();
            let _ = write!(
                s,
                "Its mechanisms alone ({}) add up to {sum:.2}%, {} its {:.2}%{}. ",
                names.join(", "),
                relation(sum, p.gain.mean),
                p.gain.mean,
                if p.name.starts_with("conservative-soft") {
                    " (the soft zone's own rule on periodic balancing is not switched on alone)"
                } else {
                    ""
                }
            );
        }
        (Some(p), None) => {
            let _ = write!(
                s,
                "Under {era} the ablation did not run; the best conservative configuration, \
                 {}, gains {:.2}%. ",
                p.name, p.gain.mean
            );
        }
        _ => {
            let _ = write!(s, "Under {era} nothing was measured. ");
        }
    }
    for p in ["conservative-hard", "conservative-soft"] {
        let find = |mode: PlacementMode| {
            e.policies
                .iter()
                .find(|x| x.name == format!("{p} ({mode})"))
        };
        if let (Some(z), Some(q)) = (find(PlacementMode::Zone), find(PlacementMode::Paper)) {
            let d = z.gain.mean - q.gain.mean;
            let _ = write!(
                s,
                "{p} gains {:.2}% with fork placement and new-idle balancing as `linux`'s \
                 (the paper's \"usual manner\", the headline) and {:.2}% with them inside the \
                 zone (an extension of ours): {}. ",
                q.gain.mean,
                z.gain.mean,
                if d.abs() < 0.005 {
                    "the placement mode makes no difference".to_string()
                } else if d > 0.0 {
                    format!("the extension's restricted placement adds {d:.2} points")
                } else {
                    format!(
                        "the extension's restricted placement costs {:.2} points",
                        -d
                    )
                }
            );
        }
    }
    if let Some(p) = best_policy {
        let gap = paper_mean - p.gain.mean;
        let _ = write!(
            s,
            "The paper reports {paper_mean:.2}% on mean; {}",
            if gap > 0.0 {
                let alone = match best_alone {
                    Some((m, x)) if x.gain.mean >= paper_mean => format!(
                        "yet {} alone reaches it ({:.2}%)",
                        m.describe(),
                        x.gain.mean
                    ),
                    Some((m, x)) => format!(
                        "and no mechanism alone reaches it (the best, {}, {:.2}%)",
                        m.describe(),
                        x.gain.mean
                    ),
                    None => "and no mechanism ran alone".to_string(),
                };
                format!("ours falls {gap:.2} points short, {alone}.")
            } else {
                format!("ours matches or exceeds it by {:.2} points.", -gap)
            }
        );
    }
    s.trim_end().to_string()
}

/// The mechanisms a configuration of the report combines (its name as
/// [`policy_effects`] writes it): the hard zone on every balancer and wake-ups and, in
/// zone mode, on fork placement; the soft zone's placement rule in zone mode; the origin
/// check and ageing in both.
fn parts_of(name: &str) -> &'static [Mechanism] {
    use Mechanism::{
        Ageing, ForkZone, NewIdleZone, OriginCheck, PlacementRule, WakeZone, ZonePeriodic,
    };
    match name {
        "conservative-hard (zone)" => &[
            ZonePeriodic,
            OriginCheck,
            Ageing,
            NewIdleZone,
            ForkZone,
            WakeZone,
        ],
        "conservative-hard (paper)" => &[ZonePeriodic, OriginCheck, Ageing, WakeZone],
        "conservative-soft (zone)" => &[OriginCheck, Ageing, PlacementRule],
        "conservative-soft (paper)" => &[OriginCheck, Ageing],
        _ => &[],
    }
}

/// `a` compared with `b`, in words (within 0.005 is "about the same as").
fn relation(a: f64, b: f64) -> &'static str {
    if (a - b).abs() < 0.005 {
        "about the same as"
    } else if a > b {
        "more than"
    } else {
        "less than"
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn line(mean: f64) -> GainLine {
        GainLine::of(&[mean], 0)
    }

    fn eff(name: &str, mean: f64) -> Effect {
        Effect {
            name: name.to_string(),
            gain: line(mean),
            migrations_pct: 50.0,
        }
    }

    fn era(policies: &[(&str, f64)], alone: &[(Mechanism, f64)]) -> EraEffects {
        EraEffects {
            era: "2.6".into(),
            policies: policies.iter().map(|&(n, g)| eff(n, g)).collect(),
            mechanisms: alone
                .iter()
                .map(|&(m, g)| (m, eff(m.describe(), g)))
                .collect(),
        }
    }

    fn row(policy: &str, mode: PlacementMode, procs: usize, seed: u64, tat: f64) -> Row {
        let mut cfg = zonal_policy::PolicyConfig::named(policy).unwrap();
        cfg.placement = mode;
        Row {
            job: zonal_sim::experiment::Job {
                system: System::S1,
                label: "w2".into(),
                workload: zonal_sim::experiment::paper_workload(System::S1, WorkloadId::W2, procs),
                policy: cfg,
                seed,
                cost: zonal_sim::CostModel::default(),
                origin_at: zonal_sim::OriginAt::Parent,
            },
            stats: zonal_sim::RunStats {
                avg_tat_us: tat,
                migrations: tat as u64,
                ..Default::default()
            },
        }
    }

    #[test]
    fn both_modes_are_found_whichever_is_the_grid_s() {
        use PlacementMode::{Paper, Zone};
        let mut zone_grid = Vec::new();
        let mut paper_rows = Vec::new();
        for procs in [100, 200] {
            for seed in [1, 2] {
                zone_grid.push(row("linux", Zone, procs, seed, 100.0));
                zone_grid.push(row("conservative-hard", Zone, procs, seed, 90.0));
                paper_rows.push(row("conservative-hard", Paper, procs, seed, 95.0));
            }
        }
        let linux: Vec<Row> = zone_grid
            .iter()
            .filter(|r| r.job.policy.name.as_str() == "linux")
            .cloned()
            .collect();
        let zone_only: Vec<Row> = zone_grid
            .iter()
            .filter(|r| r.job.policy.name.as_str() != "linux")
            .cloned()
            .collect();
        let paper_grid: Vec<Row> = linux.iter().chain(&paper_rows).cloned().collect();
        for effects in [
            policy_effects(&zone_grid, &paper_rows),
            policy_effects(&paper_grid, &zone_only),
        ] {
            let got: Vec<(&str, f64, usize, f64)> = effects
                .iter()
                .map(|e| {
                    (
                        e.name.as_str(),
                        e.gain.mean,
                        e.gain.points,
                        e.migrations_pct,
                    )
                })
                .collect();
            assert_eq!(
                got,
                [
                    ("conservative-hard (zone)", 10.0, 2, 90.0),
                    ("conservative-hard (paper)", 5.0, 2, 95.0)
                ]
            );
        }
        // A mechanism's rows are compared with the same seeds of linux only.
        let mut ablation = row("linux", Zone, 100, 1, 80.0);
        ablation.job.policy = ablation.job.policy.with_mechanism(Mechanism::Ageing);
        let m = mechanism_effects(&zone_grid, &[ablation]);
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].0, m[0].1.gain.mean, m[0].1.gain.points),
            (Mechanism::Ageing, 20.0, 1)
        );
    }

    #[test]
    fn a_positive_gain_is_attributed_to_the_largest_mechanism() {
        let e = era(
            &[
                ("conservative-hard (zone)", 2.0),
                ("conservative-hard (paper)", 0.5),
            ],
            &[
                (Mechanism::ZonePeriodic, 0.2),
                (Mechanism::ForkZone, 1.5),
                // Not conservative-hard's: left out of its sum and its largest share.
                (Mechanism::PlacementRule, 1.9),
            ],
        );
        let s = era_sentences(&e, 8.36);
        // The headline is the paper's placement, though the zone's extension gains more.
        assert!(
            s.contains(
                "the best conservative configuration with the paper's placement, \
                 conservative-hard (paper), gains 0.50%"
            ),
            "{s}"
        );
        assert!(
            s.contains("The largest share comes from the hard zone on periodic balancing: alone it gives 0.20% of those 0.50% (40%)"),
            "{s}"
        );
        assert!(
            s.contains(
                "Its mechanisms alone (zone_periodic) add up to 0.20%, less than its 0.50%. "
            ),
            "{s}"
        );
        assert!(
            s.contains("conservative-hard gains 0.50% with fork placement and new-idle balancing as `linux`'s"),
            "{s}"
        );
        assert!(
            s.contains("the extension's restricted placement adds 1.50 points"),
            "{s}"
        );
        assert!(
            s.contains("ours falls 7.86 points short, and no mechanism alone reaches it (the best, the hard zone on periodic balancing, 0.20%)."),
            "{s}"
        );
    }

    #[test]
    fn no_gain_and_losses_read_the_other_way() {
        let e = era(
            &[
                ("conservative-hard (zone)", -1.0),
                ("conservative-hard (paper)", -0.5),
            ],
            &[(Mechanism::OriginCheck, -0.2), (Mechanism::Ageing, -0.4)],
        );
        let s = era_sentences(&e, -1.0);
        assert!(
            s.contains("no conservative configuration with the paper's placement gains on mean over `linux` (the best, conservative-hard (paper), -0.50%)"),
            "{s}"
        );
        assert!(
            s.contains("no mechanism alone gains either (the best, the origin check, -0.20%)"),
            "{s}"
        );
        assert!(
            s.contains("(origin_check, ageing) add up to -0.60%, less than its -0.50%"),
            "{s}"
        );
        assert!(
            s.contains("the extension's restricted placement costs 0.50 points"),
            "{s}"
        );
        assert!(
            s.contains("ours matches or exceeds it by 0.50 points"),
            "{s}"
        );
        assert!(!s.contains("largest share"), "{s}");
    }

    #[test]
    fn a_mechanism_alone_above_the_whole_and_parts_above_the_sum_say_so() {
        let e = era(
            &[("conservative-soft (zone)", 1.0)],
            &[(Mechanism::Ageing, 0.5), (Mechanism::NewIdleZone, 1.5)],
        );
        let s = era_sentences(&e, 8.36);
        // New-idle balancing in the zone is not soft's: left out of its sum.
        assert!(
            s.contains("(ageing) add up to 0.50%, less than its 1.00% (the soft zone's own rule"),
            "{s}"
        );
        let e = era(
            &[("conservative-hard (zone)", 1.0)],
            &[(Mechanism::Ageing, 0.5), (Mechanism::NewIdleZone, 1.5)],
        );
        let s = era_sentences(&e, 8.36);
        assert!(
            s.contains("(150%; the configuration as a whole gains less than this mechanism alone)"),
            "{s}"
        );
        assert!(
            s.contains("(ageing, newidle_zone) add up to 2.00%, more than its 1.00%"),
            "{s}"
        );
        // A mechanism alone at or above the paper's mean while the policy is not.
        let s = era_sentences(&e, 1.2);
        assert!(
            s.contains("ours falls 0.20 points short, yet new-idle balancing inside the zone alone reaches it (1.50%)."),
            "{s}"
        );
        // No mechanism gains but the policy does (none of them soft's: all of them count).
        let e = era(
            &[("conservative-soft (zone)", 1.0)],
            &[(Mechanism::NewIdleZone, -0.5)],
        );
        let s = era_sentences(&e, 8.36);
        assert!(s.contains("the gain exists only in combination"), "{s}");
        // A policy that loses while a mechanism alone gains.
        let e = era(
            &[("conservative-soft (zone)", -1.0)],
            &[(Mechanism::ZonePeriodic, 0.3)],
        );
        let s = era_sentences(&e, 8.36);
        assert!(
            s.contains("yet the hard zone on periodic balancing alone gains 0.30%"),
            "{s}"
        );
        assert!(
            s.contains("(zone_periodic) add up to 0.30%, more than its -1.00%"),
            "{s}"
        );
    }

    #[test]
    fn equal_modes_make_no_difference_and_missing_parts_are_said() {
        let e = era(
            &[
                ("conservative-soft (zone)", 0.7),
                ("conservative-soft (paper)", 0.7),
            ],
            &[],
        );
        let s = era_sentences(&e, 8.36);
        assert!(s.contains("the ablation did not run"), "{s}");
        assert!(s.contains("the placement mode makes no difference"), "{s}");
        assert_eq!(
            era_sentences(&era(&[], &[]), 8.36),
            "Under 2.6 nothing was measured."
        );
    }
}
