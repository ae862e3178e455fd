//! Reproduces Mehta & Kanungo's Tables 1–5 on the zonal-sim simulator: the whole grid, one
//! configuration as JSON, or the sensitivity sweep. The command line, rendering (`render.rs`)
//! and plots (`plot.rs`) live here; the simulator and its experiment runner are the
//! `zonal-sim` library (see `crates/sim/README.md`).
//!
//! ```text
//! cargo run --release --example paper                      # grid → tables, CSV, SVG in out/paper
//! cargo run --release --example paper -- --system s1 --workload w2 --procs 200 \
//!     --policy conservative-hard --seed 3 --json            # one run, one JSON object
//! cargo run --release --example paper -- --sweep           # remote penalty × migration cost
//! cargo run --release --example paper -- --window-sweep    # arrival window 250 ms … 4 s
//! cargo run --release --example paper -- --reproduction --out crates/sim   # REPRODUCTION.md
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use zonal_policy::{
    ConfigField, Filters, ImbalanceRule, LinuxEra, Mechanism, NumaBalancing, OriginRule,
    PlacementMode, PolicyConfig, PolicyName,
};

use zonal_sim::experiment::{
    self, has_random_arrival, paper_procs, paper_workload_windowed, Job, Summary, System,
    WorkloadId,
};
use zonal_sim::paper;
use zonal_sim::report::{self, Row};
use zonal_sim::{CostModel, CostPreset, OriginAt};

use zonal_examples::cli;

mod ablation;
mod calibration;
mod deviations;
mod hops;
mod plot;
mod render;
mod reproduction;
mod sensitivity;
mod table1;
mod table2;
mod unrestricted;
mod verdict;

use cli::Exit;

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(
    name = "paper",
    about = "Reproduce Mehta & Kanungo's Tables 1-5 on the zonal-sim NUMA simulator",
    after_help = format!("Policies (--policy, --policies):\n{}", PolicyName::help_lines())
)]
struct Args {
    /// One run: the system (s1, s2, s3, 8-4-6, 8-2-3), or a topology variant (s1-alt: S1's
    /// workloads on other distances, zonal-topology's presets docs).
    #[arg(long)]
    system: Option<String>,
    /// One run: the workload (w1, w2, w3).
    #[arg(long)]
    workload: Option<String>,
    /// One run: the number of processes.
    #[arg(long)]
    procs: Option<usize>,
    /// One run: the policy (default linux).
    #[arg(long)]
    policy: Option<String>,
    /// One run: the seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// One run: print one JSON object.
    #[arg(long)]
    json: bool,
    /// One run: print the per-process trace (inside the JSON with --json).
    #[arg(long)]
    trace: bool,
    /// Origin rule of the conservative policies: strict, no-farther, off.
    #[arg(long)]
    origin: Option<String>,
    /// Age limit of the conservative policies.
    #[arg(long)]
    age_limit: Option<u32>,
    /// The kernel the Linux walk imitates (linux, the conservative policies, thread-aware):
    /// modern or 2.6 (the paper's kernel).
    #[arg(long, default_value = "modern")]
    linux_era: String,
    /// How the 2.6 era finds an imbalance: kernel (2.6.18's find_busiest_group arithmetic)
    /// or threshold (the paper's description: past the imbalance threshold, move toward the
    /// domain average, at least one task). threshold needs --linux-era 2.6. Passed to every
    /// policy on the Linux walk.
    #[arg(long, default_value = "kernel")]
    imbalance_rule: String,
    /// Where the conservative filter applies: zone (fork placement and new-idle balancing
    /// stay inside the zone too) or paper (only the periodic balancer and stealing are
    /// restricted; placement and new-idle balancing are linux's, the paper's "usual
    /// manner"). Passed to the conservative policies as --origin is. Default zone, except
    /// with --reproduction, whose headline is the paper's placement (default paper): there
    /// it picks the mode of the per-variant tables; the report shows both modes' gains.
    #[arg(long)]
    placement: Option<String>,
    /// Where a process's origin is: parent (the node it forks from) or placement.
    #[arg(long, default_value = "parent")]
    origin_at: String,
    /// Multiplies the remote-access penalty.
    #[arg(long, default_value_t = 1.0)]
    remote_scale: f64,
    /// Multiplies the migration costs.
    #[arg(long, default_value_t = 1.0)]
    migration_scale: f64,
    /// Multiplies the cost of a balancing attempt (its fixed part and its cost per CPU
    /// scanned).
    #[arg(long, default_value_t = 1.0)]
    attempt_scale: f64,
    /// Grid: output directory.
    #[arg(long, default_value = "out/paper")]
    out: PathBuf,
    /// Grid: seeds per configuration.
    #[arg(long, default_value_t = 5)]
    seeds: u64,
    /// Grid: worker threads (default: available parallelism).
    #[arg(long)]
    threads: Option<usize>,
    /// Grid: comma-separated policies (default: every policy that builds).
    #[arg(long)]
    policies: Option<String>,
    /// Run the sensitivity sweep instead of the grid.
    #[arg(long)]
    sweep: bool,
    /// Linux's automatic NUMA balancing (kernel.numa_balancing) for the modern Linux
    /// baselines (linux, thread-aware): on or off. The grid and the sweeps turn it on for
    /// those policies only; a single run of another policy, or --linux-era 2.6, is refused.
    #[arg(long, default_value = "off")]
    numa_balancing: String,
    /// NUMA balancing's numa_balancing_scan_delay_ms (default 1000: the kernel's); needs
    /// --numa-balancing on.
    #[arg(long)]
    numa_scan_delay_ms: Option<u32>,
    /// The cost model: paper (SLIT ratios as latencies) or hardware (SLIT ratios compressed
    /// so the farthest level costs 2x, as measured machines do).
    #[arg(long, default_value = "paper")]
    cost: String,
    /// The random-arrival window, ms (default 1000), for the grid, a single run and --sweep.
    #[arg(long)]
    arrival_window_ms: Option<u64>,
    /// Run the arrival-window sweep: linux vs conservative-hard and conservative-soft at
    /// the random-arrival points, windows 250, 500, 1000, 2000, 4000 ms.
    #[arg(long)]
    window_sweep: bool,
    /// Write the reproduction report: the grid, Table 1 and Table 2 (both origin modes) and
    /// the arrival-window sweep for both Linux eras and both cost models, into
    /// DIR/REPRODUCTION.md and DIR/reproduction/*.svg (DIR = --out).
    #[arg(long)]
    reproduction: bool,
    /// Fit the 2.6 cost model's two fitted constants on Table 1's fit rows (0, 2, 4, 6, 8)
    /// over a fixed grid; prints every point and the chosen one's rows (`table1.rs`).
    #[arg(long)]
    fit_table1: bool,
}

fn main() -> ExitCode {
    let (args, matches) = cli::parse::<Args>();
    cli::finish(
        "paper",
        check_numbers(&args)
            .and_then(|()| check_modes(&args, &matches))
            .and_then(|()| run(&args)),
    )
}

