//! `service.svg`: two panels, one group of bars per policy — turnaround (mean and p99, ms)
//! on the left, migrations on the right, stacked: steals (the idle workers' pulls) under
//! the control plane's balance moves.

use std::path::Path;

use plotters::prelude::*;

use crate::report::PolicyReport;

const MEAN: RGBColor = RGBColor(40, 90, 200);
const P99: RGBColor = RGBColor(200, 40, 40);
const STEAL: RGBColor = RGBColor(60, 150, 60);
const BALANCE: RGBColor = RGBColor(230, 150, 30);

/// The x-axis label of bar group `x`: the policy's name at an integer position.
fn name_at(rows: &[PolicyReport], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < rows.len() {
        rows[i as usize].policy.clone()
    } else {
        String::new()
    }
}

/// One panel of bars: for each policy, `series` bars side by side (`stacked == false`) or
/// one stacked bar; `value(row, k)` is series `k`'s height.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    rows: &[PolicyReport],
    caption: &str,
    y_desc: &str,
    series: &[(&str, RGBColor)],
    stacked: bool,
    value: &dyn Fn(&PolicyReport, usize) -> f64,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let n = rows.len();
    let top = rows
        .iter()
        .map(|r| {
            let v = (0..series.len()).map(|k| value(r, k));
            if stacked {
                v.sum::<f64>()
            } else {
                v.fold(0.0, f64::max)
            }
        })
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top * 1.15 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5f64..n as f64 - 0.5, 0f64..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n.max(1) * 2 + 1)
        .x_label_formatter(&|x| name_at(rows, *x))
        .x_label_style(("sans-serif", 11))
        .y_desc(y_desc)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    let width = 0.7;
    for (k, &(label, colour)) in series.iter().enumerate() {
        let bars = rows.iter().enumerate().map(|(i, r)| {
            let x = i as f64;
            let (x0, x1, y0) = if stacked {
                let below: f64 = (0..k).map(|j| value(r, j)).sum();
                (x - width / 2.0, x + width / 2.0, below)
            } else {
                let w = width / series.len() as f64;
                let x0 = x - width / 2.0 + w * k as f64;
                (x0, x0 + w, 0.0)
            };
            Rectangle::new([(x0, y0), (x1, y0 + value(r, k))], colour.filled())
        });
        chart
            .draw_series(bars)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Draws the two panels for `rows` into `path`.
pub(crate) fn draw(rows: &[PolicyReport], path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let per_panel = (110 * rows.len() as u32).max(360);
    let root = SVGBackend::new(path, (2 * per_panel, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = match rows.first() {
        Some(r) => format!(
            "service load on {}{}, {} workers, remote-access emulation {}",
            r.topology,
            if r.virtual_pool { " (virtual)" } else { "" },
            r.workers,
            if r.emulate_remote { "ON" } else { "off" }
        ),
        None => "service load".to_owned(),
    };
    let root = root.titled(&title, ("sans-serif", 18))?;
    let (left, right) = root.split_horizontally(per_panel);
    panel(
        &left,
        rows,
        "turnaround (spawn to completion)",
        "ms",
        &[("mean", MEAN), ("p99", P99)],
        false,
        &|r, k| {
            if k == 0 {
                r.turnaround_ms.mean
            } else {
                r.turnaround_ms.p99
            }
        },
    )?;
    panel(
        &right,
        rows,
        "migrations",
        "tasks moved",
        &[("steals", STEAL), ("control-plane balance", BALANCE)],
        true,
        &|r, k| {
            let v = if k == 0 {
                &r.steals_by_level
            } else {
                &r.control_plane_migrations_by_level
            };
            v.iter().sum::<u64>() as f64
        },
    )?;
    root.present()?;
    Ok(())
}
