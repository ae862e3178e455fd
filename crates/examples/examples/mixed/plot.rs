//! `mixed.svg`: two panels. Left, each setup's p50, p99 and p99.9 latency (ms, log scale;
//! a percentile that is incomplete is left out of its line); right, each setup's batch
//! throughput (median computations per second over the rounds).

use std::path::Path;

use plotters::prelude::*;

use zonal_examples::mixed::report::{Run, PERCENTILES};

const COLOURS: [RGBColor; 4] = [
    RGBColor(40, 90, 200),
    RGBColor(60, 150, 60),
    RGBColor(200, 40, 40),
    RGBColor(150, 60, 170),
];

pub(crate) fn draw(run: &Run, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let summaries = run.summaries();
    let root = SVGBackend::new(path, (960, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(560);

    let values = summaries
        .iter()
        .flat_map(|s| s.latency_us.iter().flatten())
        .map(|&us| us as f64 / 1e3);
    let (lo, hi) = values.fold((f64::MAX, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    // Whole decades, so that the log scale has labels at both ends.
    let (lo, hi) = if hi > 0.0 {
        (
            10f64.powf(lo.max(1e-3).log10().floor()),
            10f64.powf((hi * 1.05).log10().ceil()),
        )
    } else {
        (0.1, 10.0)
    };
    let mut chart = ChartBuilder::on(&left)
        .caption("request latency (from intended send)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.3f64..2.3, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_labels(3)
        .x_label_formatter(&|x| {
            PERCENTILES
                .get(x.round().max(0.0) as usize)
                .map(|p| p.0.to_owned())
                .unwrap_or_default()
        })
        .y_desc("ms")
        .y_label_formatter(&|&y| tidy(y))
        .draw()?;
    for (i, s) in summaries.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let line: Vec<(f64, f64)> = s
            .latency_us
            .iter()
            .enumerate()
            .filter_map(|(x, us)| us.map(|us| (x as f64, us as f64 / 1e3)))
            .collect();
        let label = if s.emulated {
            format!("{} (virtual S1, emulated)", s.setup)
        } else {
            s.setup.to_string()
        };
        chart
            .draw_series(LineSeries::new(line.clone(), colour.stroke_width(2)))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        chart.draw_series(line.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;

    let top = summaries
        .iter()
        .fold(0f64, |hi, s| hi.max(s.batch_per_s))
        .max(1e-3)
        * 1.2;
    let n = summaries.len().max(1) as i32;
    let mut bars = ChartBuilder::on(&right)
        .caption("batch computations / s", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d((0..n).into_segmented(), 0f64..top)?;
    bars.configure_mesh()
        .disable_x_mesh()
        .x_labels(n as usize)
        .x_label_formatter(&|x| match x {
            SegmentValue::CenterOf(i) => summaries
                .get(usize::try_from(*i).unwrap_or(usize::MAX))
                .map(|s| s.setup.to_string())
                .unwrap_or_default(),
            _ => String::new(),
        })
        .y_label_formatter(&|&y| tidy(y))
        .draw()?;
    bars.draw_series(
        Histogram::vertical(&bars)
            .margin(12)
            .style_func(|x, _| match x {
                SegmentValue::Exact(i) | SegmentValue::CenterOf(i) => {
                    COLOURS[usize::try_from(*i).unwrap_or(0) % COLOURS.len()].filled()
                }
                SegmentValue::Last => BLACK.filled(),
            })
            .data(
                summaries
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i as i32, s.batch_per_s)),
            ),
    )?;
    root.present()?;
    Ok(())
}

/// An axis value with as many decimals as its size needs.
fn tidy(y: f64) -> String {
    if y == 0.0 {
        "0".to_owned()
    } else if y >= 10.0 {
        format!("{y:.0}")
    } else if y >= 1.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.2}")
    }
}