/// Flags that do not apply to the mode are refused, not ignored: a single run (`--system`,
/// `--workload`, `--procs`), the sensitivity sweep (`--sweep`), or the grid (neither).
fn check_modes(args: &Args, matches: &clap::ArgMatches) -> cli::Result {
    let single_run = args.system.is_some() || args.workload.is_some() || args.procs.is_some();
    let (mode, refused): (&str, &[&str]) = if single_run {
        (
            "a single run (--system, --workload, --procs)",
            &[
                "policies",
                "seeds",
                "out",
                "threads",
                "sweep",
                "window_sweep",
                "reproduction",
            ],
        )
    } else if args.reproduction {
        (
            "--reproduction (it runs both Linux eras, both cost models and its own cost scales \
             itself)",
            &[
                "json",
                "trace",
                "seed",
                "policy",
                "policies",
                "linux_era",
                "imbalance_rule",
                "cost",
                "origin_at",
                "remote_scale",
                "migration_scale",
                "attempt_scale",
                "arrival_window_ms",
                "numa_balancing",
                "numa_scan_delay_ms",
                "sweep",
                "window_sweep",
            ],
        )
    } else if args.window_sweep {
        (
            "--window-sweep (it compares linux with the conservative policies over its own windows)",
            &[
                "json",
                "trace",
                "seed",
                "policies",
                "policy",
                "arrival_window_ms",
                "sweep",
            ],
        )
    } else if args.sweep {
        (
            "--sweep (it compares linux with --policy at fixed points and its own cost scales)",
            &[
                "json",
                "trace",
                "seed",
                "policies",
                "remote_scale",
                "migration_scale",
            ],
        )
    } else {
        if let Some(p) = &args.policy {
            return Err(Exit::Usage(format!(
                "--policy {p} needs --system, --workload and --procs (or use --policies for the grid)"
            )));
        }
        (
            "the grid (no --system, --workload or --procs)",
            &["json", "trace", "seed"],
        )
    };
    cli::refuse_given(matches, refused, mode)
}

/// The largest `--procs` of one run (the paper's largest is 400; the simulator handles
/// 100,000 processes on 1024 CPUs in about a second).
const MAX_PROCS: usize = 1_000_000;
/// The largest cost scale (`--remote-scale`, `--migration-scale`).
const MAX_SCALE: f64 = 1_000.0;
/// The most threads the grid and the sweep run on.
const MAX_THREADS: usize = 1_024;
/// The most seeds per configuration of the grid.
const MAX_SEEDS: u64 = 1_000;
/// The longest random-arrival window, ms (one hour).
const MAX_WINDOW_MS: u64 = 3_600_000;

/// Numeric flags: finite, in range, checked before anything runs or is allocated.
fn check_numbers(args: &Args) -> cli::Result {
    for (flag, v) in [
        ("--remote-scale", args.remote_scale),
        ("--migration-scale", args.migration_scale),
        ("--attempt-scale", args.attempt_scale),
    ] {
        if !v.is_finite() || !(0.0..=MAX_SCALE).contains(&v) {
            return Err(Exit::Usage(format!(
                "{flag} {v} is out of range: expected a finite number in 0..={MAX_SCALE}"
            )));
        }
    }
    if let Some(p) = args.procs {
        if !(1..=MAX_PROCS).contains(&p) {
            return Err(Exit::Usage(format!(
                "--procs {p} is out of range: expected 1..={MAX_PROCS}"
            )));
        }
    }
    if let Some(t) = args.threads {
        cli::check_range("--threads", t, 1, MAX_THREADS)?;
    }
    if let Some(w) = args.arrival_window_ms {
        if !(1..=MAX_WINDOW_MS).contains(&w) {
            return Err(Exit::Usage(format!(
                "--arrival-window-ms {w} is out of range: expected 1..={MAX_WINDOW_MS}"
            )));
        }
    }
    if let Some(d) = args.numa_scan_delay_ms {
        let max = zonal_policy::MAX_SYSCTL_MS;
        if !(1..=max).contains(&d) {
            return Err(Exit::Usage(format!(
                "--numa-scan-delay-ms {d} is out of range: expected 1..={max}"
            )));
        }
    }
    if !(1..=MAX_SEEDS).contains(&args.seeds) {
        return Err(Exit::Usage(format!(
            "--seeds {} is out of range: expected 1..={MAX_SEEDS}",
            args.seeds
        )));
    }
    Ok(())
}

fn policy_config(name: &str, args: &Args) -> cli::Result<PolicyConfig> {
    policy_config_in(name, args, linux_era(args)?)
}

/// [`policy_config`] for the Linux era `era` instead of `--linux-era`.
fn policy_config_in(name: &str, args: &Args, era: LinuxEra) -> cli::Result<PolicyConfig> {
    let mut cfg = PolicyConfig::named(name).map_err(Exit::usage)?;
    // `--origin` and `--age-limit` are the conservative policies' (`--help`): a single run
    // passes them to the policy it names (which refuses them if it takes no filter); the
    // grid and the sweeps give them to the conservative policies only.
    let conservative = cfg.name.entry().filters == Filters::Always;
    if single_run(args) || conservative {
        if let Some(o) = &args.origin {
            cfg.origin = o.parse::<OriginRule>().map_err(Exit::usage)?;
        }
        cfg.age_limit = args.age_limit;
        cfg.placement = placement(args)?;
    }
    cfg.linux_era = era;
    // A single run asks for the rule it names (a policy off the walk refuses it); the grid
    // and the sweeps give it to the policies on the walk.
    let rule = imbalance_rule(args)?;
    if single_run(args)
        || cfg
            .name
            .entry()
            .accepts
            .contains(ConfigField::ImbalanceRule)
    {
        cfg.imbalance_rule = rule;
    }
    // A single run asks for exactly what it names (another policy is refused by the
    // config); the grid and the sweeps give NUMA balancing to the Linux baselines only.
    if numa_balancing(args)? && (single_run(args) || NumaBalancing::applies_to(cfg.name)) {
        cfg.numa_balancing = true;
        cfg.numa_scan_delay_ms = args.numa_scan_delay_ms;
    }
    cfg.build().map_err(Exit::usage)?;
    Ok(cfg)
}

fn single_run(args: &Args) -> bool {
    args.system.is_some() || args.workload.is_some() || args.procs.is_some()
}

/// `--numa-balancing on|off`, refused with `--linux-era 2.6` (that kernel had none) and
/// `--numa-scan-delay-ms` without it.
fn numa_balancing(args: &Args) -> cli::Result<bool> {
    let on = match args.numa_balancing.as_str() {
        "on" => true,
        "off" => false,
        other => {
            return Err(Exit::Usage(format!(
                "unknown --numa-balancing {other:?}; valid: on, off"
            )))
        }
    };
    if on && linux_era(args)? == LinuxEra::V2_6 {
        return Err(Exit::Usage(
            "--numa-balancing on cannot be combined with --linux-era 2.6: the 2.6 kernel had \
             no automatic NUMA balancing (it arrived in Linux 3.8)"
                .into(),
        ));
    }
    if let (false, Some(d)) = (on, args.numa_scan_delay_ms) {
        return Err(Exit::Usage(format!(
            "--numa-scan-delay-ms {d} needs --numa-balancing on"
        )));
    }
    Ok(on)
}

