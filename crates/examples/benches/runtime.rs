//! Zonal's pool against rayon, side by side in the same run with the same number of
//! threads. These are regression tests: the target is "no slower than rayon" on each.
//!
//! - `fib`: recursive `join` (fib 25; the leaves are tiny, so this is the cost of a join);
//! - `scope_spawn`: one scope spawning 100,000 small tasks (and, as the async peer, a tokio
//!   multi-thread runtime with as many workers spawning the same 100,000 tasks into a
//!   `JoinSet` and awaiting them all);
//! - `sum`: a parallel sum over a 16 Mi-element `u64` slice.
//!
//! The workloads are `zonal_examples::workloads` (one copy, shared with the `vs_rayon` and
//! `scaling` programs).
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
use std::sync::atomic::AtomicUsize;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zonal_examples::workloads::{
    fib_rayon, fib_zonal, scope_rayon, scope_tokio, scope_zonal, sum_data, sum_grain, sum_rayon,
    sum_zonal_reduce, FIB, SCOPE_TASKS,
};

fn zonal_pool(pin: bool) -> zonal::ThreadPool {
    zonal::ThreadPoolBuilder::new()
        .pin(pin)
        .build()
        .or_else(|e| {
            eprintln!("default pool failed ({e}); using no policy");
            zonal::ThreadPoolBuilder::new().pin(pin).no_policy().build()
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

fn benches(c: &mut Criterion) {
    let zp = zonal_pool(true);
    let zu = zonal_pool(false);
    let rp = rayon_pool(zp.num_workers());
    let threads = zp.num_workers();
    let zonals = [("zonal", &zp), ("zonal-unpinned", &zu)];

    let mut g = c.benchmark_group("fib");
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
    g.throughput(Throughput::Elements(SCOPE_TASKS as u64));
    let counter = AtomicUsize::new(0);
    for (name, zp) in zonals {
        g.bench_function(BenchmarkId::new(name, SCOPE_TASKS), |b| {
            b.iter(|| scope_zonal(zp, SCOPE_TASKS, &counter))
        });
    }
    g.bench_function(BenchmarkId::new("rayon", SCOPE_TASKS), |b| {
        b.iter(|| scope_rayon(&rp, SCOPE_TASKS, &counter))
    });
    let rt = tokio_runtime(threads);
    g.bench_function(BenchmarkId::new("tokio", SCOPE_TASKS), |b| {
        b.iter(|| scope_tokio(&rt, SCOPE_TASKS, &counter))
    });
    g.finish();

    let mut g = c.benchmark_group("sum");
    let data = sum_data();
    let len = data.len();
    g.throughput(Throughput::Bytes((len * 8) as u64));
    let grain = sum_grain(len, threads);
    for (name, zp) in zonals {
        g.bench_function(BenchmarkId::new(name, len), |b| {
            b.iter(|| sum_zonal_reduce(zp, data, grain))
        });
    }
    g.bench_function(BenchmarkId::new("rayon", len), |b| {
        b.iter(|| sum_rayon(&rp, data))
    });
    g.finish();
}

criterion_group!(runtime, benches);
criterion_main!(runtime);
