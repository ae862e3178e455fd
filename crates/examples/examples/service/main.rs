//! A service-like load on the Zonal pool: long-lived async tasks, each owning node-local
//! state and doing short slices of work between yields and timed waits, arriving in bursts
//! skewed to a few nodes (`zonal_examples::service_load`). Each policy runs on its own pool with the control
//! plane balancing every 4 ms, for `--seconds` of arrivals, after which every task must
//! finish exactly once. The report (`report.rs`): one row (or JSON line) per policy with
//! turnaround, steals and control-plane migrations by level, and what happened to aged
//! tasks; then an SVG plot (`plot.rs`).
//!
//! ```text
//! cargo run --release --example service                               # this machine, every policy
//! cargo run --release --example service -- --preset s1 --policy all --seconds 3 --emulate-remote
//! cargo run --release --example service -- --preset s1 --policy linux --seconds 1 --json
//! cargo run --release --example service -- --policy linux --seconds 60 --metrics-addr 127.0.0.1:9100
//! ```
//!
//! Exit status: 0 on success; 2 for a usage or input error (a flag, a value out of range, a
//! topology or policy that cannot be read, a metrics address that is refused); 1 when a run
//! fails: a pool that cannot start, a task that never finished or finished twice, live
//! tasks of which none finished for five minutes after arrivals stopped (a drain that stalled;
//! a slow one may take as long as it needs), or an aged task that moved under a policy that
//! ages tasks (a runtime bug).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use zonal::policy::{Ageing, PolicyConfig, PolicyName};
use zonal::runtime::{
    BuildError, ControlOptions, ControlPlane, ServeError, ServeOptions, ThreadPool,
};

use zonal_examples::{cli, machine, service_load as load};

mod plot;
mod report;

use cli::{check_range, Exit};
use load::{LoadOptions, Plan};
use machine::{policy_list, MachineArgs};
use report::PolicyReport;

/// The control plane's metric sampling period.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// How long the live tasks may go with none finishing once arrivals stop: the drain takes
/// as long as it needs on a slow or loaded machine (an emulated guest beside other work),
/// and fails only when it stalls (`service_load::wait_for_drain`).
const STALL_LIMIT: Duration = Duration::from_secs(300);

#[derive(Parser, Debug)]
#[command(
    about = "Run a service-like load of long-lived async tasks on the Zonal pool, balanced by \
             the control plane, under one policy or each, and report how it went",
    after_help = format!("Policies (--policy NAME, or all):\n{}", PolicyName::help_lines())
)]
struct Args {
    #[command(flatten)]
    machine: MachineArgs,
    /// Policy name, or `all` to run each policy in turn.
    #[arg(long, default_value = "all")]
    policy: String,
    /// Seconds of arrivals per policy (1..=3600); the live tasks then finish.
    #[arg(long, default_value_t = 3)]
    seconds: u64,
    /// Seed of the arrival plan.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Charge an explicit remote-access cost for work running away from its state's node.
    #[arg(long)]
    emulate_remote: bool,
    /// Serve Prometheus metrics on the control plane at this address while each policy runs
    /// (loopback only, unless --metrics-allow-remote).
    #[arg(long)]
    metrics_addr: Option<SocketAddr>,
    /// Allow a non-loopback --metrics-addr (the endpoint has no authentication).
    #[arg(long, requires = "metrics_addr")]
    metrics_allow_remote: bool,
    /// Where `service.svg` goes (human output only).
    #[arg(long, default_value = "out/service")]
    out: PathBuf,
    /// Print one JSON object per policy, one per line (no table, no plot).
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let (args, _) = cli::parse::<Args>();
    cli::finish("service", run(&args))
}

fn build_pool(args: &Args, policy: &str) -> Result<ThreadPool, BuildError> {
    args.machine.builder(policy).build()
}

/// The policy's ageing rule, from its configuration.
fn ageing_of(policy: &str) -> Result<Ageing, zonal::policy::PolicyError> {
    Ok(PolicyConfig::named(policy)?.build()?.steal_side().ageing())
}

/// The progress line on stderr (drawn only on a terminal).
fn progress_bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} s  {msg}")
    {
        bar.set_style(style);
    }
    bar
}

fn run(args: &Args) -> cli::Result {
    check_range("--seconds", args.seconds, 1, 3600)?;
    let policies = policy_list(&args.policy)?;
    let bar = progress_bar(args.seconds * policies.len() as u64);
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (i, policy) in policies.iter().enumerate() {
        match run_policy(args, policy, i as u64 * args.seconds, &bar)? {
            Ok(row) => {
                failures.extend(row.problems().into_iter().map(|p| format!("{policy}: {p}")));
                if args.json {
                    let line = serde_json::to_string(&row).map_err(Exit::failure)?;
                    bar.suspend(|| cli::out(format!("{line}\n")))?;
                }
                rows.push(row);
            }
            Err(why) => {
                bar.suspend(|| eprintln!("service: policy {policy}: {why}"));
                failures.push(format!("{policy}: {why}"));
            }
        }
    }
    bar.finish_and_clear();
    if !args.json && !rows.is_empty() {
        std::fs::create_dir_all(&args.out)
            .map_err(|e| Exit::failure(format!("cannot create {}: {e}", args.out.display())))?;
        let svg = args.out.join("service.svg");
        plot::draw(&rows, &svg)
            .map_err(|e| Exit::failure(format!("cannot draw {}: {e}", svg.display())))?;
        cli::out(format!("{}wrote {}\n", report::table(&rows), svg.display()))?;
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Exit::Failure(format!(
            "{} problem(s) in {} policies: {}",
            failures.len(),
            policies.len(),
            failures.join("; ")
        )))
    }
}

