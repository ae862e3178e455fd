//! `numa-report`: what Zonal does on this machine, in one directory to share.
//!
//! Discovers the machine (nodes, distances, CPUs, memory per node, from sysfs), runs the
//! NUMA kit's workloads (`zonal_examples::numa`) on Zonal (conservative-hard,
//! conservative-soft, linux), rayon and tokio within a time budget, and writes:
//! - `report.md`: the machine, what confounds the figures, what could not be measured and
//!   why, one table per workload (time, run-to-run spread, the share of task slices that
//!   ran on their data's node, where the kernel held the pages), the wrong-node control and
//!   the verdict it allows (none unless its remote penalty exceeds the spread);
//! - `report.json`: all of it, raw (`schema_version` 1);
//! - `topology.json`: the machine;
//! - `WORKLOAD.svg` per workload and `locality.svg`.
//!
//! ```text
//! cargo run --release -p zonal-examples --example numa-report             # ~10 min
//! cargo run --release -p zonal-examples --example numa-report -- --quick  # ~1 min
//! ZONAL_NUMA_BYTES=256M cargo run --release -p zonal-examples --example numa-report -- --out /tmp/r
//! ```
//!
//! Exit status: 0 on success; 2 for bad input (a flag out of range, a bad
//! `ZONAL_NUMA_BYTES`); 1 when a run fails (a runtime that cannot start, data that cannot
//! be placed, runtimes that disagree on a result, a service task lost or run twice, output
//! that cannot be written).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use zonal_examples::cli::{self, check_range, Exit};
use zonal_examples::numa::host::{Confounders, Topo};
use zonal_examples::numa::kit::{Kit, Place, CONTROL, CONTROL_TWIN, WORKLOADS};
use zonal_examples::numa::locality::{KernelPages, SliceSummary};
use zonal_examples::numa::sizes::{Mode, Sizes, BYTES_VAR};

mod plot;
mod render;

/// The JSON's schema version: bump it when a field changes meaning or goes away.
const SCHEMA_VERSION: u32 = 1;

#[derive(Parser, Debug)]
#[command(
    about = "Measure Zonal, rayon and tokio on this machine's NUMA nodes and write a \
                   report to share (Markdown, SVG plots, raw JSON, topology)"
)]
struct Args {
    /// About one minute: small data, few repetitions.
    #[arg(long)]
    quick: bool,
    /// The directory to write (created if missing).
    #[arg(long, default_value = "out/numa-report")]
    out: PathBuf,
    /// Time budget in seconds (10..=86400; default 600, 60 with --quick): repetitions stop
    /// when it is spent (each workload still runs twice on every runtime).
    #[arg(long)]
    budget: Option<u64>,
    /// Most repetitions per workload and runtime (2..=100; default 10, 3 with --quick).
    #[arg(long)]
    reps: Option<usize>,
    /// Label every timing meaningless, giving why (e.g. a virtual machine that models no
    /// memory latency); locality figures (where the data and the slices were) are reported as usual.
    #[arg(long, value_name = "WHY")]
    timings_meaningless: Option<String>,
}

/// One workload on one runtime.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) workload: String,
    pub(crate) runtime: String,
    /// Why the runtime cannot express the workload (then nothing was measured).
    pub(crate) not_expressible: Option<String>,
    /// The figure's unit: `ms` per run, or `ms turnaround` (median) for the service.
    pub(crate) unit: String,
    pub(crate) samples: Vec<f64>,
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    /// `(max - min) / median`.
    pub(crate) spread: f64,
    pub(crate) bytes: usize,
    pub(crate) checksum: String,
    pub(crate) slices: SliceSummary,
    pub(crate) kernel: KernelPages,
}

/// The wrong-node control against its local twin, per runtime.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ControlRow {
    pub(crate) runtime: String,
    /// `median(control) / median(twin) - 1`.
    pub(crate) penalty: f64,
    /// The larger spread of the two.
    pub(crate) spread: f64,
}