fn cost_preset(args: &Args) -> cli::Result<CostPreset> {
    args.cost
        .parse::<CostPreset>()
        .map_err(|e| Exit::Usage(format!("--cost: {e}")))
}

/// The random-arrival window, ms.
fn window_ms(args: &Args) -> u64 {
    args.arrival_window_ms
        .unwrap_or(experiment::RANDOM_WINDOW_MS)
}

fn linux_era(args: &Args) -> cli::Result<LinuxEra> {
    args.linux_era.parse::<LinuxEra>().map_err(Exit::usage)
}

/// `--imbalance-rule kernel|threshold`.
fn imbalance_rule(args: &Args) -> cli::Result<ImbalanceRule> {
    args.imbalance_rule
        .parse::<ImbalanceRule>()
        .map_err(Exit::usage)
}

/// `cfg` with the 2.6 era's imbalance rule `rule` where its policy reads the rule (the
/// policies on the Linux walk); unchanged otherwise.
fn with_rule(cfg: PolicyConfig, rule: ImbalanceRule) -> PolicyConfig {
    if cfg
        .name
        .entry()
        .accepts
        .contains(ConfigField::ImbalanceRule)
    {
        PolicyConfig {
            imbalance_rule: rule,
            ..cfg
        }
    } else {
        cfg
    }
}

/// `--placement zone|paper`; without it `zone`, or `paper` for `--reproduction` (its
/// headline is the paper's placement, the zone an extension).
fn placement(args: &Args) -> cli::Result<PlacementMode> {
    match &args.placement {
        Some(p) => p.parse::<PlacementMode>().map_err(Exit::usage),
        None if args.reproduction => Ok(PlacementMode::Paper),
        None => Ok(PlacementMode::Zone),
    }
}

fn cost(args: &Args) -> cli::Result<CostModel> {
    Ok(sensitivity::attempt_scaled(
        CostModel {
            remote_scale: args.remote_scale,
            migration_scale: args.migration_scale,
            ..cost_preset(args)?.model()
        }
        .for_linux_era(linux_era(args)? == LinuxEra::V2_6),
        args.attempt_scale,
    ))
}

fn origin_at(args: &Args) -> cli::Result<OriginAt> {
    match args.origin_at.as_str() {
        "parent" => Ok(OriginAt::Parent),
        "placement" => Ok(OriginAt::Placement),
        other => Err(Exit::Usage(format!(
            "unknown --origin-at {other:?}; valid: parent, placement"
        ))),
    }
}

/// A job of the paper's grid: `point` is (machine, workload family, processes), labelled by
/// the family's name; random arrival is over `window_ms`.
fn paper_job(
    (system, w, procs): (System, WorkloadId, usize),
    policy: PolicyConfig,
    seed: u64,
    (cost, window_ms): (CostModel, u64),
    origin_at: OriginAt,
) -> Job {
    Job {
        system,
        label: w.as_str().into(),
        workload: paper_workload_windowed(system, w, procs, window_ms),
        policy,
        seed,
        cost,
        origin_at,
    }
}

fn run(args: &Args) -> cli::Result {
    if let Some(o) = &args.origin {
        o.parse::<OriginRule>().map_err(Exit::usage)?;
    }
    origin_at(args)?;
    linux_era(args)?;
    imbalance_rule(args)?;
    placement(args)?;
    numa_balancing(args)?;
    cost_preset(args)?;
    if args.fit_table1 {
        let policy = policy_config_in("linux", args, LinuxEra::V2_6)?;
        let (points, best) =
            table1::fit(&policy, args.seeds, threads(args)).map_err(Exit::Failure)?;
        cli::out(table1::fit_report(&points, best, args.seeds))
    } else if single_run(args) {
        single(args)
    } else if args.reproduction {
        reproduce(args)
    } else if args.window_sweep {
        window_sweep(args)
    } else if args.sweep {
        sweep(args)
    } else {
        grid(args)
    }
}

fn single(args: &Args) -> cli::Result {
    let need = |what: &str| Exit::Usage(format!("a single run needs --{what}"));
    let name = args.system.as_deref().ok_or_else(|| need("system"))?;
    // A topology variant (`s1-alt`) runs its paper system's workloads on its own distances.
    let variant = table2::variant_system(name);
    let system: System = match &variant {
        Some((s, _)) => *s,
        None => name.parse().map_err(Exit::usage)?,
    };
    let w: WorkloadId = args
        .workload
        .as_deref()
        .ok_or_else(|| need("workload"))?
        .parse()
        .map_err(Exit::usage)?;
    let procs = args.procs.ok_or_else(|| need("procs"))?;
    let policy = policy_config(args.policy.as_deref().unwrap_or("linux"), args)?;
    let job = paper_job(
        (system, w, procs),
        policy,
        args.seed,
        (cost(args)?, window_ms(args)),
        origin_at(args)?,
    );
    let r = match &variant {
        Some((_, topo)) => experiment::run_on(topo, &job, args.trace),
        None => experiment::run(&job, args.trace),
    }
    .map_err(Exit::usage)?;
    let mut v = report::json(&job, &r.stats);
    if variant.is_some() {
        v["topology"] = name.to_ascii_lowercase().into();
    }
    if args.json {
        if let Some(t) = &r.trace {
            v["trace"] = t.clone().into();
        }
        cli::out(format!("{v}\n"))?;
    } else {
        cli::out(format!("{v:#}\n"))?;
        cli::out(far_share_line(&r.stats))?;
        cli::out(exec_share_line(&r.stats, job.origin_at))?;
        if let Some(t) = &r.trace {
            cli::out(t)?;
        }
    }
    if r.stats.finished < procs {
        // A run that cannot finish its work is a failure (exit 1), not a result.
        return Err(Exit::Failure(format!(
            "only {} of {procs} processes finished within the simulated time limit",
            r.stats.finished
        )));
    }
    Ok(())
}

/// The human output's line on remote execution: the share of run time at the two farthest
/// levels from the origin (levels V–VI on the paper's six-level machines).
fn far_share_line(s: &zonal_sim::RunStats) -> String {
    // Levels print as the paper numbers them (`Level`'s Display: I, II, …).
    let level = |i: usize| zonal_topology::Level(u8::try_from(i).unwrap_or(u8::MAX));
    let m = s.run_time_by_level.len();
    let levels = match m {
        0 => "none".to_owned(),
        1 => level(0).to_string(),
        _ => format!("{}–{}", level(m - 2), level(m - 1)),
    };
    format!(
        "run time at levels {levels} (the two farthest from the origin): {:.1}%\n",
        s.far_run_share_pct(2)
    )
}

