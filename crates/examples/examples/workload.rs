//! Real workloads on the Zonal pool, under one policy or each, with a report: throughput,
//! steals by level, refusals by reason.
//!
//! ```text
//! cargo run --release --example workload                       # this machine, every workload
//! cargo run --release --example workload -- --preset s1 --policy conservative-hard --tasks 400 --json
//! cargo run --release --example workload -- --preset s1 --policy all --workload mix --emulate-remote
//! ```
//!
//! Workloads:
//! - `mix`: the paper's process mixes turned into tasks. A process is a CPU-bound burst cut
//!   into run slices; each slice queues the next as a *continuation* (same origin, migration
//!   count carried over, so processes travel and age as in the paper). Scaled time: one
//!   paper millisecond is one microsecond of spinning here (a 300 ms process is 300 µs of work
//!   in 100 µs slices). `w1`: 200 ms, all arrive at once; `w2`: 100–500 ms, all at once;
//!   `w3`: a mix of CPU-bound (400 ms) and I/O-bound processes (50–400 ms, each slice ends in
//!   a short blocking wait), arriving in waves. Processes are born on random nodes, skewed
//!   towards the first quarter of the nodes so that others must steal.
//! - `stream`: a STREAM triad `a = b + s·c` per node, over [`NodeBuffer`]s placed on each
//!   node, with the work for a node's arrays spawned on that node.
//! - `stencil`: a 2-D 5-point Jacobi stencil whose rows are cut into one band per node.
//!
//! Remote-access emulation (`--emulate-remote`, **off by default**): on a single-node machine
//! nothing is remote, so the policies' locality cannot show. With the flag, a piece of work
//! that runs on a node other than its data's home pays `ceil(d(home, here) / d(home, home)) - 1`
//! extra passes over its data — an explicit, labelled cost in proportion to the distance.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use serde_json::{json, Value};
use zonal::policy::{PolicyName, Refusal};
use zonal::runtime::{BuildError, NodeBuffer, PoolMetrics, TaskOptions, ThreadPool};
use zonal::topology::{NodeId, Topology};

use zonal_examples::{cli, machine};

use cli::Exit;
use machine::{policy_list, remote_passes, MachineArgs};