/// The whole report (`report.json`).
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub(crate) schema_version: u32,
    pub(crate) program: &'static str,
    pub(crate) mode: &'static str,
    pub(crate) budget_seconds: u64,
    pub(crate) elapsed_seconds: f64,
    /// `None` when the timings mean something; else why they do not.
    pub(crate) timings_meaningless: Option<String>,
    pub(crate) machine: Topo,
    pub(crate) one_node: bool,
    pub(crate) node_a: Place,
    pub(crate) node_b: Place,
    pub(crate) virtualized: bool,
    pub(crate) confounders: Confounders,
    pub(crate) sizes: Sizes,
    pub(crate) runtimes: Vec<String>,
    pub(crate) workloads: Vec<&'static str>,
    pub(crate) unmeasured: Vec<String>,
    pub(crate) results: Vec<Row>,
    pub(crate) control: Vec<ControlRow>,
    pub(crate) verdict_allowed: bool,
    pub(crate) verdict: Vec<String>,
    pub(crate) problems: Vec<String>,
}

fn main() -> ExitCode {
    let (args, _) = cli::parse::<Args>();
    cli::finish("numa-report", run(&args))
}

fn run(args: &Args) -> cli::Result {
    let budget = args.budget.unwrap_or(if args.quick { 60 } else { 600 });
    check_range("--budget", budget, 10, 86_400)?;
    let reps = args.reps.unwrap_or(if args.quick { 3 } else { 10 });
    check_range("--reps", reps, 2, 100)?;
    let var = std::env::var(BYTES_VAR).ok();
    let (topo, machine) = Topo::discover().map_err(Exit::failure)?;
    let sizes = Sizes::new(
        &topo,
        if args.quick { Mode::Quick } else { Mode::Full },
        var.as_deref(),
    )
    .map_err(Exit::usage)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Exit::failure(format!("cannot create {}: {e}", args.out.display())))?;
    let start = Instant::now();
    let kit = Kit::new(topo, &machine, sizes).map_err(Exit::failure)?;
    let runtimes = kit.runtimes();
    let bar = progress(WORKLOADS.len() * runtimes.len() * reps);
    let deadline = start + Duration::from_secs(budget);
    let mut results = Vec::new();
    for (w, workload) in WORKLOADS.iter().enumerate() {
        // This workload's share of what is left of the budget.
        let left = deadline.saturating_duration_since(Instant::now());
        let share = left / (WORKLOADS.len() - w) as u32;
        bar.set_message((*workload).to_owned());
        let rows = if *workload == "service" {
            service_rows(&kit, &runtimes, reps.min(3), share, &bar)?
        } else {
            part_rows(&kit, workload, &runtimes, reps, share, &bar)?
        };
        results.extend(rows);
    }
    bar.finish_and_clear();
    let report = assemble(args, &kit, budget, start.elapsed(), results, runtimes);
    write(&args.out, &report)?;
    cli::out(format!(
        "numa-report: wrote {} (report.md, report.json, topology.json, plots)\n",
        args.out.display()
    ))?;
    if report.problems.is_empty() {
        Ok(())
    } else {
        Err(Exit::failure(report.problems.join("; ")))
    }
}

/// The progress bar on stderr (drawn only on a terminal).
fn progress(len: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len}  {msg}")
    {
        bar.set_style(style);
    }
    bar
}

/// `(median, min, max, spread)` of `v` (not empty).
fn stats(v: &[f64]) -> (f64, f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let (min, max) = (s[0], s[s.len() - 1]);
    let median = if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
    };
    let spread = if median > 0.0 {
        (max - min) / median
    } else {
        0.0
    };
    (median, min, max, spread)
}

/// A measured row.
#[allow(clippy::too_many_arguments)]
fn row(
    workload: &str,
    runtime: &str,
    unit: &str,
    samples: Vec<f64>,
    bytes: usize,
    checksum: String,
    slices: SliceSummary,
    kernel: KernelPages,
) -> Row {
    let (median, min, max, spread) = stats(&samples);
    Row {
        workload: workload.to_owned(),
        runtime: runtime.to_owned(),
        not_expressible: None,
        unit: unit.to_owned(),
        samples,
        median,
        min,
        max,
        spread,
        bytes,
        checksum,
        slices,
        kernel,
    }
}