/// The human output's Table-2-style row: processes by the level (relative to their origin,
/// under the run's `--origin-at` mode) they ran on most, count and percent of processes
/// that ran.
fn exec_share_line(s: &zonal_sim::RunStats, origin_at: OriginAt) -> String {
    // As `--origin-at` spells it (`OriginAt`'s kebab-case serde name).
    let mode = serde_json::to_value(origin_at)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let total: u64 = s.exec_by_level.iter().sum();
    let cells: Vec<String> = s
        .exec_by_level
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let level = zonal_topology::Level(u8::try_from(i).unwrap_or(u8::MAX));
            let pct = if total == 0 {
                0.0
            } else {
                100.0 * n as f64 / total as f64
            };
            format!("{level} {n} ({pct:.1}%)")
        })
        .collect();
    format!(
        "processes by level run on most (Table 2, origin at {mode}): {}\n",
        cells.join(" | ")
    )
}

fn policies(args: &Args) -> cli::Result<Vec<String>> {
    match &args.policies {
        Some(list) => list
            .split(',')
            .map(|p| policy_config(p.trim(), args).map(|c| c.name.to_string()))
            .collect(),
        None => Ok(PolicyName::all()
            .filter(|n| PolicyConfig::new(*n).build().is_ok())
            .map(|n| n.to_string())
            .collect()),
    }
}

/// Runs the jobs on the grid's threads behind a progress bar.
fn run_with_progress(jobs: &[Job], args: &Args) -> cli::Result<Vec<zonal_sim::RunResult>> {
    let pb = progress_bar(jobs.len());
    let results = experiment::run_all(jobs, threads(args), &|| pb.inc(1)).map_err(Exit::usage)?;
    pb.finish_and_clear();
    Ok(results)
}

fn progress_bar(n: usize) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(n as u64);
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} runs")
    {
        pb.set_style(style);
    }
    pb
}

fn threads(args: &Args) -> usize {
    args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(std::num::NonZero::get)
            .unwrap_or(1)
    })
}

