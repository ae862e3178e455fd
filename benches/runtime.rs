//! Zonal's pool against rayon, side by side in the same run with the same number of
//! threads. These are regression tests: the target is "no slower than rayon" on each.
//!
//! - `fib`: recursive `join` (fib 25; the leaves are tiny, so this is the cost of a join);
//! - `scope_spawn`: one scope spawning 100,000 small tasks (and, as the async peer, a tokio
//!   multi-thread runtime with as many workers spawning the same 100,000 tasks into a
//!   `JoinSet` and awaiting them all);
//! - `sum`: a parallel sum over a 16 Mi-element `u64` slice.
//!
//! Pools are built once, outside `b.iter`. Zonal runs on this machine's topology with its
//! default policy (conservative-hard) and pinned workers (`zonal`), and the same pool with
//! pinning off (`zonal-unpinned`); rayon with `num_threads` = the same worker count (rayon
//! does not pin). The unpinned variant separates the runtime's own costs from pinning's: on
//! a machine shared with other busy processes a pinned worker cannot move away from them,
//! where the OS moves rayon's threads.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rayon::prelude::*;

fn zonal_pool(pin: bool) -> zonal_runtime::ThreadPool {
    zonal_runtime::ThreadPoolBuilder::new()
        .pin(pin)
        .build()
        .or_else(|e| {
            eprintln!("default pool failed ({e}); using no policy");
            zonal_runtime::ThreadPoolBuilder::new()
                .pin(pin)
                .no_policy()
                .build()
        })
        .expect("zonal pool")
}

fn rayon_pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("rayon pool")
}

fn tokio_runtime(n: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(n)
        .build()
        .expect("tokio runtime")
}

fn fib_zonal(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = zonal_runtime::join(|| fib_zonal(n - 1), || fib_zonal(n - 2));
    a + b
}

fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn benches(c: &mut Criterion) {
    let zp = zonal_pool(true);
    let zu = zonal_pool(false);
    let rp = rayon_pool(zp.num_workers());
    let threads = zp.num_workers();
    let zonals = [("zonal", &zp), ("zonal-unpinned", &zu)];

    let mut g = c.benchmark_group("fib");
    const FIB: u32 = 25;
    for (name, zp) in zonals {
        g.bench_function(BenchmarkId::new(name, FIB), |b| {
            b.iter(|| zp.install(|| fib_zonal(black_box(FIB))))
        });
    }
    g.bench_function(BenchmarkId::new("rayon", FIB), |b| {
        b.iter(|| rp.install(|| fib_rayon(black_box(FIB))))
    });
    g.finish();

    let mut g = c.benchmark_group("scope_spawn");
    const TASKS: usize = 100_000;
    g.throughput(Throughput::Elements(TASKS as u64));
    let counter = AtomicUsize::new(0);
    for (name, zp) in zonals {
        g.bench_function(BenchmarkId::new(name, TASKS), |b| {
            b.iter(|| {
                zp.scope(|s| {
                    for i in 0..TASKS {
                        let counter = &counter;
                        s.spawn(move |_| {
                            counter.fetch_add(black_box(i) & 1, Ordering::Relaxed);
                        });
                    }
                })
            })
        });
    }
    g.bench_function(BenchmarkId::new("rayon", TASKS), |b| {
        b.iter(|| {
            rp.scope(|s| {
                for i in 0..TASKS {
                    let counter = &counter;
                    s.spawn(move |_| {
                        counter.fetch_add(black_box(i) & 1, Ordering::Relaxed);
                    });
                }
            })
        })
    });
    // tokio tasks are 'static: the counter is a static of the same shape.
    static TOKIO_COUNTER: AtomicUsize = AtomicUsize::new(0);
    let rt = tokio_runtime(threads);
    g.bench_function(BenchmarkId::new("tokio", TASKS), |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut set = tokio::task::JoinSet::new();
                for i in 0..TASKS {
                    set.spawn(async move {
                        TOKIO_COUNTER.fetch_add(black_box(i) & 1, Ordering::Relaxed);
                    });
                }
                while set.join_next().await.is_some() {}
            })
        })
    });
    g.finish();

    let mut g = c.benchmark_group("sum");
    const LEN: usize = 16 << 20;
    let data: Vec<u64> = (0..LEN as u64).collect();
    g.throughput(Throughput::Bytes((LEN * 8) as u64));
    let grain = (LEN / (threads * 16)).max(4096);
    for (name, zp) in zonals {
        g.bench_function(BenchmarkId::new(name, LEN), |b| {
            b.iter(|| {
                zp.par_reduce(
                    0..LEN,
                    grain,
                    || 0u64,
                    |r| data[r].iter().sum::<u64>(),
                    |a, b| a + b,
                )
            })
        });
    }
    g.bench_function(BenchmarkId::new("rayon", LEN), |b| {
        b.iter(|| rp.install(|| data.par_iter().sum::<u64>()))
    });
    g.finish();
}

criterion_group!(runtime, benches);
criterion_main!(runtime);