/// A part workload on every runtime: data placed for each, then rounds of one run per
/// runtime (interleaved, so drift hits all alike) until `reps` or the share is spent (two
/// rounds at least).
fn part_rows(
    kit: &Kit,
    workload: &str,
    runtimes: &[String],
    reps: usize,
    share: Duration,
    bar: &ProgressBar,
) -> cli::Result<Vec<Row>> {
    let start = Instant::now();
    let mut prepared = Vec::new();
    for r in 0..runtimes.len() {
        let p = kit
            .prepare(workload, r)
            .map_err(Exit::failure)?
            .ok_or_else(|| Exit::failure(format!("{workload} is not a part workload")))?;
        prepared.push(p);
    }
    let mut samples = vec![Vec::new(); runtimes.len()];
    let mut checksums = vec![String::new(); runtimes.len()];
    for rep in 0..reps {
        if rep >= 2 && start.elapsed() > share {
            bar.inc(((reps - rep) * runtimes.len()) as u64);
            break;
        }
        for (r, p) in prepared.iter_mut().enumerate() {
            let t = p.run_once();
            samples[r].push(t.as_secs_f64() * 1000.0);
            if rep == 0 {
                checksums[r] = p.checksum();
            }
            bar.inc(1);
        }
    }
    Ok(prepared
        .iter()
        .enumerate()
        .map(|(r, p)| {
            row(
                workload,
                &runtimes[r],
                "ms",
                std::mem::take(&mut samples[r]),
                p.bytes(),
                std::mem::take(&mut checksums[r]),
                p.slices(),
                p.kernel_pages(),
            )
        })
        .collect())
}

/// The service load on every runtime that can express it, `reps` rounds (at least two)
/// while the share lasts.
fn service_rows(
    kit: &Kit,
    runtimes: &[String],
    reps: usize,
    share: Duration,
    bar: &ProgressBar,
) -> cli::Result<Vec<Row>> {
    let start = Instant::now();
    let n = runtimes.len();
    let mut samples = vec![Vec::new(); n];
    let mut slices = vec![SliceSummary::default(); n];
    let mut kernel = vec![KernelPages::default(); n];
    let mut tasks = vec![0u64; n];
    let mut lost = vec![false; n];
    let mut expressible = vec![true; n];
    for rep in 0..reps {
        if rep >= 2 && start.elapsed() > share {
            break;
        }
        for r in 0..n {
            bar.inc(1);
            match kit.service(r, 42 + rep as u64).map_err(Exit::failure)? {
                None => expressible[r] = false,
                Some(run) => {
                    samples[r].push(run.median_turnaround_ms);
                    slices[r] = slices[r].add(&run.slices);
                    for (node, pages) in run.kernel.by_node {
                        *kernel[r].by_node.entry(node).or_default() += pages;
                    }
                    kernel[r].errors += run.kernel.errors;
                    for (why, n) in run.kernel.errors_by_reason {
                        *kernel[r].errors_by_reason.entry(why).or_default() += n;
                    }
                    if kernel[r].numa_balancing.is_empty() {
                        kernel[r].numa_balancing = run.kernel.numa_balancing;
                    }
                    kernel[r].unavailable = kernel[r].unavailable.take().or(run.kernel.unavailable);
                    tasks[r] += run.tasks;
                    lost[r] |= !run.exactly_once;
                }
            }
        }
    }
    Ok((0..n)
        .map(|r| {
            if !expressible[r] {
                return Row {
                    workload: "service".into(),
                    runtime: runtimes[r].clone(),
                    not_expressible: Some(
                        "rayon has no async tasks: a task that waits between slices would \
                         hold a worker"
                            .into(),
                    ),
                    unit: String::new(),
                    samples: Vec::new(),
                    median: 0.0,
                    min: 0.0,
                    max: 0.0,
                    spread: 0.0,
                    bytes: 0,
                    checksum: String::new(),
                    slices: SliceSummary::default(),
                    kernel: KernelPages::default(),
                };
            }
            let check = if lost[r] {
                "a task was lost or ran twice".to_owned()
            } else {
                format!("{} tasks, each finished once", tasks[r])
            };
            row(
                "service",
                &runtimes[r],
                "ms turnaround (median)",
                std::mem::take(&mut samples[r]),
                0,
                check,
                slices[r].clone(),
                std::mem::take(&mut kernel[r]),
            )
        })
        .collect())
}