/// Runs one policy: `Err` for input errors (which stop every policy), `Ok(Err(why))` for a
/// policy that could not run (the others still do).
fn run_policy(
    args: &Args,
    policy: &str,
    bar_base: u64,
    bar: &ProgressBar,
) -> cli::Result<Result<PolicyReport, String>> {
    let ageing = match ageing_of(policy) {
        Ok(a) => a,
        Err(e) => return Ok(Err(format!("the policy does not build: {e}"))),
    };
    let pool = match build_pool(args, policy) {
        Ok(p) => p,
        // The same input fails every policy: stop at once.
        Err(e) if e.is_input_error() => return Err(Exit::usage(e)),
        Err(e) => return Ok(Err(format!("cannot start the pool: {e}"))),
    };
    let cp = ControlPlane::start_with(
        pool.metrics_handle(),
        ControlOptions::new()
            .balance_every(zonal::runtime::BALANCE_TICK)
            .sample_every(SAMPLE_EVERY),
    )
    .map_err(|e| Exit::failure(format!("cannot start the control plane: {e}")))?;
    if let Some(addr) = args.metrics_addr {
        let opts = ServeOptions::default().allow_remote(args.metrics_allow_remote);
        let bound = cp.serve_metrics_with(addr, opts).map_err(|e| match e {
            ServeError::NotLoopback { .. } => Exit::usage(format!(
                "--metrics-addr {addr}: {e}; add --metrics-allow-remote to serve it anyway"
            )),
            ServeError::Bind { .. } => Exit::usage(format!("--metrics-addr {addr}: {e}")),
            e => Exit::failure(format!("--metrics-addr {addr}: {e}")),
        })?;
        bar.suspend(|| eprintln!("service: policy {policy}: metrics at http://{bound}/metrics"));
    }
    // Bursts are sized by the CPUs that really run the workers: a virtual pool of 32
    // workers on a 2-CPU machine gets the load 2 CPUs can serve, not 32 (the plan would
    // otherwise overload it and measure the overload, not the policy).
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let mut plan = Plan::new(
        &pool.worker_nodes(),
        pool.num_workers().min(cpus),
        args.seed,
    );
    let opts = LoadOptions {
        seconds: args.seconds,
        emulate_remote: args.emulate_remote,
        ageing,
        stall_limit: STALL_LIMIT,
    };
    let outcome = load::run(&pool, &mut plan, opts, |p| {
        bar.set_position(bar_base + p.elapsed.as_secs().min(args.seconds));
        bar.set_message(format!(
            "{policy}: {} spawned, {} live",
            p.spawned,
            p.spawned - p.completed
        ));
    })
    .map_err(Exit::failure)?;
    let stats = cp.balance_stats();
    let m = pool.metrics();
    let topo = pool.topology();
    let (missing, repeated) = load::exactly_once(outcome.spawned, &outcome.records);
    let mut row = PolicyReport {
        policy: policy.to_owned(),
        topology: topo.machine().name().to_owned(),
        virtual_pool: pool.is_virtual(),
        nodes: topo.node_count(),
        workers: pool.num_workers(),
        cpus: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        levels: m.levels,
        zone_levels: m.zone_depth,
        seconds: args.seconds,
        seed: args.seed,
        emulate_remote: args.emulate_remote,
        tasks_spawned: outcome.spawned,
        tasks_missing: missing.len() as u64,
        tasks_repeated: repeated.len() as u64,
        tasks_per_burst: plan.burst_len(),
        hot_nodes: plan.hot_nodes().iter().map(|n| n.0).collect(),
        bursts: outcome.bursts,
        bursts_due: (args.seconds * 1000).div_ceil(load::BURST_EVERY.as_millis() as u64),
        bursts_delayed: outcome.bursts_delayed,
        steals_by_level: m.total.steals_by_level.clone(),
        control_plane_passes: stats.passes,
        control_plane_migrations_by_level: m.total.balance_migrations_by_level.clone(),
        age_limit: ageing.limit(),
        elapsed_s: outcome.elapsed.as_secs_f64(),
        ..PolicyReport::default()
    };
    row.add_records(&outcome.records);
    drop(cp);
    // The next policy's run starts on an idle machine: this pool's workers are gone.
    pool.shutdown_and_wait();
    if !outcome.drained {
        return Ok(Err(format!(
            "{} of {} tasks still live, none finished in the last {} s ({:.0} s after arrivals \
             stopped)",
            outcome.spawned - row.tasks_completed,
            outcome.spawned,
            STALL_LIMIT.as_secs(),
            outcome.elapsed.as_secs_f64() - args.seconds as f64
        )));
    }
    Ok(Ok(row))
}