#[derive(Parser, Debug)]
#[command(
    about = "Run real workloads on the Zonal pool and report how the policy balanced them",
    after_help = format!("Policies (--policy NAME, or all):\n{}", PolicyName::help_lines())
)]
struct Args {
    #[command(flatten)]
    machine: MachineArgs,
    /// Policy name, or `all` to run each policy in turn.
    #[arg(long, default_value = zonal::runtime::DEFAULT_POLICY)]
    policy: String,
    /// Which workload(s).
    #[arg(long, value_enum, default_value_t = Workload::All)]
    workload: Workload,
    /// The process mix of the `mix` workload.
    #[arg(long, value_enum, default_value_t = Mix::W3)]
    mix: Mix,
    /// Processes in the `mix` workload (1..=100,000).
    #[arg(long, default_value_t = 400)]
    tasks: usize,
    /// Elements per array in the triad (all nodes together; 1,024..=2^26).
    #[arg(long, default_value_t = 1 << 22)]
    stream_len: usize,
    /// Side of the stencil grid (8..=8,192).
    #[arg(long, default_value_t = 1024)]
    grid: usize,
    /// Charge an explicit remote-access cost for work running away from its data's node.
    #[arg(long)]
    emulate_remote: bool,
    /// Seed of the process mix.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Do not pin workers (pinning is on by default on this machine's topology).
    #[arg(long)]
    no_pin: bool,
    /// Print one JSON object (one per policy, one per line, with `--policy all`).
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Workload {
    Mix,
    Stream,
    Stencil,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mix {
    W1,
    W2,
    W3,
}

/// Spin iterations per scaled millisecond (one µs of work here), calibrated at start-up.
static ITERS_PER_US: AtomicU64 = AtomicU64::new(100);

fn spin(iters: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..iters {
        x = std::hint::black_box(x.rotate_left(7) ^ i).wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    x
}

fn calibrate() {
    let n = 2_000_000;
    let t = Instant::now();
    std::hint::black_box(spin(n));
    let us = t.elapsed().as_secs_f64() * 1e6;
    ITERS_PER_US.store(((n as f64 / us) as u64).max(1), Ordering::Relaxed);
}

fn work_us(us: u64) {
    std::hint::black_box(spin(us * ITERS_PER_US.load(Ordering::Relaxed)));
}

/// A tiny xorshift for the mix (seeded, reproducible).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// One process of the mix.
#[derive(Clone, Copy)]
struct Process {
    slices_left: u32,
    slice_us: u64,
    io_us: u64,
    home: NodeId,
    spawned: Instant,
}

struct MixShared {
    topo: Topology,
    emulate: bool,
    done: AtomicUsize,
    turnaround_us: AtomicU64,
    remote_slices: AtomicU64,
    slices: AtomicU64,
    /// Per process: a little data, touched once per slice (more away from home, emulated).
    data: Vec<Vec<u64>>,
}

fn run_slice(shared: Arc<MixShared>, id: usize, mut p: Process) {
    work_us(p.slice_us);
    let here = zonal::runtime::current_node();
    let extra = remote_passes(&shared.topo, p.home, here, shared.emulate);
    let passes = 1 + extra;
    let mut s = 0u64;
    for _ in 0..passes {
        s = s.wrapping_add(shared.data[id].iter().sum::<u64>());
    }
    std::hint::black_box(s);
    shared.slices.fetch_add(1, Ordering::Relaxed);
    if here != Some(p.home) {
        shared.remote_slices.fetch_add(1, Ordering::Relaxed);
    }
    if p.io_us > 0 {
        std::thread::sleep(Duration::from_micros(p.io_us));
    }
    p.slices_left -= 1;
    if p.slices_left == 0 {
        let t = p.spawned.elapsed().as_micros() as u64;
        shared.turnaround_us.fetch_add(t, Ordering::Relaxed);
        shared.done.fetch_add(1, Ordering::Relaxed);
        return;
    }
    zonal::runtime::spawn_with(TaskOptions::new().continuation(), move || {
        run_slice(shared, id, p)
    });
}

fn mix(pool: &ThreadPool, args: &Args) -> Value {
    let topo = pool.topology().clone();
    let nodes = pool.worker_nodes();
    let mut rng = Rng(args.seed | 1);
    let n = args.tasks;
    // Paper ms → µs of work; 100 (paper) ms slices.
    let specs: Vec<(u64, u64)> = (0..n)
        .map(|i| match args.mix {
            Mix::W1 => (200, 0),
            Mix::W2 => (100 + rng.below(401), 0),
            Mix::W3 if i % 3 == 2 => (50 + rng.below(351), 20),
            Mix::W3 => (400, 0),
        })
        .collect();
    let shared = Arc::new(MixShared {
        topo: topo.clone(),
        emulate: args.emulate_remote,
        done: AtomicUsize::new(0),
        turnaround_us: AtomicU64::new(0),
        remote_slices: AtomicU64::new(0),
        slices: AtomicU64::new(0),
        data: (0..n).map(|i| vec![i as u64; 512]).collect(),
    });
    let hot = (nodes.len() / 4).max(1);
    let start = Instant::now();
    let waves = if args.mix == Mix::W3 { 4 } else { 1 };
    for (i, &(total_us, io_us)) in specs.iter().enumerate() {
        if waves > 1 && i > 0 && i % n.div_ceil(waves) == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
        // Skewed arrival: 3 of 4 processes are born on the first quarter of the nodes.
        let home = if rng.below(4) < 3 {
            nodes[rng.below(hot as u64) as usize]
        } else {
            nodes[rng.below(nodes.len() as u64) as usize]
        };
        let slice_us = 100.min(total_us);
        let p = Process {
            slices_left: total_us.div_ceil(slice_us) as u32,
            slice_us,
            io_us,
            home,
            spawned: Instant::now(),
        };
        let s = Arc::clone(&shared);
        // Threads of one process (4 slices-chains per group) share a group; nice −2..2.
        let opts = TaskOptions::new()
            .origin(home)
            .group((i / 4) as u32)
            .weight(zonal::policy::nice_to_weight((i % 5) as i32 - 2));
        // From outside the pool, a task with an origin goes to that node's injector.
        pool.spawn_with(opts, move || run_slice(s, i, p));
    }
    while shared.done.load(Ordering::Relaxed) < n {
        std::thread::sleep(Duration::from_micros(200));
    }
    let secs = start.elapsed().as_secs_f64();
    let slices = shared.slices.load(Ordering::Relaxed);
    json!({
        "workload": "mix",
        "mix": format!("{:?}", args.mix).to_lowercase(),
        "processes": n,
        "seconds": secs,
        "throughput": n as f64 / secs,
        "unit": "processes/s",
        "mean_turnaround_ms": shared.turnaround_us.load(Ordering::Relaxed) as f64 / n.max(1) as f64 / 1000.0,
        "slices": slices,
        "slices_away_from_home": shared.remote_slices.load(Ordering::Relaxed),
    })
}

/// One node's triad arrays `(node, a, b, c)`.
type NodeArrays = (NodeId, NodeBuffer<f64>, NodeBuffer<f64>, NodeBuffer<f64>);

fn stream(pool: &ThreadPool, args: &Args) -> Value {
    let topo = pool.topology().clone();
    let parts = pool.node_partition(0..args.stream_len);
    let mut arrays: Vec<NodeArrays> = parts
        .iter()
        .map(|(node, r)| {
            let len = r.len();
            (
                *node,
                NodeBuffer::new_in(pool, *node, len, |_| 0.0),
                NodeBuffer::new_in(pool, *node, len, |i| i as f64),
                NodeBuffer::new_in(pool, *node, len, |i| (i % 7) as f64),
            )
        })
        .collect();
    let binding = arrays
        .first()
        .map(|a| format!("{:?}", a.1.binding()))
        .unwrap_or_default();
    let reps = 5;
    let scalar = 3.0;
    let emulate = args.emulate_remote;
    let grain = 16 * 1024;
    let start = Instant::now();
    for _ in 0..reps {
        pool.scope(|s| {
            for (node, a, b, c) in arrays.iter_mut() {
                let home = *node;
                let topo = &topo;
                let (b, c): (&[f64], &[f64]) = (b, c);
                s.spawn_on(home, move |_| {
                    triad(a, b, c, scalar, grain, &|| {
                        remote_passes(topo, home, zonal::runtime::current_node(), emulate)
                    })
                });
            }
        });
    }
    let secs = start.elapsed().as_secs_f64();
    let bytes = (3 * 8 * args.stream_len * reps) as f64;
    let check: f64 = arrays.iter().map(|x| x.1[x.1.len() / 2]).sum();
    json!({
        "workload": "stream",
        "elements": args.stream_len,
        "reps": reps,
        "seconds": secs,
        "throughput": bytes / secs / 1e9,
        "unit": "GB/s",
        "memory_binding": binding,
        "check": check,
    })
}

/// `a = b + s·c`, split by `join` down to `grain`; each leaf pays the emulated extra passes.
fn triad(
    a: &mut [f64],
    b: &[f64],
    c: &[f64],
    s: f64,
    grain: usize,
    extra: &(dyn Fn() -> u32 + Sync),
) {
    if a.len() <= grain {
        for _ in 0..=extra() {
            for ((x, y), z) in a.iter_mut().zip(b).zip(c) {
                *x = y + s * z;
            }
        }
        return;
    }
    let mid = a.len() / 2;
    let (a1, a2) = a.split_at_mut(mid);
    let (b1, b2) = b.split_at(mid);
    let (c1, c2) = c.split_at(mid);
    zonal::runtime::join(
        || triad(a1, b1, c1, s, grain, extra),
        || triad(a2, b2, c2, s, grain, extra),
    );
}

fn stencil(pool: &ThreadPool, args: &Args) -> Value {
    let topo = pool.topology().clone();
    let n = args.grid.max(8);
    let iters = 10;
    let mut cur = vec![0.0f64; n * n];
    cur[..n].fill(1.0); // a hot top edge
    let mut next = cur.clone();
    let parts = pool.node_partition(1..n - 1);
    let home_of = |row: usize| {
        parts
            .iter()
            .find(|(_, r)| r.contains(&row))
            .map_or(parts[0].0, |p| p.0)
    };
    let emulate = args.emulate_remote;
    let start = Instant::now();
    for _ in 0..iters {
        {
            let src = &cur;
            let dst = RowsPtr(next.as_mut_ptr());
            pool.par_for(1..n - 1, 8, |rows| {
                let dst = &dst;
                let extra = remote_passes(
                    &topo,
                    home_of(rows.start),
                    zonal::runtime::current_node(),
                    emulate,
                );
                for _ in 0..=extra {
                    for i in rows.clone() {
                        for j in 1..n - 1 {
                            let v = 0.25
                                * (src[(i - 1) * n + j]
                                    + src[(i + 1) * n + j]
                                    + src[i * n + j - 1]
                                    + src[i * n + j + 1]);
                            // SAFETY: par_for hands out disjoint row ranges; each writes only its rows of `next`.
                            unsafe { *dst.0.add(i * n + j) = v };
                        }
                    }
                }
            });
        }
        std::mem::swap(&mut cur, &mut next);
    }
    let secs = start.elapsed().as_secs_f64();
    let cells = ((n - 2) * (n - 2) * iters) as f64;
    json!({
        "workload": "stencil",
        "grid": n,
        "iterations": iters,
        "seconds": secs,
        "throughput": cells / secs / 1e6,
        "unit": "Mcells/s",
        "check": cur[n * 2 + n / 2],
    })
}

struct RowsPtr(*mut f64);
// SAFETY: the stencil writes disjoint rows through it from different workers.
unsafe impl Sync for RowsPtr {}

fn build_pool(args: &Args, policy: &str) -> Result<ThreadPool, BuildError> {
    let mut b = args.machine.builder(policy);
    if args.no_pin {
        b = b.pin(false);
    }
    b.build()
}

fn level_name(l: usize) -> String {
    zonal::topology::Level(l as u8).to_string()
}

fn report_json(pool: &ThreadPool, args: &Args, m: &PoolMetrics, results: &[Value]) -> Value {
    let topo = pool.topology();
    let refused: BTreeMap<&str, u64> = Refusal::ALL
        .iter()
        .map(|&r| (r.as_str(), m.total.refused.get(r)))
        .collect();
    json!({
        "policy": m.policy,
        "topology": topo.machine().name(),
        "nodes": topo.node_count(),
        "levels": m.levels,
        "zone_depth": m.zone_depth,
        "workers": pool.num_workers(),
        "pinning": pool.pinning(),
        "virtual": pool.is_virtual(),
        "emulate_remote": args.emulate_remote,
        "tasks_spawned": m.tasks_spawned(),
        "tasks_run": m.total.tasks_run,
        "steals_by_level": m.total.steals_by_level,
        "refused": refused,
        "migrations": m.total.migrations,
        "migrations_beyond_zone": m.total.migrations_beyond_zone,
        "moves_farther_from_origin": m.total.moves_farther_from_origin,
        "aged_kept": m.total.aged_kept,
        "idle_ms": m.total.idle_ns / 1_000_000,
        "workloads": results,
    })
}

/// The human report of one policy's run.
fn report_text(pool: &ThreadPool, args: &Args, m: &PoolMetrics, results: &[Value]) -> String {
    /// Appends one formatted line to the report.
    macro_rules! line {
        ($out:ident, $($fmt:tt)*) => {{
            $out.push_str(&format!($($fmt)*));
            $out.push('\n');
        }};
    }
    let mut out = String::new();
    let topo = pool.topology();
    line!(
        out,
        "== policy {} on {:?}: {} nodes, {} levels (zone I..{}), {} workers, {:?}{}",
        m.policy,
        topo.machine().name(),
        topo.node_count(),
        m.levels,
        level_name(m.zone_depth.saturating_sub(1)),
        pool.num_workers(),
        pool.pinning(),
        if pool.is_virtual() {
            " (virtual topology: one worker per virtual CPU)"
        } else {
            ""
        }
    );
    line!(
        out,
        "   remote-access emulation: {}",
        if args.emulate_remote {
            "ON — work away from its data's node pays ceil(d/d_local) - 1 extra passes (labelled cost, not a measurement)"
        } else {
            "OFF (default; --emulate-remote charges a labelled cost for work away from its data)"
        }
    );
    for r in results {
        let name = r["workload"].as_str().unwrap_or("?");
        let extra = match name {
            "mix" => format!(
                ", mix {}, {} processes, mean turnaround {:.2} ms, {} of {} slices away from home",
                r["mix"].as_str().unwrap_or(""),
                r["processes"],
                r["mean_turnaround_ms"].as_f64().unwrap_or(0.0),
                r["slices_away_from_home"],
                r["slices"]
            ),
            "stream" => format!(
                ", memory binding {}",
                r["memory_binding"].as_str().unwrap_or("")
            ),
            _ => String::new(),
        };
        line!(
            out,
            "   {:<8} {:>8.3} s  {:>10.2} {}{}",
            name,
            r["seconds"].as_f64().unwrap_or(0.0),
            r["throughput"].as_f64().unwrap_or(0.0),
            r["unit"].as_str().unwrap_or(""),
            extra
        );
    }
    line!(out,
        "   tasks spawned {}  run {}  steals {}  beyond zone {}  farther from origin {}  aged kept {}",
        m.tasks_spawned(),
        m.total.tasks_run,
        m.total.migrations,
        m.total.migrations_beyond_zone,
        m.total.moves_farther_from_origin,
        m.total.aged_kept
    );
    let steals: Vec<String> = m
        .total
        .steals_by_level
        .iter()
        .enumerate()
        .map(|(l, n)| format!("{} {}", level_name(l), n))
        .collect();
    line!(out, "   steals by level: {}", steals.join(", "));
    let refused: Vec<String> = m
        .total
        .refused
        .iter_nonzero()
        .into_iter()
        .map(|(r, n)| format!("{r} {n}"))
        .collect();
    line!(
        out,
        "   refused: {}",
        if refused.is_empty() {
            "none".to_owned()
        } else {
            refused.join(", ")
        }
    );
    out
}

trait NonZero {
    fn iter_nonzero(&self) -> Vec<(&'static str, u64)>;
}
impl NonZero for zonal::runtime::Refusals {
    fn iter_nonzero(&self) -> Vec<(&'static str, u64)> {
        Refusal::ALL
            .iter()
            .map(|&r| (r.as_str(), self.get(r)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }
}

/// The accepted range of each size flag, checked before anything is allocated: a size
/// outside it is a usage error (exit status 2) that names the flag, the value and the range.
const LIMITS: [(&str, u64, u64); 3] = [
    // Processes of the mix.
    ("--tasks", 1, 100_000),
    // Three arrays of 8-byte elements: at most 1.5 GiB; at least one element per worker.
    ("--stream-len", 1_024, 1 << 26),
    // Two grids of 8-byte cells: at most 1 GiB.
    ("--grid", 8, 8_192),
];

/// Checks the size flags against [`LIMITS`].
fn check_sizes(args: &Args) -> cli::Result {
    let values = [args.tasks, args.stream_len, args.grid];
    for ((flag, lo, hi), v) in LIMITS.iter().zip(values) {
        cli::check_range(flag, v as u64, *lo, *hi)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let (args, matches) = cli::parse::<Args>();
    cli::finish(
        "workload",
        check_modes(&args, &matches).and_then(|()| run(&args)),
    )
}

/// Flags of one workload are refused when that workload does not run.
fn check_modes(args: &Args, matches: &clap::ArgMatches) -> cli::Result {
    let runs = |w: Workload| args.workload == Workload::All || args.workload == w;
    for (w, ids, name) in [
        (
            Workload::Mix,
            &["mix", "tasks", "seed"][..],
            "the mix workload",
        ),
        (Workload::Stream, &["stream_len"][..], "the stream workload"),
        (Workload::Stencil, &["grid"][..], "the stencil workload"),
    ] {
        if !runs(w) {
            cli::refuse_given(
                matches,
                ids,
                &format!("--workload {:?} (only to {name})", args.workload).to_lowercase(),
            )?;
        }
    }
    Ok(())
}

fn run(args: &Args) -> cli::Result {
    check_sizes(args)?;
    let policies = policy_list(&args.policy)?;
    calibrate();
    let mut failures = Vec::new();
    for policy in &policies {
        let pool = match build_pool(args, policy) {
            Ok(p) => p,
            // The same input fails every policy: stop at once.
            Err(e) if e.is_input_error() => return Err(Exit::usage(e)),
            Err(e) => {
                eprintln!("workload: policy {policy}: cannot start the pool: {e}");
                failures.push(format!("{policy}: {e}"));
                continue;
            }
        };
        let mut results = Vec::new();
        let all = args.workload == Workload::All;
        if all || args.workload == Workload::Mix {
            results.push(mix(&pool, args));
        }
        if all || args.workload == Workload::Stream {
            results.push(stream(&pool, args));
        }
        if all || args.workload == Workload::Stencil {
            results.push(stencil(&pool, args));
        }
        let m = pool.metrics();
        if args.json {
            cli::out(format!("{}\n", report_json(&pool, args, &m, &results)))?;
        } else {
            cli::out(report_text(&pool, args, &m, &results))?;
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Exit::Failure(format!(
            "{} of {} policies could not run: {}",
            failures.len(),
            policies.len(),
            failures.join("; ")
        )))
    }
}
