//! `scaling.svg`: one panel per workload, median time against workers (workers on a log
//! scale, time linear from zero), one line per runtime.

use std::path::Path;

use plotters::prelude::*;

use crate::Point;
use zonal_examples::workloads::Workload;

const COLOURS: [(&str, RGBColor); 3] = [
    ("zonal", RGBColor(200, 40, 40)),
    ("rayon", RGBColor(40, 90, 200)),
    ("tokio", RGBColor(60, 150, 60)),
];

pub(crate) fn draw(
    points: &[Point],
    threads: &[usize],
    workloads: &[&Workload],
    path: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    let cols = workloads.len().clamp(1, 5);
    let root = SVGBackend::new(path, (320 * cols as u32, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((1, cols));
    let xmax = threads.iter().copied().max().unwrap_or(1).max(2) as f64;
    for (w, area) in workloads.iter().zip(panels.iter()) {
        let mine: Vec<&Point> = points.iter().filter(|p| p.workload == w.name).collect();
        let hi = mine.iter().fold(0f64, |hi, p| hi.max(p.median_ms));
        let hi = if hi > 0.0 { hi * 1.15 } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(w.name, ("sans-serif", 18))
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(52)
            .build_cartesian_2d((0.9f64..xmax * 1.1).log_scale(), 0f64..hi)?;
        chart
            .configure_mesh()
            .x_desc("workers")
            .y_desc("median ms")
            .y_labels(8)
            .y_label_formatter(&|y| format!("{y:.1}"))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        for (rt, colour) in COLOURS {
            let mut line: Vec<(f64, f64)> = mine
                .iter()
                .filter(|p| p.runtime == rt)
                .map(|p| (p.threads as f64, p.median_ms))
                .collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart
                .draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))?
                .label(rt)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
            chart.draw_series(line.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
