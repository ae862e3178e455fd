//! SVG plots of the grid: average TAT against process count, one panel per workload, one
//! line per policy, the paper's Linux and conservative figures as crosses.

use std::path::Path;

use plotters::prelude::*;

use zonal_sim::experiment::{paper_procs, Summary, System, WorkloadId};
use zonal_sim::paper;
use zonal_sim::report::Row;

/// Writes `dir/tat-<system>.svg` for S1–S3.
///
/// # Errors
/// A message if a file cannot be drawn or written.
pub(crate) fn tat_plots(rows: &[Row], policies: &[String], dir: &Path) -> Result<(), String> {
    for system in [System::S1, System::S2, System::S3] {
        let path = dir.join(format!("tat-{}.svg", system.as_str()));
        draw(rows, policies, system, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn draw(
    rows: &[Row],
    policies: &[String],
    system: System,
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (1500, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, 3));
    let procs = paper_procs(system);
    let x0 = procs.first().copied().unwrap_or(0) as f64 * 0.8;
    let x1 = procs.last().copied().unwrap_or(1) as f64 * 1.05;
    for (w, area) in WorkloadId::ALL.iter().zip(panels.iter()) {
        let mean_of = |policy: &str, n: usize| {
            let xs: Vec<f64> = rows
                .iter()
                .filter(|r| {
                    r.job.system == system
                        && r.job.label == w.as_str()
                        && r.job.workload.procs == n
                        && r.job.policy.name.as_str() == policy
                })
                .map(|r| r.stats.avg_tat_us / 1000.0)
                .collect();
            (!xs.is_empty()).then(|| Summary::of(&xs).mean)
        };
        let mut ymax: f64 = 1.0;
        for &n in procs {
            if let Some((l, c)) = paper::tat(system, *w, n) {
                ymax = ymax.max(f64::from(l.max(c)));
            }
            for p in policies {
                if let Some(m) = mean_of(p, n) {
                    ymax = ymax.max(m);
                }
            }
        }
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{} {}",
                    system.as_str().to_uppercase(),
                    w.as_str().to_uppercase()
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(x0..x1, 0.0..ymax * 1.1)?;
        chart
            .configure_mesh()
            .x_desc("processes")
            .y_desc("average TAT, ms")
            .draw()?;
        for (i, p) in policies.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = procs
                .iter()
                .filter_map(|&n| mean_of(p, n).map(|m| (n as f64, m)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))?
                .label(p.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        }
        for (k, label) in [(0, "paper Linux"), (1, "paper Cons.")] {
            let color = if k == 0 { BLACK } else { RED };
            chart
                .draw_series(procs.iter().filter_map(|&n| {
                    paper::tat(system, *w, n).map(|(l, c)| {
                        let y = f64::from(if k == 0 { l } else { c });
                        Cross::new((n as f64, y), 5, color.stroke_width(2))
                    })
                }))?
                .label(label)
                .legend(move |(x, y)| Cross::new((x + 9, y), 5, color.stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