fn grid(args: &Args) -> cli::Result {
    prepare_out(&args.out)?;
    let start = Instant::now();
    let policies = policies(args)?;
    let (cost, origin_at) = (cost(args)?, origin_at(args)?);
    let cfgs = policies
        .iter()
        .map(|p| policy_config(p, args))
        .collect::<cli::Result<Vec<_>>>()?;
    let jobs = grid_jobs(&cfgs, args.seeds, (cost, window_ms(args)), origin_at);
    let results = run_with_progress(&jobs, args)?;
    let rows = Row::of_runs(jobs, results);
    let mut md = format!(
        "# zonal-sim: the paper's grid\n\n{} runs, {} seeds, policies: {}; origin at {}{}; cost model: {} × (remote {}, migration {}{}); random arrival over {} ms; Linux NUMA balancing {}.\n\n",
        rows.len(),
        args.seeds,
        policies.join(", "),
        args.origin_at,
        if args.linux_era == "modern" {
            String::new()
        } else {
            format!("; Linux era {}", args.linux_era)
        } + if placement(args)? == PlacementMode::Zone {
            ""
        } else {
            "; placement paper (the conservative policies' fork placement and new-idle balancing are linux's)"
        },
        args.cost,
        args.remote_scale,
        args.migration_scale,
        if args.attempt_scale == 1.0 {
            String::new()
        } else {
            format!(", attempt {}", args.attempt_scale)
        },
        window_ms(args),
        args.numa_balancing
    );
    md.push_str(&render::headline(&rows, &policies));
    md.push('\n');
    md.push_str(&render::table1(&rows));
    md.push('\n');
    md.push_str(&render::table2(&rows, &policies, &args.origin_at));
    md.push('\n');
    md.push_str(&render::tat_tables(&rows));
    md.push_str(&render::all_policies(&rows, &policies));
    write_file(&args.out, "tables.md", &md)?;
    write_file(&args.out, "runs.csv", &render::csv(&rows))?;
    plot::tat_plots(&rows, &policies, &args.out).map_err(Exit::Failure)?;
    cli::out(&md)?;
    eprintln!(
        "{} runs in {:.1} s; wrote {}/tables.md, runs.csv, tat-s1.svg, tat-s2.svg, tat-s3.svg",
        rows.len(),
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    all_finished(rows.iter().map(|r| &r.stats))
}

/// The grid's jobs: every policy of `cfgs` at every point of Tables 3–5 and seed, and, when
/// `cfgs` has `linux`, Table 1's rows under that configuration.
fn grid_jobs(
    cfgs: &[PolicyConfig],
    seeds: u64,
    (cost, window_ms): (CostModel, u64),
    origin_at: OriginAt,
) -> Vec<Job> {
    let mut jobs = grid_only_jobs(cfgs, 1..=seeds, (cost, window_ms), origin_at);
    if let Some(linux) = cfgs.iter().find(|c| c.name.as_str() == "linux") {
        for (i, r) in paper::TABLE1.iter().enumerate() {
            for seed in 1..=seeds {
                jobs.push(Job {
                    system: r.system,
                    label: render::table1_label(i),
                    workload: r.workload(window_ms),
                    policy: linux.clone(),
                    seed,
                    cost,
                    origin_at,
                });
            }
        }
    }
    jobs
}

/// `--reproduction`: every variant (Linux era × cost model) of the grid, Table 2's point
/// with origins at placement, the conservative policies in the other placement mode, the
/// ablation and the sensitivity sweep under 2.6 (`ablation.rs`, `sensitivity.rs`), and the
/// arrival-window sweep per era, into `DIR/REPRODUCTION.md` (`reproduction.rs`).
fn reproduce(args: &Args) -> cli::Result {
    prepare_out(&args.out)?;
    let start = Instant::now();
    let policies = policies(args)?;
    let main_mode = placement(args)?;
    let other_mode = if main_mode == PlacementMode::Zone {
        PlacementMode::Paper
    } else {
        PlacementMode::Zone
    };
    let ablation_seeds = args.seeds.min(ABLATION_SEEDS);
    let mut variants = Vec::new();
    let variant = |era_name, era, rule, preset: CostPreset| {
        (
            era,
            preset,
            reproduction::Variant {
                era: era_name,
                rule,
                cost_name: preset.as_str(),
                cost: preset.model().for_linux_era(era == LinuxEra::V2_6),
            },
        )
    };
    for (era_name, era) in [("modern", LinuxEra::Modern), ("2.6", LinuxEra::V2_6)] {
        for preset in [CostPreset::Paper, CostPreset::Hardware] {
            variants.push(variant(era_name, era, ImbalanceRule::Kernel, preset));
        }
    }
    // The 2.6 baseline under the paper's threshold rule, with the paper's cost model: the
    // grid, Table 1 and Table 2's point (no ablation or sweep).
    variants.push(variant(
        "2.6",
        LinuxEra::V2_6,
        ImbalanceRule::Threshold,
        CostPreset::Paper,
    ));
    let mut all_jobs = Vec::new();
    // Per variant: where its grid, Table 2's placement runs, the other mode, the ablation
    // and the sweep's settings start, and how many jobs each has.
    let mut spans = Vec::new();
    for (era, preset, v) in &variants {
        let cfgs = policies
            .iter()
            .map(|p| Ok(with_rule(policy_config_in(p, args, *era)?, v.rule)))
            .collect::<cli::Result<Vec<_>>>()?;
        let grid = grid_jobs(
            &cfgs,
            args.seeds,
            (v.cost, experiment::RANDOM_WINDOW_MS),
            OriginAt::Parent,
        );
        let placement = reproduction::table2_placement_jobs(&grid);
        // The conservative policies in the other placement mode, over the grid only.
        let others: Vec<PolicyConfig> = cfgs
            .iter()
            .filter(|c| c.name.entry().filters == Filters::Always)
            .map(|c| PolicyConfig {
                placement: other_mode,
                ..c.clone()
            })
            .collect();
        let other = grid_only_jobs(
            &others,
            1..=args.seeds,
            (v.cost, experiment::RANDOM_WINDOW_MS),
            OriginAt::Parent,
        );
        // The ablation, with the paper's cost model: linux with one mechanism on.
        let kernel_paper = *preset == CostPreset::Paper && v.rule == ImbalanceRule::Kernel;
        let ablation = if kernel_paper {
            let linux = policy_config_in("linux", args, *era)?;
            let cfgs: Vec<PolicyConfig> = Mechanism::ALL
                .into_iter()
                .map(|m| linux.clone().with_mechanism(m))
                .collect();
            grid_only_jobs(
                &cfgs,
                1..=ablation_seeds,
                (v.cost, experiment::RANDOM_WINDOW_MS),
                OriginAt::Parent,
            )
        } else {
            Vec::new()
        };
        // The sensitivity sweep: 2.6, the paper's cost model.
        let mut sweep = Vec::new();
        if *era == LinuxEra::V2_6 && kernel_paper {
            let mut pols = vec![policy_config_in("linux", args, *era)?];
            for c in sensitivity::CONTENDERS {
                pols.push(policy_config_in(c, args, *era)?);
            }
            for (knob, scale) in sensitivity::settings() {
                let cost = knob.map_or(v.cost, |k| k.apply(v.cost, scale));
                let mut jobs = Vec::new();
                for &point in &sensitivity::POINTS {
                    for p in &pols {
                        for seed in 1..=args.seeds {
                            jobs.push(paper_job(
                                point,
                                p.clone(),
                                seed,
                                (cost, experiment::RANDOM_WINDOW_MS),
                                OriginAt::Parent,
                            ));
                        }
                    }
                }
                sweep.push(jobs);
            }
        }
        // Free balancing (attempt cost ×0): linux and the conservative policies with the
        // paper's placement over the grid, for the verdict's overhead claim.
        let free_cfgs: Vec<PolicyConfig> = cfgs
            .iter()
            .filter(|c| c.name.as_str() == "linux" || verdict::POLICIES.contains(&c.name.as_str()))
            .map(|c| {
                if c.name.entry().filters == Filters::Always {
                    PolicyConfig {
                        placement: PlacementMode::Paper,
                        ..c.clone()
                    }
                } else {
                    c.clone()
                }
            })
            .collect();
        let free = grid_only_jobs(
            &free_cfgs,
            1..=args.seeds,
            (
                sensitivity::attempt_scaled(v.cost, 0.0),
                experiment::RANDOM_WINDOW_MS,
            ),
            OriginAt::Parent,
        );
        let at = all_jobs.len();
        let sweep_lens: Vec<usize> = sweep.iter().map(Vec::len).collect();
        spans.push((
            at,
            [
                grid.len(),
                placement.len(),
                other.len(),
                ablation.len(),
                free.len(),
            ],
            sweep_lens,
        ));
        all_jobs.extend(grid);
        all_jobs.extend(placement);
        all_jobs.extend(other);
        all_jobs.extend(ablation);
        all_jobs.extend(free);
        all_jobs.extend(sweep.into_iter().flatten());
    }
    let results = run_with_progress(&all_jobs, args)?;
    all_finished(results.iter().map(|r| &r.stats))?;
    let mut stats: Vec<Option<zonal_sim::RunStats>> =
        results.into_iter().map(|r| Some(r.stats)).collect();
    let mut take = |from: usize, n: usize| -> Vec<Row> {
        (from..from + n)
            .map(|i| Row {
                job: all_jobs[i].clone(),
                stats: stats[i].take().unwrap_or_default(),
            })
            .collect()
    };
    let mut runs = Vec::new();
    for ((_, _, v), (at, [g, p, o, a, f], sweep_lens)) in variants.iter().zip(&spans) {
        let mut at = *at;
        let mut next = |n: usize| {
            let from = at;
            at += n;
            from
        };
        let parent = take(next(*g), *g);
        let placement = take(next(*p), *p);
        let other_mode_rows = take(next(*o), *o);
        let ablation = take(next(*a), *a);
        let free_balancing = take(next(*f), *f);
        let sweep = sweep_lens.iter().map(|&n| take(next(n), n)).collect();
        runs.push(reproduction::VariantRuns {
            variant: v.clone(),
            parent,
            placement,
            main_mode,
            other_mode: other_mode_rows,
            ablation,
            ablation_seeds,
            sweep,
            free_balancing,
            calibration: None,
        });
    }
    // Calibration of the 2.6 baselines with the paper's cost model (`calibration.rs`),
    // before their gains are read against the paper's.
    for v in &mut runs {
        if v.variant.era != "2.6" || v.variant.cost_name != "paper" {
            continue;
        }
        let rule = v.variant.rule;
        let linux = with_rule(policy_config_in("linux", args, LinuxEra::V2_6)?, rule);
        let contenders = calibration::CONTENDERS
            .iter()
            .map(|p| {
                Ok(PolicyConfig {
                    placement: PlacementMode::Paper,
                    ..with_rule(policy_config_in(p, args, LinuxEra::V2_6)?, rule)
                })
            })
            .collect::<cli::Result<Vec<_>>>()?;
        let cal = calibration::run(
            &v.variant.slug(),
            &linux,
            &contenders,
            v.variant.cost,
            &v.parent,
            args.seeds,
            threads(args),
        )
        .map_err(Exit::Failure)?;
        all_finished(cal.rows.iter().map(|r| &r.stats))?;
        v.calibration = Some(cal);
    }
    let mut extra = Vec::new();
    for (era_name, era) in [("modern", LinuxEra::Modern), ("2.6", LinuxEra::V2_6)] {
        let (md, sweep_stats) = window_sweep_table(
            args,
            era,
            CostPreset::Paper
                .model()
                .for_linux_era(era == LinuxEra::V2_6),
            "paper",
        )?;
        all_finished(sweep_stats.iter())?;
        extra.push((
            format!("Arrival-window sweep, Linux era {era_name}, the paper's cost model"),
            md,
        ));
    }
    // Table 2 by the paper's measure (`table2.rs`), first among the extra sections.
    let t2 = table2::run(args.seeds, &|p, era| {
        policy_config_in(p, args, era).map_err(|e| match e {
            Exit::Usage(m) | Exit::Failure(m) => m,
            Exit::Closed => "stdout closed".to_owned(),
        })
    })
    .map_err(Exit::Failure)?;
    table2::write_json(&args.out, &t2).map_err(Exit::Failure)?;
    extra.insert(0, (table2::TITLE.to_string(), table2::markdown(&t2)));
    // Per-process hops at Table 2's point (`hops.rs`), after it.
    let hops = hops::run(args.seeds, threads(args), &|p, era| {
        policy_config_in(p, args, era).map_err(|e| match e {
            Exit::Usage(m) | Exit::Failure(m) => m,
            Exit::Closed => "stdout closed".to_owned(),
        })
    })
    .map_err(Exit::Failure)?;
    extra.insert(
        1,
        (
            "Per-process hops beside the paper's traces".to_string(),
            hops::markdown(&hops, args.seeds),
        ),
    );
    let command = format!(
        "cargo run --release --example paper -- --reproduction --seeds {}{} --out {}",
        args.seeds,
        if main_mode == PlacementMode::Paper {
            String::new()
        } else {
            format!(" --placement {main_mode}")
        },
        args.out.display()
    );
    let md = reproduction::write(&args.out, &runs, &policies, args.seeds, &command, &extra)
        .map_err(Exit::Failure)?;
    cli::out(&md)?;
    eprintln!(
        "{} runs (and the calibration's, the window sweeps' and Table 2's) in {:.1} s; wrote \
         {}/REPRODUCTION.md and {}/reproduction/",
        all_jobs.len(),
        start.elapsed().as_secs_f64(),
        args.out.display(),
        args.out.display()
    );
    Ok(())
}

/// The most seeds of the reproduction's ablation (the report says how many ran; more than
/// the grid's default would only slow the report down).
const ABLATION_SEEDS: u64 = 5;

/// Every policy of `cfgs` at every point of Tables 3–5 for `seeds`: no Table 1 rows.
fn grid_only_jobs(
    cfgs: &[PolicyConfig],
    seeds: std::ops::RangeInclusive<u64>,
    (cost, window_ms): (CostModel, u64),
    origin_at: OriginAt,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    for cfg in cfgs {
        for system in [System::S1, System::S2, System::S3] {
            for w in WorkloadId::ALL {
                for &procs in paper_procs(system) {
                    for seed in seeds.clone() {
                        jobs.push(paper_job(
                            (system, w, procs),
                            cfg.clone(),
                            seed,
                            (cost, window_ms),
                            origin_at,
                        ));
                    }
                }
            }
        }
    }
    jobs
}

/// Remote-penalty scales of the sweep.
const SWEEP_REMOTE: [f64; 5] = [0.0, 0.25, 0.5, 1.0, 2.0];
/// Migration-cost scales of the sweep.
const SWEEP_MIGRATION: [f64; 4] = [0.0, 1.0, 10.0, 100.0];

fn sweep(args: &Args) -> cli::Result {
    prepare_out(&args.out)?;
    let start = Instant::now();
    let points = [
        (System::S1, WorkloadId::W2, 200),
        (System::S2, WorkloadId::W3, 200),
        (System::S3, WorkloadId::W1, 300),
    ];
    let contender = args.policy.as_deref().unwrap_or("conservative-hard");
    let pols = [
        policy_config("linux", args)?,
        policy_config(contender, args)?,
    ];
    let origin_at = origin_at(args)?;
    let mut jobs = Vec::new();
    for &(system, w, procs) in &points {
        for &rs in &SWEEP_REMOTE {
            for &ms in &SWEEP_MIGRATION {
                for p in &pols {
                    for seed in 1..=args.seeds {
                        let cost = sensitivity::attempt_scaled(
                            CostModel {
                                remote_scale: rs,
                                migration_scale: ms,
                                ..cost_preset(args)?.model()
                            }
                            .for_linux_era(linux_era(args)? == LinuxEra::V2_6),
                            args.attempt_scale,
                        );
                        jobs.push(paper_job(
                            (system, w, procs),
                            p.clone(),
                            seed,
                            (cost, window_ms(args)),
                            origin_at,
                        ));
                    }
                }
            }
        }
    }
    let results = run_with_progress(&jobs, args)?;
    let mut md = format!(
        "## Sensitivity: gain % of {contender} over linux (mean ± 95% CI over {} seeds)\n\nRows: remote-access penalty scale (0 = no NUMA penalty, 1 = SLIT ratio × memory-bound share). Columns: migration-cost scale (× direct 5 µs + cache refill 100 µs).{}\n",
        args.seeds,
        if args.attempt_scale == 1.0 {
            String::new()
        } else {
            format!(" Balancing-attempt cost × {}.", args.attempt_scale)
        }
    );
    let tat = |i: usize| results[i].stats.avg_tat_us;
    let mut i = 0;
    for &(system, w, procs) in &points {
        md.push_str(&format!(
            "\n### {} {} {procs}\n\n| remote \\ migration |{}\n|---|{}\n",
            system.as_str().to_uppercase(),
            w.as_str().to_uppercase(),
            SWEEP_MIGRATION
                .iter()
                .map(|m| format!(" ×{m} |"))
                .collect::<String>(),
            "---|".repeat(SWEEP_MIGRATION.len())
        ));
        for &rs in &SWEEP_REMOTE {
            md.push_str(&format!("| ×{rs} |"));
            for _ in &SWEEP_MIGRATION {
                let n = args.seeds as usize;
                let gains: Vec<f64> = (0..n)
                    .map(|k| 100.0 * (tat(i + k) - tat(i + n + k)) / tat(i + k))
                    .collect();
                let s = Summary::of(&gains);
                md.push_str(&format!(" {:.2} ± {:.2} |", s.mean, s.ci95));
                i += 2 * n;
            }
            md.push('\n');
        }
    }
    write_file(&args.out, "sweep.md", &md)?;
    cli::out(&md)?;
    eprintln!(
        "{} runs in {:.1} s; wrote {}/sweep.md",
        jobs.len(),
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    all_finished(results.iter().map(|r| &r.stats))
}

/// Random-arrival windows of the arrival-window sweep, ms.
const SWEEP_WINDOWS_MS: [u64; 5] = [250, 500, 1_000, 2_000, 4_000];
/// The policies the arrival-window sweep compares with linux.
const WINDOW_SWEEP_CONTENDERS: [&str; 2] = ["conservative-hard", "conservative-soft"];

/// The arrival-window sweep: at every random-arrival point of the grid (S1 W2–W3, S2 W1,
/// S3 W1 and W3, every process count), linux and the conservative policies over each of
/// [`SWEEP_WINDOWS_MS`]; per window and contender, the mean and 95% interval of the
/// per-(point, seed) gain over linux (paired by seed).
fn window_sweep(args: &Args) -> cli::Result {
    prepare_out(&args.out)?;
    let start = Instant::now();
    let (md, stats) = window_sweep_table(args, linux_era(args)?, cost(args)?, &args.cost)?;
    write_file(&args.out, "window-sweep.md", &md)?;
    cli::out(&md)?;
    eprintln!(
        "{} runs in {:.1} s; wrote {}/window-sweep.md",
        stats.len(),
        start.elapsed().as_secs_f64(),
        args.out.display()
    );
    all_finished(stats.iter())
}

/// The sweep's table (markdown) and every run's statistics, for the Linux era `era` and
/// the cost model `cost` (named `cost_name` in the caption).
fn window_sweep_table(
    args: &Args,
    era: LinuxEra,
    cost: CostModel,
    cost_name: &str,
) -> cli::Result<(String, Vec<zonal_sim::RunStats>)> {
    let points: Vec<(System, WorkloadId, usize)> = [System::S1, System::S2, System::S3]
        .into_iter()
        .flat_map(|s| WorkloadId::ALL.into_iter().map(move |w| (s, w)))
        .filter(|&(s, w)| has_random_arrival(s, w))
        .flat_map(|(s, w)| paper_procs(s).iter().map(move |&p| (s, w, p)))
        .collect();
    let mut pols = vec![policy_config_in("linux", args, era)?];
    for c in WINDOW_SWEEP_CONTENDERS {
        pols.push(policy_config_in(c, args, era)?);
    }
    let origin_at = origin_at(args)?;
    let n = args.seeds as usize;
    let mut jobs = Vec::new();
    for &window in &SWEEP_WINDOWS_MS {
        for &point in &points {
            for p in &pols {
                for seed in 1..=args.seeds {
                    jobs.push(paper_job(point, p.clone(), seed, (cost, window), origin_at));
                }
            }
        }
    }
    let results = run_with_progress(&jobs, args)?;
    let tat = |i: usize| results[i].stats.avg_tat_us;
    let mut md = format!(
        "## Arrival window: gain % over linux at the {} random-arrival points ({} seeds; mean ± 95% interval over point × seed)\n\ncost model {}, Linux NUMA balancing {}, origin at {}.\n\n| window ms | linux mean TAT ms |{}\n|---|---|{}\n",
        points.len(),
        args.seeds,
        cost_name,
        args.numa_balancing,
        args.origin_at,
        WINDOW_SWEEP_CONTENDERS
            .iter()
            .map(|c| format!(" {c} gain % |"))
            .collect::<String>(),
        "---|".repeat(WINDOW_SWEEP_CONTENDERS.len())
    );
    let per_window = points.len() * pols.len() * n;
    for (wi, &window) in SWEEP_WINDOWS_MS.iter().enumerate() {
        let base = wi * per_window;
        let mut linux_tat = Vec::new();
        let mut gains = vec![Vec::new(); WINDOW_SWEEP_CONTENDERS.len()];
        for pi in 0..points.len() {
            let at = base + pi * pols.len() * n;
            for k in 0..n {
                let l = tat(at + k);
                linux_tat.push(l / 1000.0);
                for (ci, g) in gains.iter_mut().enumerate() {
                    g.push(100.0 * (l - tat(at + (ci + 1) * n + k)) / l);
                }
            }
        }
        let l = Summary::of(&linux_tat);
        md.push_str(&format!("| {window} | {:.0} |", l.mean));
        for g in &gains {
            let s = Summary::of(g);
            md.push_str(&format!(" {:.2} ± {:.2} |", s.mean, s.ci95));
        }
        md.push('\n');
    }
    Ok((md, results.into_iter().map(|r| r.stats).collect()))
}

/// A run that could not finish its processes makes the whole command a failure (status 1),
/// reported after the outputs are written so that they can be looked at.
fn all_finished<'a>(stats: impl Iterator<Item = &'a zonal_sim::RunStats>) -> cli::Result {
    let (mut short, mut total) = (0usize, 0usize);
    for s in stats {
        total += 1;
        short += usize::from(s.finished < s.procs);
    }
    if short == 0 {
        Ok(())
    } else {
        Err(Exit::Failure(format!(
            "{short} of {total} runs did not finish all their processes within the simulated \
             time limit (their rows count only the finished ones)"
        )))
    }
}

/// Creates the output directory before a long run, so that a path that cannot be written
/// fails at once (status 1), not after the run.
fn prepare_out(dir: &Path) -> cli::Result {
    std::fs::create_dir_all(dir)
        .map_err(|e| Exit::Failure(format!("cannot create {}: {e}", dir.display())))
}

/// Writes `dir/name` (creating `dir`); a failure names the path.
fn write_file(dir: &Path, name: &str, text: &str) -> cli::Result {
    let path = dir.join(name);
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, text))
        .map_err(|e| Exit::Failure(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn the_grid_gives_origin_and_age_limit_to_the_conservative_policies_only() {
        let grid =
            Args::try_parse_from(["paper", "--age-limit", "2", "--origin", "strict"]).unwrap();
        for name in PolicyName::all() {
            let cfg = policy_config_in(name.as_str(), &grid, LinuxEra::Modern).unwrap();
            let conservative = name.entry().filters == Filters::Always;
            assert_eq!(cfg.age_limit.is_some(), conservative, "{name}");
            assert_eq!(cfg.origin == OriginRule::Strict, conservative, "{name}");
        }
        // A single run passes them to the policy it names, which refuses what it does not take.
        let one = Args::try_parse_from(["paper", "--procs", "10", "--age-limit", "2"]).unwrap();
        assert!(policy_config_in("conservative-hard", &one, LinuxEra::Modern).is_ok());
        match policy_config_in("linux", &one, LinuxEra::Modern) {
            Err(Exit::Usage(msg)) => assert!(msg.contains("age_limit = 2"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_imbalance_rule_goes_to_the_walk_and_needs_the_2_6_era() {
        let grid = Args::try_parse_from(["paper", "--imbalance-rule", "threshold"]).unwrap();
        for name in PolicyName::all() {
            let on_walk = name.entry().accepts.contains(ConfigField::ImbalanceRule);
            let cfg = policy_config_in(name.as_str(), &grid, LinuxEra::V2_6).unwrap();
            assert_eq!(
                cfg.imbalance_rule == ImbalanceRule::Threshold,
                on_walk,
                "{name}"
            );
            // The modern era refuses the threshold rule, naming it (exit 2).
            if on_walk {
                match policy_config_in(name.as_str(), &grid, LinuxEra::Modern) {
                    Err(Exit::Usage(msg)) => assert!(msg.contains("imbalance_rule"), "{msg}"),
                    other => panic!("{name}: {other:?}"),
                }
            }
        }
        let default = Args::try_parse_from(["paper"]).unwrap();
        let cfg = policy_config_in("linux", &default, LinuxEra::V2_6).unwrap();
        assert_eq!(cfg.imbalance_rule, ImbalanceRule::Kernel);
        let bad = Args::try_parse_from(["paper", "--imbalance-rule", "paper"]).unwrap();
        assert!(matches!(imbalance_rule(&bad), Err(Exit::Usage(m)) if m.contains("paper")));
        // `with_rule` leaves a policy off the walk alone.
        let u = PolicyConfig::named("unrestricted").unwrap();
        assert_eq!(with_rule(u.clone(), ImbalanceRule::Threshold), u);
    }

    #[test]
    fn placement_goes_to_the_conservative_policies_and_defaults_to_zone() {
        let default = Args::try_parse_from(["paper"]).unwrap();
        let paper = Args::try_parse_from(["paper", "--placement", "paper"]).unwrap();
        for name in PolicyName::all() {
            let cfg = policy_config_in(name.as_str(), &default, LinuxEra::V2_6).unwrap();
            assert_eq!(cfg.placement, PlacementMode::Zone, "{name}");
            let cfg = policy_config_in(name.as_str(), &paper, LinuxEra::V2_6).unwrap();
            let conservative = name.entry().filters == Filters::Always;
            assert_eq!(
                cfg.placement == PlacementMode::Paper,
                conservative,
                "{name}"
            );
        }
        // A single run passes it to the policy it names, which refuses it without a filter.
        let one = Args::try_parse_from(["paper", "--procs", "10", "--placement", "paper"]).unwrap();
        assert!(policy_config_in("conservative-soft", &one, LinuxEra::Modern).is_ok());
        match policy_config_in("linux", &one, LinuxEra::Modern) {
            Err(Exit::Usage(msg)) => assert!(msg.contains("placement = \"paper\""), "{msg}"),
            other => panic!("{other:?}"),
        }
        // The reproduction's headline is the paper's placement unless told otherwise.
        let repro = Args::try_parse_from(["paper", "--reproduction"]).unwrap();
        assert_eq!(placement(&repro).unwrap(), PlacementMode::Paper);
        let repro =
            Args::try_parse_from(["paper", "--reproduction", "--placement", "zone"]).unwrap();
        assert_eq!(placement(&repro).unwrap(), PlacementMode::Zone);
        let bad = Args::try_parse_from(["paper", "--placement", "usual"]).unwrap();
        match placement(&bad) {
            Err(Exit::Usage(msg)) => assert!(msg.contains("\"usual\""), "{msg}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_reproduction_takes_placement_and_refuses_cost_scales() {
        let ok = ["paper", "--reproduction", "--placement", "paper"];
        let (args, m) = parse(&ok);
        assert!(check_modes(&args, &m).is_ok());
        let (args, m) = parse(&["paper", "--reproduction", "--imbalance-rule", "threshold"]);
        match check_modes(&args, &m) {
            Err(Exit::Usage(msg)) => assert!(msg.contains("--imbalance-rule"), "{msg}"),
            other => panic!("{other:?}"),
        }
        for flag in ["--attempt-scale", "--remote-scale", "--migration-scale"] {
            let (args, m) = parse(&["paper", "--reproduction", flag, "2"]);
            match check_modes(&args, &m) {
                Err(Exit::Usage(msg)) => assert!(msg.contains(flag), "{msg}"),
                other => panic!("{flag}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_attempt_scale_is_checked_and_scales_the_attempt_cost() {
        let (args, _) = parse(&["paper", "--attempt-scale", "10"]);
        let base = CostPreset::Paper.model();
        let c = cost(&args).unwrap();
        assert_eq!(c.lb_attempt_base_ns, 10 * base.lb_attempt_base_ns);
        assert_eq!(c.lb_scan_per_cpu_ns, 10 * base.lb_scan_per_cpu_ns);
        let (default, _) = parse(&["paper"]);
        assert_eq!(cost(&default).unwrap(), base);
        for bad in ["-1", "NaN", "1001"] {
            let flag = format!("--attempt-scale={bad}");
            let (args, _) = parse(&["paper", &flag]);
            match check_numbers(&args) {
                Err(Exit::Usage(msg)) => assert!(msg.contains("--attempt-scale"), "{msg}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_ablation_and_other_mode_jobs_cover_the_grid() {
        let linux = PolicyConfig::new(PolicyName::LINUX);
        let cfgs: Vec<PolicyConfig> = Mechanism::ALL
            .into_iter()
            .map(|m| linux.clone().with_mechanism(m))
            .collect();
        let jobs = grid_only_jobs(
            &cfgs,
            1..=2,
            (CostModel::default(), experiment::RANDOM_WINDOW_MS),
            OriginAt::Parent,
        );
        let points: usize = [System::S1, System::S2, System::S3]
            .into_iter()
            .map(|s| paper_procs(s).len() * WorkloadId::ALL.len())
            .sum();
        assert_eq!(jobs.len(), Mechanism::ALL.len() * points * 2);
        assert!(jobs.iter().all(|j| j.policy.mechanisms().count() == 1));
        assert!(jobs.iter().all(|j| j.policy.build().is_ok()));
    }

    fn parse(argv: &[&str]) -> (Args, clap::ArgMatches) {
        use clap::{CommandFactory, FromArgMatches};
        let m = Args::command().try_get_matches_from(argv).unwrap();
        (Args::from_arg_matches(&m).unwrap(), m)
    }

    #[test]
    fn the_far_share_line_names_the_two_farthest_levels() {
        let s = zonal_sim::RunStats {
            run_time_by_level: vec![50, 10, 10, 10, 15, 5],
            ..Default::default()
        };
        assert_eq!(
            far_share_line(&s),
            "run time at levels V–VI (the two farthest from the origin): 20.0%\n"
        );
    }

    #[test]
    fn the_exec_share_line_prints_a_table2_row() {
        let s = zonal_sim::RunStats {
            exec_by_level: vec![100, 50, 0, 25, 20, 5],
            ..Default::default()
        };
        assert_eq!(
            exec_share_line(&s, OriginAt::Placement),
            "processes by level run on most (Table 2, origin at placement): \
             I 100 (50.0%) | II 50 (25.0%) | III 0 (0.0%) | IV 25 (12.5%) | V 20 (10.0%) | \
             VI 5 (2.5%)\n"
        );
        let empty = zonal_sim::RunStats {
            exec_by_level: vec![0, 0],
            ..Default::default()
        };
        assert_eq!(
            exec_share_line(&empty, OriginAt::Parent),
            "processes by level run on most (Table 2, origin at parent): I 0 (0.0%) | II 0 (0.0%)\n"
        );
    }

    #[test]
    fn a_run_short_of_its_processes_fails_the_command() {
        let done = zonal_sim::RunStats {
            procs: 10,
            finished: 10,
            ..Default::default()
        };
        let short = zonal_sim::RunStats {
            procs: 10,
            finished: 4,
            ..Default::default()
        };
        assert!(all_finished([&done, &done].into_iter()).is_ok());
        match all_finished([&done, &short, &short].into_iter()) {
            Err(Exit::Failure(msg)) => assert!(msg.starts_with("2 of 3 runs"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }
}
