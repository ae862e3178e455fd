//! The reproduction's sensitivity sweep under the 2.6 era: the balancing-attempt cost, the
//! migration cost and the remote-access penalty, each scaled alone (the others at ×1), with
//! the conservative policies' gain over `linux` at each scale.
//!
//! The attempt cost is `CostModel::lb_attempt_base_ns` and `lb_scan_per_cpu_ns`, with the
//! 2.6 era's double lock, `move_tasks` scan and contention (what the
//! simulator charges a CPU per balancing attempt, [`attempt_scaled`]); the migration cost
//! and the remote penalty are the model's own `migration_scale` and `remote_scale`.

use std::fmt::Write as _;

use zonal_sim::experiment::{Summary, System, WorkloadId};
use zonal_sim::report::Row;
use zonal_sim::CostModel;

use crate::render::GridPoint;

/// A cost the sweep scales.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Knob {
    /// The cost of a balancing attempt (fixed part and per CPU scanned).
    Attempt,
    /// Both migration costs (direct and cache refill).
    Migration,
    /// The remote-access penalty.
    Remote,
}

impl Knob {
    pub(crate) const ALL: [Knob; 3] = [Knob::Attempt, Knob::Migration, Knob::Remote];

    fn name(self) -> &'static str {
        match self {
            Knob::Attempt => "attempt cost",
            Knob::Migration => "migration cost",
            Knob::Remote => "remote penalty",
        }
    }

    /// The scales swept besides ×1 (which every knob shares).
    pub(crate) fn scales(self) -> &'static [f64] {
        match self {
            Knob::Attempt => &[0.0, 10.0, 100.0],
            Knob::Migration => &[0.0, 10.0, 100.0],
            Knob::Remote => &[0.0, 0.5, 2.0],
        }
    }

    /// `cost` with this knob at `scale`.
    pub(crate) fn apply(self, cost: CostModel, scale: f64) -> CostModel {
        match self {
            Knob::Attempt => attempt_scaled(cost, scale),
            Knob::Migration => CostModel {
                migration_scale: cost.migration_scale * scale,
                ..cost
            },
            Knob::Remote => CostModel {
                remote_scale: cost.remote_scale * scale,
                ..cost
            },
        }
    }
}

/// `cost` with the balancing-attempt cost multiplied by `scale` (`--attempt-scale`): the
/// fixed cost per attempt and the cost per CPU scanned, and under the 2.6 era's cost
/// (`CostModel::linux_2_6`) its runqueue double lock, `move_tasks` scan per task and lock
/// contention too, rounded to whole ns. The 2.6 load lag and tick are not costs and stay.
pub(crate) fn attempt_scaled(cost: CostModel, scale: f64) -> CostModel {
    let s = |ns: u64| (ns as f64 * scale).round() as u64;
    CostModel {
        lb_attempt_base_ns: s(cost.lb_attempt_base_ns),
        lb_scan_per_cpu_ns: s(cost.lb_scan_per_cpu_ns),
        linux_2_6: cost.linux_2_6.map(|c| zonal_sim::cost::Linux26Cost {
            double_lock_ns: s(c.double_lock_ns),
            scan_per_task_ns: s(c.scan_per_task_ns),
            contention_ns: s(c.contention_ns),
            ..c
        }),
        ..cost
    }
}

/// The sweep's points: the `--sweep` points (S1/W2/200, S2/W3/200, S3/W1/300).
pub(crate) const POINTS: [GridPoint; 3] = [
    (System::S1, WorkloadId::W2, 200),
    (System::S2, WorkloadId::W3, 200),
    (System::S3, WorkloadId::W1, 300),
];

/// The policies compared with `linux`.
pub(crate) const CONTENDERS: [&str; 2] = ["conservative-hard", "conservative-soft"];

/// Every (knob, scale) the sweep runs: ×1 once (named by the first knob), then each
/// knob's other scales.
pub(crate) fn settings() -> Vec<(Option<Knob>, f64)> {
    let mut v = vec![(None, 1.0)];
    for k in Knob::ALL {
        v.extend(k.scales().iter().map(|&s| (Some(k), s)));
    }
    v
}

