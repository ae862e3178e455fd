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
        legend(&mut chart)?;
    }
    root.present()?;
    Ok(())
}

/// A panel of [`gain_panels`]: its title and its series (name, gain % per grid point).
pub(crate) type GainPanel = (String, Vec<(String, Vec<f64>)>);

/// Writes one SVG of gain per grid point (x: the point's index in Tables 3–5's order, y:
/// gain over linux, %), one panel per variant, one line per series.
///
/// # Errors
/// A message if the file cannot be drawn or written.
pub(crate) fn gain_panels(panels: &[GainPanel], path: &Path) -> Result<(), String> {
    draw_gains(panels, path).map_err(|e| e.to_string())
}

fn draw_gains(panels: &[GainPanel], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let cols = 2;
    let rows = panels.len().div_ceil(cols).max(1);
    let root = SVGBackend::new(path, (1400, 420 * rows as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((rows, cols));
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut n = 1usize;
    for (_, series) in panels {
        for (_, xs) in series {
            n = n.max(xs.len());
            for &x in xs {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
    }
    for ((title, series), area) in panels.iter().zip(areas.iter()) {
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..(n as f64 + 1.0), (lo - 1.0)..(hi + 1.0))?;
        chart
            .configure_mesh()
            .x_desc("grid point (S1 W1…W3, S2, S3; processes ascending)")
            .y_desc("gain over linux, %")
            .draw()?;
        chart.draw_series(LineSeries::new(
            [(0.0, 0.0), (n as f64 + 1.0, 0.0)],
            BLACK.mix(0.4),
        ))?;
        for (i, (name, xs)) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let pts: Vec<(f64, f64)> = xs
                .iter()
                .enumerate()
                .map(|(k, &y)| ((k + 1) as f64, y))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(name.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
        }
        legend(&mut chart)?;
    }
    root.present()?;
    Ok(())
}

/// Draws a panel's legend as both plots place it: upper left, on a nearly opaque white box
/// with a black border.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
}
