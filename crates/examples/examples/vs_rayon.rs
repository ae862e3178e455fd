//! A paired comparison with rayon, for noisy machines: the same three workloads as
//! `benches/runtime.rs` (`zonal_examples::workloads`: fib 25 by `join`, a scope spawning
//! 100,000 tasks, a parallel sum over 16 Mi `u64`) and the parallel loops of
//! `benches/loops.rs` (`zonal_examples::loops`: 10,000 short `par_iter` loops of 1,000
//! items, as `for_each` and as `sum`; items of uneven cost; a sparse matrix-vector product
//! over skewed rows; n-body with dynamic splitting, 128 and 4,096 bodies), but
//! *interleaved* — zonal, rayon, zonal, rayon, … — so that both see the same background
//! load, then the median of each and their ratio.
//!
//! ```text
//! cargo run --release --example vs_rayon -- [ROUNDS [THREADS [FILTER]]]
//! ```
//!
//! `THREADS` may be `all` (the default: every allowed CPU); `FILTER` runs only the benches
//! whose name contains it (`scope`, for a profile of the spawn path). With `ZONAL_NO_PIN` set
//! in the environment, Zonal's workers are not pinned; with `RAYON_PIN` set, rayon's threads
//! are pinned to the same CPUs as Zonal's workers (rayon does not pin by default). On a
//! machine shared with other busy processes that separates the runtime's costs from
//! pinning's.

use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

use zonal_examples::cli::{self, Exit};
use zonal_examples::demo;
use zonal_examples::loops::{self, Csr, SHORT_ITEMS, SHORT_LOOPS, UNEVEN_ITEMS};
use zonal_examples::workloads::{
    fib_rayon, fib_zonal, scope_rayon, scope_zonal, sum_data, sum_grain, sum_rayon,
    sum_zonal_reduce, FIB, SCOPE_TASKS,
};

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A positional count of at least 1 (`ROUNDS`, `THREADS`): a usage error otherwise.
fn count(name: &str, text: &str) -> cli::Result<usize> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Exit::usage(format!(
            "{name}: expected a whole number of at least 1, got {text:?} (usage: vs_rayon \
             [ROUNDS [THREADS|all [FILTER]]])"
        ))),
    }
}

fn main() -> ExitCode {
    cli::finish("vs_rayon", run())
}

