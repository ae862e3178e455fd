//! The plots: `WORKLOAD.svg` (median per runtime, a bar, with its min–max) and
//! `locality.svg` (the share of slices on their data's node, per workload and runtime).

use std::path::Path;

use plotters::prelude::*;

use crate::Report;

const COLOURS: [RGBColor; 5] = [
    RGBColor(200, 40, 40),
    RGBColor(230, 120, 40),
    RGBColor(150, 60, 150),
    RGBColor(40, 90, 200),
    RGBColor(60, 150, 60),
];

type Fallible = Result<(), Box<dyn std::error::Error>>;

/// Every plot of `report` into `dir`.
pub(crate) fn draw_all(dir: &Path, report: &Report) -> Fallible {
    for w in &report.workloads {
        let rows: Vec<_> = report
            .results
            .iter()
            .filter(|r| &r.workload == w && r.not_expressible.is_none())
            .collect();
        let bars: Vec<(String, f64, f64, f64)> = rows
            .iter()
            .map(|r| (r.runtime.clone(), r.median, r.min, r.max))
            .collect();
        let unit = rows.first().map_or("ms", |r| r.unit.as_str());
        let caption = if report.timings_meaningless.is_some() {
            format!("{w} (timings meaningless here)")
        } else {
            (*w).to_owned()
        };
        bars_svg(&dir.join(format!("{w}.svg")), &caption, unit, &bars)?;
    }
    let mut shares = Vec::new();
    for w in &report.workloads {
        for r in report.results.iter().filter(|r| &r.workload == w) {
            if let Some(x) = r.slices.share_on_data_node {
                shares.push((
                    format!("{w}/{}", r.runtime),
                    x * 100.0,
                    x * 100.0,
                    x * 100.0,
                ));
            }
        }
    }
    bars_svg(
        &dir.join("locality.svg"),
        "slices on their data's node",
        "%",
        &shares,
    )
}

/// A horizontal bar chart: one bar per `(label, value, lo, hi)`, a whisker from lo to hi.
fn bars_svg(path: &Path, caption: &str, unit: &str, bars: &[(String, f64, f64, f64)]) -> Fallible {
    let height = 80 + 28 * bars.len().max(1) as u32;
    let root = SVGBackend::new(path, (760, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let hi = bars.iter().fold(0f64, |m, b| m.max(b.3)).max(1e-9) * 1.1;
    let n = bars.len().max(1) as i32;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(220)
        .build_cartesian_2d(0f64..hi, (0..n).into_segmented())?;
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .x_desc(unit)
        .y_labels(bars.len().max(1))
        .y_label_formatter(&|y| match y {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                labels.get(*i as usize).cloned().unwrap_or_default()
            }
            SegmentValue::Last => String::new(),
        })
        .draw()?;
    for (i, (_, v, lo, hi)) in bars.iter().enumerate() {
        let i = i as i32;
        let colour = COLOURS[i as usize % COLOURS.len()];
        chart.draw_series(std::iter::once(Rectangle::new(
            [
                (0.0, SegmentValue::Exact(i)),
                (*v, SegmentValue::Exact(i + 1)),
            ],
            colour.mix(0.6).filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![
                (*lo, SegmentValue::CenterOf(i)),
                (*hi, SegmentValue::CenterOf(i)),
            ],
            BLACK.stroke_width(2),
        )))?;
    }
    root.present()?;
    Ok(())
}
