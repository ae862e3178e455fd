//! rayon-demo-style programs on Zonal and on rayon, paired in one run: quicksort, mergesort,
//! n-body, Game of Life, matrix multiply and two map-reduces, each written once with rayon's
//! method names (`benches/demo/mod.rs`) and compiled against both preludes.
//!
//! For each worker count, both pools are built with `num_threads(n)`; each workload runs
//! `--rounds` times alternating Zonal and rayon (so both see the same background load), the
//! results are checked equal, and the table gives the medians and Zonal / rayon.
//!
//! ```sh
//! cargo run --release --example rayon_demo                       # 1 and 2 workers (≤ CPUs)
//! cargo run --release --example rayon_demo -- --threads 1,2,4,8,16 --rounds 15 --json
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use zonal_examples::{cli, demo, runners};

use cli::Exit;

/// Paired runs of rayon-demo-style workloads on Zonal and rayon.
// Parsed with `cli::parse_as_facade`: the name `--version` prints and the `--help` header
// are the facade package's, as they were when this program was one of its examples.
#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    threads: runners::ThreadsArg,
    /// Runs of each workload on each runtime (medians are reported).
    #[arg(long, default_value_t = 9)]
    rounds: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Leave Zonal's workers unpinned (rayon never pins): on a machine shared with other
    /// busy processes this separates the runtime's costs from pinning's.
    #[arg(long)]
    no_pin: bool,
}

/// One workload's paired result at one worker count.
#[derive(Debug, serde::Serialize)]
struct Row {
    workload: &'static str,
    threads: usize,
    zonal_ms: f64,
    rayon_ms: f64,
    ratio: f64,
}

fn main() -> ExitCode {
    cli::finish("rayon_demo", run())
}

fn run() -> cli::Result {
    let (args, _) = cli::parse_as_facade::<Args>();
    let (cpus, threads) = runners::plan(&args.threads, args.rounds)?;
    let mut rows = Vec::new();
    for &n in &threads {
        let zp = zonal::ThreadPoolBuilder::new()
            .num_threads(n)
            .pin(!args.no_pin)
            .build()
            .map_err(|e| Exit::failure(format!("zonal pool of {n}: {e}")))?;
        let rp = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| Exit::failure(format!("rayon pool of {n}: {e}")))?;
        for w in WORKLOADS {
            let (z, r) = paired(w, &zp, &rp, args.rounds)?;
            rows.push(Row {
                workload: w.name,
                threads: n,
                zonal_ms: z,
                rayon_ms: r,
                ratio: z / r,
            });
            if !args.json {
                eprintln!("  {:<11} {n:>2} workers: {z:8.2} ms vs {r:8.2} ms", w.name);
            }
        }
    }
    if args.json {
        let v = serde_json::json!({
            "cpus": cpus,
            "rounds": args.rounds,
            "zonal_pinned": !args.no_pin,
            "rows": rows,
        });
        return cli::out(format!("{v}\n"));
    }
    let mut t = String::from(
        "| workload | workers | Zonal (median ms) | rayon (median ms) | Zonal / rayon |\n\
         |---|---|---|---|---|\n",
    );
    for r in &rows {
        t += &format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} |\n",
            r.workload, r.threads, r.zonal_ms, r.rayon_ms, r.ratio
        );
    }
    cli::out(t)
}

/// A workload: builds its input, runs on one runtime, returns a checksum of its output.
struct Workload {
    name: &'static str,
    run: fn(Side) -> (Duration, u64),
}

#[derive(Clone, Copy)]
enum Side {
    Zonal,
    Rayon,
}

/// Runs `w` alternately on both pools and returns the medians (ms), checking that both
/// runtimes computed the same thing.
fn paired(
    w: &Workload,
    zp: &zonal::ThreadPool,
    rp: &rayon::ThreadPool,
    rounds: usize,
) -> cli::Result<(f64, f64)> {
    let (mut zs, mut rs) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        // Cool-downs: each pool's idle threads park before the other pool runs.
        std::thread::sleep(COOL_DOWN);
        let (dz, cz) = zp.install(|| (w.run)(Side::Zonal));
        std::thread::sleep(COOL_DOWN);
        let (dr, cr) = rp.install(|| (w.run)(Side::Rayon));
        if cz != cr {
            return Err(Exit::failure(format!(
                "{}: Zonal's result ({cz:#x}) differs from rayon's ({cr:#x})",
                w.name
            )));
        }
        zs.push(dz.as_secs_f64() * 1e3);
        rs.push(dr.as_secs_f64() * 1e3);
    }
    Ok((median(&mut zs), median(&mut rs)))
}

