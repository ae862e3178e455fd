//! The scaling benchmark: each workload at 1, 2, 4, 8 and 16 workers (up to the CPUs
//! present) on Zonal, rayon and tokio in one run, rounds interleaved (Zonal, rayon, tokio,
//! Zonal, …) so that all three see the same background load; medians in a table
//! (`scaling.md`), a JSON file and an SVG plot of time against workers (`scaling.svg`).
//!
//! Workloads (`workloads.rs`):
//! - `scope_100k`: one scope spawning 100,000 tiny tasks (tokio: a `JoinSet`);
//! - `outside_10k`: 10,000 `'static` spawns from a thread outside the pool, then waiting for
//!   all of them;
//! - `chain_10k`: a chain of 10,000 spawns, each task spawning the next;
//! - `fib_25`: recursive fork-join (`join`; tokio: `spawn` one branch and await it);
//! - `sum_16mi`: a parallel sum over 16 Mi `u64` (tokio: one task per chunk).
//!
//! With `--probes`, instead: the idle search's cost counted on virtual pools of 16 to
//! 1,024 workers (`probes.rs`): victim probes per wake-up burst and per fruitless round.
//!
//! ```sh
//! cargo run --release --example scaling                               # 1, 2, … ≤ CPUs
//! cargo run --release --example scaling -- --threads 1,2,4,8,16 --rounds 9 --out out/scaling
//! cargo run --release --example scaling -- --probes                   # counts, not times
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use zonal_examples::{cli, runners, workloads};

mod plot;
mod probes;

use cli::Exit;
use workloads::{Runtime, Workload, RUNTIMES, WORKLOADS};

/// Zonal, rayon and tokio at 1–16 workers on five spawning and fork-join workloads.
// Parsed with `cli::parse_as_facade`: the name `--version` prints and the `--help` header
// are the facade package's, as they were when this program was one of its examples.
#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    threads: runners::ThreadsArg,
    /// Interleaved rounds per workload and worker count (medians are reported).
    #[arg(long, default_value_t = 7)]
    rounds: usize,
    /// Only the workloads whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Leave Zonal's workers unpinned (rayon and tokio never pin).
    #[arg(long)]
    no_pin: bool,
    /// Where `scaling.md`, `scaling.json` and `scaling.svg` go (with `--probes`:
    /// `probes.md`, `probes.json`).
    #[arg(long, default_value = "out/scaling")]
    out: PathBuf,
    /// Count the idle search's victim probes per wake-up burst on virtual pools of 16, 64,
    /// 256 and 1,024 workers, instead of timing the workloads.
    #[arg(long)]
    probes: bool,
}

/// Pause before each run, so that the runtime that ran last has parked its threads.
const COOL_DOWN: std::time::Duration = std::time::Duration::from_millis(20);

/// One median.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Point {
    pub(crate) workload: &'static str,
    pub(crate) runtime: &'static str,
    pub(crate) threads: usize,
    pub(crate) median_ms: f64,
}

fn main() -> ExitCode {
    cli::finish("scaling", run())
}