/// The section: `runs[i]` holds the rows of `settings()[i]` (linux and the contenders at
/// every point and seed).
pub(crate) fn section(runs: &[Vec<Row>], seeds: u64) -> String {
    // The contenders' placement mode (`--placement`).
    let mode = runs
        .iter()
        .flatten()
        .find(|r| CONTENDERS.contains(&r.job.policy.name.as_str()))
        .map_or(zonal_policy::PlacementMode::Zone, |r| {
            r.job.policy.placement
        });
    let mut md = format!(
        "## Sensitivity under the 2.6 era\n\n\
         Each cost scaled alone, the others at ×1, the paper's cost model otherwise: gain % \
         over 2.6 `linux` (mean ± 95% interval over point × seed) at {}, {seeds} seeds, \
         origins at the parent, placement {mode}. The attempt cost is what the simulator \
         charges per balancing attempt (`lb_attempt_base_ns` + `lb_scan_per_cpu_ns` per CPU \
         scanned, and the 2.6 cost's double lock, `move_tasks` scan and contention); the \
         migration cost both migration costs; the remote penalty the \
         slowdown of remote memory.\n\n| cost | scale |{}\n|---|---|{}\n",
        POINTS
            .iter()
            .map(|&(s, w, p)| format!(
                "{}/{}/{p}",
                s.as_str().to_uppercase(),
                w.as_str().to_uppercase()
            ))
            .collect::<Vec<_>>()
            .join(", "),
        CONTENDERS
            .iter()
            .map(|c| format!(" {c} gain % |"))
            .collect::<String>(),
        "---|".repeat(CONTENDERS.len())
    );
    for ((knob, scale), rows) in settings().into_iter().zip(runs) {
        let name = knob.map_or("all", Knob::name);
        let _ = write!(md, "| {name} | ×{scale} |");
        for c in CONTENDERS {
            let s = gains(rows, c);
            if s.n == 0 {
                md.push_str(" – |");
            } else {
                let _ = write!(md, " {:.2} ± {:.2} |", s.mean, s.ci95);
            }
        }
        md.push('\n');
    }
    md.push('\n');
    md
}

/// The per-(point, seed) gains of `policy` over `linux` in `rows`.
pub(crate) fn gains(rows: &[Row], policy: &str) -> Summary {
    let mut xs = Vec::new();
    for b in rows
        .iter()
        .filter(|r| r.job.policy.name.as_str() == "linux")
    {
        let same = |r: &&Row| {
            r.job.policy.name.as_str() == policy
                && r.job.system == b.job.system
                && r.job.label == b.job.label
                && r.job.workload.procs == b.job.workload.procs
                && r.job.seed == b.job.seed
        };
        if let Some(p) = rows.iter().find(same) {
            let l = b.stats.avg_tat_us;
            if l > 0.0 {
                xs.push(100.0 * (l - p.stats.avg_tat_us) / l);
            }
        }
    }
    Summary::of(&xs)
}

/// The gain of `policy` at one knob's scale, for the deviation table: `(scale, mean)` for
/// each swept scale of `knob` and ×1.
pub(crate) fn knob_gains(runs: &[Vec<Row>], knob: Knob, policy: &str) -> Vec<(f64, f64)> {
    settings()
        .into_iter()
        .zip(runs)
        .filter(|((k, _), _)| k.is_none() || *k == Some(knob))
        .map(|((_, s), rows)| (s, gains(rows, policy).mean))
        .collect()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_attempt_scale_multiplies_both_attempt_costs_only() {
        let c = CostModel::default();
        let x = attempt_scaled(c, 10.0);
        assert_eq!(x.lb_attempt_base_ns, 10 * c.lb_attempt_base_ns);
        assert_eq!(x.lb_scan_per_cpu_ns, 10 * c.lb_scan_per_cpu_ns);
        assert_eq!(
            CostModel {
                lb_attempt_base_ns: c.lb_attempt_base_ns,
                lb_scan_per_cpu_ns: c.lb_scan_per_cpu_ns,
                ..x
            },
            c
        );
        assert_eq!(attempt_scaled(c, 1.0), c);
        assert_eq!(attempt_scaled(c, 0.0).lb_attempt_base_ns, 0);
    }

    #[test]
    fn the_attempt_scale_reaches_the_2_6_attempt_costs_not_the_lag_or_tick() {
        let c = CostModel::default().for_linux_era(true);
        let old = c.linux_2_6.expect("2.6 cost");
        let new = attempt_scaled(c, 10.0).linux_2_6.expect("2.6 cost");
        assert_eq!(new.double_lock_ns, 10 * old.double_lock_ns);
        assert_eq!(new.scan_per_task_ns, 10 * old.scan_per_task_ns);
        assert_eq!(new.contention_ns, 10 * old.contention_ns);
        assert_eq!(
            (new.load_lag_us, new.tick_us),
            (old.load_lag_us, old.tick_us)
        );
        assert_eq!(attempt_scaled(c, 1.0), c);
    }

    #[test]
    fn settings_run_one_shared_baseline_then_each_knob() {
        let s = settings();
        assert_eq!(s[0], (None, 1.0));
        assert_eq!(
            s.len(),
            1 + Knob::ALL.iter().map(|k| k.scales().len()).sum::<usize>()
        );
        assert!(s[1..].iter().all(|&(k, x)| k.is_some() && x != 1.0));
        let c = CostModel::default();
        assert_eq!(Knob::Remote.apply(c, 2.0).remote_scale, 2.0);
        assert_eq!(Knob::Migration.apply(c, 0.0).migration_scale, 0.0);
    }
}