/// Pause before each run, so that the pool that ran last has parked its threads.
const COOL_DOWN: Duration = Duration::from_millis(20);

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn checksum(v: impl IntoIterator<Item = u64>) -> u64 {
    v.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ x).wrapping_mul(0x100_0000_01b3)
    })
}

fn timed(f: impl FnOnce() -> u64) -> (Duration, u64) {
    let t = Instant::now();
    let c = f();
    (t.elapsed(), c)
}

const SORT_LEN: usize = 1 << 22;
const BODIES: usize = 1500;
const LIFE: (usize, usize) = (1024, 1024);
const MATMUL: usize = 320;
const MAP_LEN: usize = 1 << 24;

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "quicksort",
        run: |side| {
            let mut v = demo::random_u64s(SORT_LEN, 1);
            timed(|| {
                match side {
                    Side::Zonal => demo::zonal_impl::quicksort(&mut v),
                    Side::Rayon => demo::rayon_impl::quicksort(&mut v),
                }
                checksum(v.iter().step_by(1 << 10).copied())
            })
        },
    },
    Workload {
        name: "mergesort",
        run: |side| {
            let mut v = demo::random_u64s(SORT_LEN, 2);
            timed(|| {
                match side {
                    Side::Zonal => demo::zonal_impl::mergesort(&mut v),
                    Side::Rayon => demo::rayon_impl::mergesort(&mut v),
                }
                checksum(v.iter().step_by(1 << 10).copied())
            })
        },
    },
    Workload {
        name: "nbody",
        run: |side| {
            let mut b = demo::bodies(BODIES);
            timed(|| {
                for _ in 0..2 {
                    match side {
                        Side::Zonal => demo::zonal_impl::nbody_step(&mut b, 0.01),
                        Side::Rayon => demo::rayon_impl::nbody_step(&mut b, 0.01),
                    }
                }
                checksum(b.iter().map(|b| b.pos[0].to_bits()))
            })
        },
    },
    Workload {
        name: "life",
        run: |side| {
            let (w, h) = LIFE;
            let mut cur = demo::board(w, h);
            let mut next = vec![0u8; w * h];
            timed(|| {
                for _ in 0..4 {
                    match side {
                        Side::Zonal => demo::zonal_impl::life_step(&cur, &mut next, w, h),
                        Side::Rayon => demo::rayon_impl::life_step(&cur, &mut next, w, h),
                    }
                    std::mem::swap(&mut cur, &mut next);
                }
                checksum(cur.iter().map(|&c| u64::from(c)))
            })
        },
    },
    Workload {
        name: "matmul",
        run: |side| {
            let n = MATMUL;
            let (a, b) = (demo::matrix(n, 3), demo::matrix(n, 4));
            let mut c = vec![0.0; n * n];
            timed(|| {
                match side {
                    Side::Zonal => demo::zonal_impl::matmul(&a, &b, &mut c, n),
                    Side::Rayon => demo::rayon_impl::matmul(&a, &b, &mut c, n),
                }
                checksum(c.iter().map(|x| x.to_bits()))
            })
        },
    },
    Workload {
        name: "map_reduce",
        run: |side| {
            let v = demo::random_u64s(MAP_LEN, 5);
            timed(|| match side {
                Side::Zonal => demo::zonal_impl::map_reduce(&v),
                Side::Rayon => demo::rayon_impl::map_reduce(&v),
            })
        },
    },
    Workload {
        name: "histogram",
        run: |side| {
            let v = demo::random_u64s(MAP_LEN, 6);
            timed(|| {
                checksum(match side {
                    Side::Zonal => demo::zonal_impl::histogram(&v),
                    Side::Rayon => demo::rayon_impl::histogram(&v),
                })
            })
        },
    },
];