/// What could not be measured here, and why.
fn unmeasured(kit: &Kit) -> Vec<String> {
    let mut out = Vec::new();
    let t = &kit.topo;
    if kit.one_node() {
        out.push(
            "One node: this machine shows no NUMA effect. Every workload still ran, but local \
             and remote are the same memory here, so the wrong-node control cannot show a \
             remote penalty and no runtime can be called faster for NUMA reasons."
                .to_owned(),
        );
    }
    if t.cpus_allowed < t.cpus_online {
        out.push(format!(
            "cpuset: this process may use {} of the {} online CPUs; nodes without an allowed \
             CPU ran no threads.",
            t.cpus_allowed, t.cpus_online
        ));
    }
    for n in &t.nodes {
        if n.allowed_cpus.is_empty() {
            out.push(format!(
                "node {}: no CPU allowed here (memory only, or outside the cpuset): no thread \
                 ran on it.",
                n.os_id
            ));
        }
    }
    match kit.probe_bind() {
        Ok(None) => {}
        Ok(Some(why)) => out.push(format!(
            "mbind: memory could not be bound to a node ({why}); buffers were placed by first \
             touch, and the kernel's page counts say where they went."
        )),
        Err(e) => out.push(format!("mbind: cannot probe: {e}")),
    }
    out
}

/// The control, the verdict it allows, and the checks.
fn assemble(
    args: &Args,
    kit: &Kit,
    budget: u64,
    elapsed: Duration,
    results: Vec<Row>,
    runtimes: Vec<String>,
) -> Report {
    let find = |w: &str, r: &str| results.iter().find(|x| x.workload == w && x.runtime == r);
    let control: Vec<ControlRow> = runtimes
        .iter()
        .filter_map(|r| {
            let (c, t) = (find(CONTROL, r)?, find(CONTROL_TWIN, r)?);
            (t.median > 0.0).then(|| ControlRow {
                runtime: r.clone(),
                penalty: c.median / t.median - 1.0,
                spread: c.spread.max(t.spread),
            })
        })
        .collect();
    let mut problems = Vec::new();
    for w in WORKLOADS {
        let sums: Vec<&Row> = results
            .iter()
            .filter(|x| x.workload == w && x.not_expressible.is_none())
            .collect();
        if w == "service" {
            for x in &sums {
                if x.checksum.contains("lost") {
                    problems.push(format!("service on {}: {}", x.runtime, x.checksum));
                }
            }
        } else if sums.windows(2).any(|p| p[0].checksum != p[1].checksum) {
            let all: Vec<String> = sums
                .iter()
                .map(|x| format!("{}={}", x.runtime, x.checksum))
                .collect();
            problems.push(format!("{w}: the runtimes disagree: {}", all.join(", ")));
        }
    }
    let allowed = args.timings_meaningless.is_none()
        && !kit.one_node()
        && !control.is_empty()
        && control.iter().all(|c| c.penalty > c.spread);
    let verdict = render::verdict(kit, &results, &control, allowed, args);
    Report {
        schema_version: SCHEMA_VERSION,
        program: "numa-report",
        mode: if args.quick { "quick" } else { "default" },
        budget_seconds: budget,
        elapsed_seconds: elapsed.as_secs_f64(),
        timings_meaningless: args.timings_meaningless.clone(),
        machine: kit.topo.clone(),
        one_node: kit.one_node(),
        node_a: kit.a.clone(),
        node_b: kit.b.clone(),
        virtualized: std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|s| {
            s.lines()
                .any(|l| l.starts_with("flags") && l.contains(" hypervisor"))
        }),
        confounders: Confounders::read(),
        sizes: kit.sizes.clone(),
        runtimes,
        workloads: WORKLOADS.to_vec(),
        unmeasured: unmeasured(kit),
        results,
        control,
        verdict_allowed: allowed,
        verdict,
        problems,
    }
}

/// Writes the directory.
fn write(dir: &Path, report: &Report) -> cli::Result {
    let put = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text)
            .map_err(|e| Exit::failure(format!("cannot write {}: {e}", p.display())))
    };
    put("report.json", json(report)?)?;
    put("topology.json", json(&report.machine)?)?;
    put("report.md", render::markdown(report))?;
    plot::draw_all(dir, report)
        .map_err(|e| Exit::failure(format!("cannot draw the plots: {e}")))?;
    Ok(())
}

/// Pretty JSON of `v`.
fn json<T: Serialize>(v: &T) -> cli::Result<String> {
    serde_json::to_string_pretty(v).map_err(Exit::failure)
}
