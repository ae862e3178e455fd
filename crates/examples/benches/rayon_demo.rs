//! rayon-demo-style programs on Zonal and rayon, side by side in one criterion run, with the
//! same worker count: quicksort, mergesort, n-body, Game of Life, matrix multiply and two
//! map-reduces (`src/demo.rs`: one source, compiled against both preludes).
//! Criterion's report groups each workload's two variants (and plots them); the paired
//! figures of BENCHMARKS.md come from `examples/rayon_demo.rs`.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};

use zonal_examples::demo;

fn benches(c: &mut Criterion) {
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let zp = zonal::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("zonal pool");
    let rp = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("rayon pool");

    let mut g = c.benchmark_group("quicksort");
    let input = demo::random_u64s(1 << 20, 1);
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter_batched_ref(
            || input.clone(),
            |v| zp.install(|| demo::zonal_impl::quicksort(v)),
            BatchSize::LargeInput,
        );
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter_batched_ref(
            || input.clone(),
            |v| rp.install(|| demo::rayon_impl::quicksort(v)),
            BatchSize::LargeInput,
        );
    });
    g.finish();

    let mut g = c.benchmark_group("mergesort");
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter_batched_ref(
            || input.clone(),
            |v| zp.install(|| demo::zonal_impl::mergesort(v)),
            BatchSize::LargeInput,
        );
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter_batched_ref(
            || input.clone(),
            |v| rp.install(|| demo::rayon_impl::mergesort(v)),
            BatchSize::LargeInput,
        );
    });
    g.finish();

    let mut g = c.benchmark_group("nbody");
    let bodies = demo::bodies(1000);
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter_batched_ref(
            || bodies.clone(),
            |v| zp.install(|| demo::zonal_impl::nbody_step(v, 0.01)),
            BatchSize::SmallInput,
        );
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter_batched_ref(
            || bodies.clone(),
            |v| rp.install(|| demo::rayon_impl::nbody_step(v, 0.01)),
            BatchSize::SmallInput,
        );
    });
    g.finish();

    let mut g = c.benchmark_group("life");
    let (w, h) = (512, 512);
    let cur = demo::board(w, h);
    let mut next = vec![0u8; w * h];
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| zp.install(|| demo::zonal_impl::life_step(&cur, &mut next, w, h)));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| rp.install(|| demo::rayon_impl::life_step(&cur, &mut next, w, h)));
    });
    g.finish();

    let mut g = c.benchmark_group("matmul");
    let m = 192;
    let (a, bm) = (demo::matrix(m, 3), demo::matrix(m, 4));
    let mut cm = vec![0.0; m * m];
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| zp.install(|| demo::zonal_impl::matmul(&a, &bm, &mut cm, m)));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| rp.install(|| demo::rayon_impl::matmul(&a, &bm, &mut cm, m)));
    });
    g.finish();

    let mut g = c.benchmark_group("map_reduce");
    let v = demo::random_u64s(1 << 22, 5);
    g.bench_function(BenchmarkId::new("zonal", n), |b| {
        b.iter(|| zp.install(|| demo::zonal_impl::map_reduce(&v)));
    });
    g.bench_function(BenchmarkId::new("rayon", n), |b| {
        b.iter(|| rp.install(|| demo::rayon_impl::map_reduce(&v)));
    });
    g.finish();
}

criterion_group!(rayon_demo, benches);
criterion_main!(rayon_demo);