fn run() -> cli::Result {
    let (args, _) = cli::parse_as_facade::<Args>();
    if args.probes {
        return run_probes(&args.out);
    }
    let (cpus, threads) = runners::plan(&args.threads, args.rounds)?;
    let workloads: Vec<&Workload> = WORKLOADS
        .iter()
        .filter(|w| args.only.as_deref().is_none_or(|f| w.name.contains(f)))
        .collect();
    if workloads.is_empty() {
        return Err(Exit::usage(format!(
            "--only {:?} matches no workload",
            args.only.unwrap_or_default()
        )));
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Exit::failure(format!("cannot create {}: {e}", args.out.display())))?;

    let mut points = Vec::new();
    for &n in &threads {
        let rts: Vec<Runtime> = RUNTIMES
            .iter()
            .map(|&kind| Runtime::new(kind, n, !args.no_pin))
            .collect::<Result<_, _>>()
            .map_err(Exit::failure)?;
        for w in &workloads {
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); rts.len()];
            // One warm-up round, then the measured ones, interleaved.
            for round in 0..=args.rounds {
                for (rt, t) in rts.iter().zip(times.iter_mut()) {
                    // Cool-down: the previous runtime's idle threads spin a while before
                    // they park; a run of a millisecond would otherwise share the CPUs
                    // with them (pinned workers cannot move away).
                    std::thread::sleep(COOL_DOWN);
                    let d = (w.run)(rt).map_err(Exit::failure)?;
                    if round > 0 {
                        t.push(d.as_secs_f64() * 1e3);
                    }
                }
            }
            for (rt, mut t) in rts.iter().zip(times) {
                t.sort_by(f64::total_cmp);
                let median_ms = t[t.len() / 2];
                eprintln!(
                    "{:>12} {:>6} {n:>3} workers: {median_ms:9.3} ms",
                    w.name,
                    rt.name()
                );
                points.push(Point {
                    workload: w.name,
                    runtime: rt.name(),
                    threads: n,
                    median_ms,
                });
            }
        }
    }

    let mut table = table(&points, &threads, &workloads, cpus, args.rounds);
    if args.no_pin {
        table = format!("Zonal's workers unpinned (--no-pin).\n\n{table}");
    }
    let write = |name: &str, text: &str| {
        let p = args.out.join(name);
        std::fs::write(&p, text)
            .map_err(|e| Exit::failure(format!("cannot write {}: {e}", p.display())))
    };
    write("scaling.md", &table)?;
    let json = serde_json::json!({
        "cpus": cpus,
        "rounds": args.rounds,
        "zonal_pinned": !args.no_pin,
        "points": points,
    });
    write("scaling.json", &format!("{json}\n"))?;
    let svg = args.out.join("scaling.svg");
    plot::draw(&points, &threads, &workloads, &svg)
        .map_err(|e| Exit::failure(format!("cannot draw {}: {e}", svg.display())))?;
    cli::out(format!(
        "{table}\nwrote {}/scaling.{{md,json,svg}}\n",
        args.out.display()
    ))
}

/// `--probes`: one burst per pool size, counted.
fn run_probes(out: &std::path::Path) -> cli::Result {
    std::fs::create_dir_all(out)
        .map_err(|e| Exit::failure(format!("cannot create {}: {e}", out.display())))?;
    let mut bursts = Vec::new();
    for n in probes::SIZES {
        let b = probes::burst(n)?;
        eprintln!(
            "{n:>5} workers: {} probes in {} fruitless rounds",
            b.probes, b.fruitless_rounds
        );
        bursts.push(b);
    }
    let table = probes::table(&bursts);
    let write = |name: &str, text: &str| {
        let p = out.join(name);
        std::fs::write(&p, text)
            .map_err(|e| Exit::failure(format!("cannot write {}: {e}", p.display())))
    };
    write("probes.md", &table)?;
    write(
        "probes.json",
        &format!("{}\n", serde_json::json!({ "bursts": bursts })),
    )?;
    cli::out(format!(
        "{table}\nwrote {}/probes.{{md,json}}\n",
        out.display()
    ))
}

/// The Markdown table: one row per workload and worker count, medians and ratios.
fn table(
    points: &[Point],
    threads: &[usize],
    workloads: &[&Workload],
    cpus: usize,
    rounds: usize,
) -> String {
    let mut t = format!(
        "Medians of {rounds} interleaved rounds on a machine with {cpus} CPUs (ms; ratio = Zonal / peer).\n\n\
         | workload | workers | Zonal | rayon | tokio | Zonal / rayon | Zonal / tokio |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for w in workloads {
        for &n in threads {
            let get = |rt: &str| {
                points
                    .iter()
                    .find(|p| p.workload == w.name && p.runtime == rt && p.threads == n)
                    .map_or(f64::NAN, |p| p.median_ms)
            };
            let (z, r, k) = (get("zonal"), get("rayon"), get("tokio"));
            t += &format!(
                "| {} | {n} | {z:.2} | {r:.2} | {k:.2} | {:.2} | {:.2} |\n",
                w.name,
                z / r,
                z / k
            );
        }
    }
    t
}
