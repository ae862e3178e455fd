//! A service and its computations on one machine (issue 44): an HTTP server (hyper, on
//! loopback) whose requests wait a little on tokio's timer and, for a share of them, await a
//! parallel computation, beside a batch job that keeps running large parallel computations;
//! an open-loop load generator measures each request's latency from its intended send
//! time. Three setups on the same CPUs, alternated over rounds: tokio + rayon, tokio with
//! `spawn_blocking`, and Zonal alone (optionally also on a virtual S1 pool, emulated). The
//! library is `zonal_examples::mixed`; this is its command line.
//!
//! ```text
//! cargo run --release --example mixed                      # 3 rounds of 3000 requests at 200/s
//! cargo run --release --example mixed -- --quick           # the short version (CI's main job)
//! cargo run --release --example mixed -- --s1              # also Zonal on a virtual S1 pool
//! cargo run --release --example mixed -- --rate 400 --setups tokio-rayon,zonal --json
//! ```
//!
//! It prints a markdown table (or, with `--json`, the JSON document) and writes
//! `mixed.json` and `mixed.svg` under `--out`.
//!
//! Exit status: 0 on success; 2 for a usage error (a flag, a value out of range); 1 when a
//! run fails: a runtime, pool, socket or thread that cannot start, output that cannot be
//! written, or a setup that completed no request or no batch computation in some round.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use zonal_examples::cli::{self, Exit};
use zonal_examples::mixed::{self, report, Config, LoadPlan, Sample, Setup};

mod plot;

/// The full run's settings, and the short one's (`--quick`).
struct Defaults {
    requests: u64,
    rate: f64,
    rounds: u32,
    batch_ms: f64,
    grace_s: f64,
}

const FULL: Defaults = Defaults {
    requests: 3000,
    rate: 200.0,
    rounds: 3,
    batch_ms: 50.0,
    grace_s: 10.0,
};

const QUICK: Defaults = Defaults {
    requests: 400,
    rate: 200.0,
    rounds: 2,
    batch_ms: 20.0,
    grace_s: 5.0,
};

#[derive(Parser, Debug)]
#[command(
    about = "Request latency of an HTTP service while a batch job runs parallel computations, \
             on tokio + rayon, tokio + spawn_blocking and Zonal alone, alternated over rounds"
)]
struct Args {
    /// The short version: 400 requests per setup and round, 2 rounds, 20 ms batch
    /// computations (flags given still apply).
    #[arg(long)]
    quick: bool,
    /// Setups to run, comma-separated, in the order of the even rounds (odd rounds reverse
    /// it) [default: tokio-rayon,tokio-blocking,zonal].
    #[arg(long, value_enum, value_delimiter = ',')]
    setups: Vec<Setup>,
    /// Also run Zonal on a virtual S1 pool (an emulation: S1's topology over this machine's
    /// CPUs).
    #[arg(long)]
    s1: bool,
    /// Requests per setup and round [default: 3000; --quick: 400].
    #[arg(long)]
    requests: Option<u64>,
    /// Arrivals per second [default: 200].
    #[arg(long)]
    rate: Option<f64>,
    /// Rounds [default: 3; --quick: 2].
    #[arg(long)]
    rounds: Option<u32>,
    /// Percent of the requests that compute.
    #[arg(long, default_value_t = 20)]
    compute_percent: u32,
    /// Every request's wait on tokio's timer, ms.
    #[arg(long, default_value_t = 1)]
    wait_ms: u64,
    /// A request's computation, ms of one core (calibrated at start-up).
    #[arg(long, default_value_t = 2.0)]
    request_ms: f64,
    /// One batch computation, ms of one core [default: 50; --quick: 20].
    #[arg(long)]
    batch_ms: Option<f64>,
    /// Seconds after the last request is due before the requests left are counted as not
    /// completed [default: 10; --quick: 5].
    #[arg(long)]
    grace: Option<f64>,
    /// Connections the load generator opens at most at once.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Where `mixed.json` and `mixed.svg` go.
    #[arg(long, default_value = "out/mixed")]
    out: PathBuf,
    /// Print the JSON document instead of the table.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let (args, _) = cli::parse::<Args>();
    cli::finish("mixed", run(&args))
}

/// The run's settings from the flags (`--quick` changes the defaults only).
fn config(args: &Args) -> cli::Result<Config> {
    let d = if args.quick { &QUICK } else { &FULL };
    let mut setups = if args.setups.is_empty() {
        Setup::MACHINE.to_vec()
    } else {
        args.setups.clone()
    };
    if args.s1 && !setups.contains(&Setup::ZonalS1) {
        setups.push(Setup::ZonalS1);
    }
    let mut seen = Vec::new();
    for s in &setups {
        if seen.contains(s) {
            return Err(Exit::Usage(format!("--setups names {s} twice")));
        }
        seen.push(*s);
    }
    let grace = args.grace.unwrap_or(d.grace_s);
    cli::check_range("--grace", grace, 0.1, 3600.0)?;
    Ok(Config {
        setups,
        rounds: args.rounds.unwrap_or(d.rounds),
        plan: LoadPlan {
            requests: args.requests.unwrap_or(d.requests),
            rate: args.rate.unwrap_or(d.rate),
            compute_percent: args.compute_percent,
            grace: Duration::from_secs_f64(grace),
            max_connections: args.max_connections,
        },
        wait: Duration::from_millis(args.wait_ms),
        request_ms: args.request_ms,
        batch_ms: args.batch_ms.unwrap_or(d.batch_ms),
    })
}

/// One line on stderr per setup's run.
fn progress(s: &Sample) {
    let [_, p99, _] = s.latency_us;
    eprintln!(
        "mixed: round {} {}: {}/{} completed, p99 {} ms, batch {:.2}/s",
        s.round + 1,
        s.setup,
        s.completed,
        s.planned,
        report::ms(p99),
        s.batch_per_s
    );
}

fn run(args: &Args) -> cli::Result {
    let config = config(args)?;
    let run = mixed::run(&config, progress).map_err(|e| {
        if e.is_usage() {
            Exit::usage(e)
        } else {
            Exit::failure(e)
        }
    })?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Exit::failure(format!("cannot create {}: {e}", args.out.display())))?;
    let json = serde_json::to_string_pretty(&run.to_json()).map_err(Exit::failure)?;
    let json_path = args.out.join("mixed.json");
    std::fs::write(&json_path, format!("{json}\n"))
        .map_err(|e| Exit::failure(format!("cannot write {}: {e}", json_path.display())))?;
    let svg = args.out.join("mixed.svg");
    plot::draw(&run, &svg)
        .map_err(|e| Exit::failure(format!("cannot draw {}: {e}", svg.display())))?;
    if args.json {
        cli::out(format!("{json}\n"))?;
    } else {
        cli::out(format!(
            "{}\nwrote {} and {}\n",
            report::table(&run),
            json_path.display(),
            svg.display()
        ))?;
    }
    let idle: Vec<String> = run
        .samples
        .iter()
        .filter(|s| s.completed == 0 || s.batch_computations == 0)
        .map(|s| format!("{} in round {}", s.setup, s.round + 1))
        .collect();
    if idle.is_empty() {
        Ok(())
    } else {
        Err(Exit::Failure(format!(
            "no request completed or no batch computation ran: {}",
            idle.join(", ")
        )))
    }
}
