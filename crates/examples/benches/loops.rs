//! Regression benches for a parallel loop's own cost (issue 42), Zonal beside rayon with the
//! same worker count, one group per shape (`zonal_examples::loops`): many short loops
//! (10,000 `par_iter_mut().for_each` loops of 1,000 items, and as many `sum`s), items of
//! uneven cost, a sparse matrix-vector product over skewed rows, and n-body with dynamic
//! splitting at 128 and 4,096 bodies. The paired, interleaved figures of BENCHMARKS.md
//! ("Parallel loops") come from `examples/vs_rayon.rs`, which runs the same workloads.
//!
//! `cargo test --bench loops` (in CI) runs each once, with fewer loops, and checks that
//! both runtimes compute the same results.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};

use zonal_examples::demo;
use zonal_examples::loops::{self, Csr, SHORT_ITEMS, SHORT_LOOPS, UNEVEN_ITEMS};

fn benches(c: &mut Criterion) {
    // `cargo bench` passes `--bench`; `cargo test --bench loops` does not.
    let benching = std::env::args().any(|a| a == "--bench");
    let short_loops = if benching { SHORT_LOOPS } else { 100 };
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let zp = zonal::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("zonal pool");
    let rp = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("rayon pool");

    let mut g = c.benchmark_group("short_loops");
    let mut v = vec![1.0f64; SHORT_ITEMS];
    let mut w = v.clone();
    zp.install(|| loops::zonal_impl::short_loops(&mut v, 3));
    rp.install(|| loops::rayon_impl::short_loops(&mut w, 3));
    assert_eq!(v, w, "short loops: the runtimes disagree");
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| zp.install(|| loops::zonal_impl::short_loops(&mut v, short_loops)));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| rp.install(|| loops::rayon_impl::short_loops(&mut w, short_loops)));
    });
    g.finish();

    let mut g = c.benchmark_group("short_sums");
    let v: Vec<f64> = (0..SHORT_ITEMS).map(|i| (i % 10) as f64).collect();
    // Sums of small integers in any order: exact, so both runtimes agree.
    assert_eq!(
        zp.install(|| loops::zonal_impl::short_sums(&v, 4)),
        rp.install(|| loops::rayon_impl::short_sums(&v, 4)),
        "short sums: the runtimes disagree"
    );
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| black_box(zp.install(|| loops::zonal_impl::short_sums(&v, short_loops))));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| black_box(rp.install(|| loops::rayon_impl::short_sums(&v, short_loops))));
    });
    g.finish();

    let mut g = c.benchmark_group("uneven_items");
    assert_eq!(
        zp.install(|| loops::zonal_impl::uneven(UNEVEN_ITEMS)),
        rp.install(|| loops::rayon_impl::uneven(UNEVEN_ITEMS)),
        "uneven items: the runtimes disagree"
    );
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| black_box(zp.install(|| loops::zonal_impl::uneven(UNEVEN_ITEMS))));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| black_box(rp.install(|| loops::rayon_impl::uneven(UNEVEN_ITEMS))));
    });
    g.finish();

    let mut g = c.benchmark_group("sparse_rows");
    let a = Csr::skewed(if benching { 1 << 16 } else { 1 << 10 });
    let x: Vec<f64> = (0..a.rows()).map(|i| (i % 7) as f64).collect();
    let (mut yz, mut yr) = (vec![0.0; a.rows()], vec![0.0; a.rows()]);
    zp.install(|| loops::zonal_impl::spmv(&a, &x, &mut yz));
    rp.install(|| loops::rayon_impl::spmv(&a, &x, &mut yr));
    assert_eq!(yz, yr, "sparse rows: the runtimes disagree");
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| zp.install(|| loops::zonal_impl::spmv(&a, &x, &mut yz)));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| rp.install(|| loops::rayon_impl::spmv(&a, &x, &mut yr)));
    });
    g.finish();

    for bodies in [128, 4096] {
        let mut g = c.benchmark_group(format!("nbody_{bodies}"));
        let input = demo::bodies(if benching { bodies } else { bodies / 8 });
        let (mut bz, mut br) = (input.clone(), input.clone());
        zp.install(|| demo::zonal_impl::nbody_step(&mut bz, 0.01));
        rp.install(|| demo::rayon_impl::nbody_step(&mut br, 0.01));
        assert_eq!(bz, br, "nbody {bodies}: the runtimes disagree");
        g.bench_function(BenchmarkId::new("zonal", n), |b| {
            b.iter_batched_ref(
                || input.clone(),
                |v| zp.install(|| demo::zonal_impl::nbody_step(v, 0.01)),
                BatchSize::SmallInput,
            );
        });
        g.bench_function(BenchmarkId::new("rayon", n), |b| {
            b.iter_batched_ref(
                || input.clone(),
                |v| rp.install(|| demo::rayon_impl::nbody_step(v, 0.01)),
                BatchSize::SmallInput,
            );
        });
        g.finish();
    }
}

criterion_group!(loops_benches, benches);
criterion_main!(loops_benches);