fn run() -> cli::Result {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() > 3 {
        return Err(Exit::usage(format!(
            "unexpected argument {:?} (usage: vs_rayon [ROUNDS [THREADS|all [FILTER]]])",
            args[3]
        )));
    }
    let rounds = args.first().map_or(Ok(60), |s| count("ROUNDS", s))?;
    let mut zb = zonal::runtime::ThreadPoolBuilder::new();
    if let Some(n) = args.get(1).filter(|n| *n != "all") {
        // THREADS: workers on the first n allowed CPUs.
        let n = count("THREADS", n)?;
        let cpus = zonal::topology::allowed_cpus().map_err(Exit::failure)?;
        zb = zb.worker_cpus(cpus.into_iter().take(n));
    }
    if std::env::var_os("ZONAL_NO_PIN").is_some() {
        zb = zb.pin(false);
    }
    let zp = zb.build().map_err(Exit::failure)?;
    let mut rb = rayon::ThreadPoolBuilder::new().num_threads(zp.num_workers());
    if std::env::var_os("RAYON_PIN").is_some() {
        // Like for like with Zonal's pinned workers: rayon's thread i on Zonal's worker i's
        // CPU.
        let cpus: Vec<u32> = zp.metrics().workers.iter().filter_map(|w| w.cpu).collect();
        rb = rb.start_handler(move |i| {
            let id = cpus[i];
            // A start handler cannot return an error: a rayon thread that cannot be pinned
            // runs unpinned, and says so.
            if let Err(e) = zonal::runtime::os::pin_current_thread(id) {
                eprintln!("vs_rayon: rayon thread {i} runs unpinned (CPU {id}: {e})");
            }
        });
    }
    let rp = rb.build().map_err(Exit::failure)?;
    let counter = AtomicUsize::new(0);
    let data = sum_data();
    let grain = sum_grain(data.len(), zp.num_workers());
    cli::out(format!(
        "{} workers, policy {}, {} interleaved rounds; zonal {}, rayon {}\n",
        zp.num_workers(),
        zp.policy_name(),
        rounds,
        if std::env::var_os("ZONAL_NO_PIN").is_some() {
            "unpinned"
        } else {
            "pinned"
        },
        if std::env::var_os("RAYON_PIN").is_some() {
            "pinned"
        } else {
            "unpinned"
        }
    ))?;
    let short = std::cell::RefCell::new(vec![1.0f64; SHORT_ITEMS]);
    let csr = Csr::skewed(1 << 16);
    let x: Vec<f64> = (0..csr.rows()).map(|i| (i % 7) as f64).collect();
    let y = std::cell::RefCell::new(vec![0.0f64; csr.rows()]);
    let small = std::cell::RefCell::new(demo::bodies(128));
    let large = std::cell::RefCell::new(demo::bodies(4096));
    type Run<'a> = Box<dyn Fn() + 'a>;
    let benches: Vec<(&str, Run<'_>, Run<'_>)> = vec![
        (
            "fib 25",
            Box::new(|| {
                black_box(zp.install(|| fib_zonal(black_box(FIB))));
            }),
            Box::new(|| {
                black_box(rp.install(|| fib_rayon(black_box(FIB))));
            }),
        ),
        (
            "scope 100k spawns",
            Box::new(|| scope_zonal(&zp, SCOPE_TASKS, &counter)),
            Box::new(|| scope_rayon(&rp, SCOPE_TASKS, &counter)),
        ),
        (
            "sum 16 Mi u64",
            Box::new(|| {
                black_box(sum_zonal_reduce(&zp, data, grain));
            }),
            Box::new(|| {
                black_box(sum_rayon(&rp, data));
            }),
        ),
        (
            "short loops 10k",
            Box::new(|| {
                let v: &mut [f64] = &mut short.borrow_mut();
                zp.install(|| loops::zonal_impl::short_loops(v, SHORT_LOOPS));
            }),
            Box::new(|| {
                let v: &mut [f64] = &mut short.borrow_mut();
                rp.install(|| loops::rayon_impl::short_loops(v, SHORT_LOOPS));
            }),
        ),
        (
            "short sums 10k",
            Box::new(|| {
                let v: &[f64] = &short.borrow();
                black_box(zp.install(|| loops::zonal_impl::short_sums(v, SHORT_LOOPS)));
            }),
            Box::new(|| {
                let v: &[f64] = &short.borrow();
                black_box(rp.install(|| loops::rayon_impl::short_sums(v, SHORT_LOOPS)));
            }),
        ),
        (
            "uneven items",
            Box::new(|| {
                black_box(zp.install(|| loops::zonal_impl::uneven(UNEVEN_ITEMS)));
            }),
            Box::new(|| {
                black_box(rp.install(|| loops::rayon_impl::uneven(UNEVEN_ITEMS)));
            }),
        ),
        (
            "sparse rows",
            Box::new(|| {
                let y: &mut [f64] = &mut y.borrow_mut();
                zp.install(|| loops::zonal_impl::spmv(&csr, &x, y));
            }),
            Box::new(|| {
                let y: &mut [f64] = &mut y.borrow_mut();
                rp.install(|| loops::rayon_impl::spmv(&csr, &x, y));
            }),
        ),
        (
            "nbody 128",
            Box::new(|| {
                let b: &mut [demo::Body] = &mut small.borrow_mut();
                zp.install(|| demo::zonal_impl::nbody_step(b, 0.01));
            }),
            Box::new(|| {
                let b: &mut [demo::Body] = &mut small.borrow_mut();
                rp.install(|| demo::rayon_impl::nbody_step(b, 0.01));
            }),
        ),
        (
            "nbody 4096",
            Box::new(|| {
                let b: &mut [demo::Body] = &mut large.borrow_mut();
                zp.install(|| demo::zonal_impl::nbody_step(b, 0.01));
            }),
            Box::new(|| {
                let b: &mut [demo::Body] = &mut large.borrow_mut();
                rp.install(|| demo::rayon_impl::nbody_step(b, 0.01));
            }),
        ),
    ];
    let filter = args.get(2).cloned().unwrap_or_default();
    for (name, z, r) in benches.iter().filter(|b| b.0.contains(filter.as_str())) {
        // Warm up both.
        for _ in 0..3 {
            z();
            r();
        }
        let (mut tz, mut tr) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            tz.push(time(z));
            tr.push(time(r));
        }
        let (mz, mr) = (median(&mut tz), median(&mut tr));
        let q = |v: &[Duration], f: f64| v[((v.len() - 1) as f64 * f) as usize];
        cli::out(format!(
            "{name:<18} zonal {mz:>10.3?}  rayon {mr:>10.3?}  ratio zonal/rayon {:.2}   \
             (quartiles zonal {:.3?}/{:.3?}, rayon {:.3?}/{:.3?})\n",
            mz.as_secs_f64() / mr.as_secs_f64(),
            q(&tz, 0.25),
            q(&tz, 0.75),
            q(&tr, 0.25),
            q(&tr, 0.75),
        ))?;
    }
    Ok(())
}
