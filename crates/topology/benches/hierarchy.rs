//! Benchmarks of the topology crate. These are regression tests: building the hierarchy must
//! stay cheap enough for 1024-node machines, and the lookups the steal path makes (victim
//! orders, `in_zone`, `level_between`) must stay O(1) and allocation-free — a few
//! nanoseconds, whatever the machine's size.
//!
//! - `build/*`: [`Topology::new`] from a [`Machine`] made outside the timed loop
//!   (`iter_batched`), for generated machines of 64, 256 and 1024 nodes (hierarchical
//!   fan-outs) and a 32×32 mesh (1024 nodes with 63 levels). Throughput is in CPUs.
//! - `lookup/*`: one victim-order lookup plus reading an entry, and one `in_zone` /
//!   `level_between` query, cycling over CPUs so that the branch predictor and caches see a
//!   realistic spread.
//!
//! Run with short times for a quick check:
//! `cargo bench -p zonal-topology --bench hierarchy -- --warm-up-time 1 --measurement-time 3`.

// criterion's macros generate undocumented functions.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use zonal_topology::{presets, CpuId, Machine, NodeId, Topology};

/// The generated machines: (label, machine).
fn machines() -> Vec<(&'static str, Machine)> {
    let tree = |fanout: &[usize]| presets::hierarchical_machine(fanout, 1).expect("valid fan-out");
    vec![
        ("fanout-4x4x4/64n", tree(&[4, 4, 4])),
        ("fanout-4x4x4x4/256n", tree(&[4, 4, 4, 4])),
        ("fanout-4x4x4x4x4/1024n", tree(&[4, 4, 4, 4, 4])),
        (
            "mesh-32x32/1024n",
            presets::mesh_machine(32, 32, false, 1).expect("valid mesh"),
        ),
    ]
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    for (label, machine) in machines() {
        group.throughput(Throughput::Elements(machine.cpus().len() as u64));
        group.bench_with_input(
            BenchmarkId::new("Topology::new", label),
            &machine,
            |b, m| {
                b.iter_batched(|| m.clone(), Topology::new, BatchSize::LargeInput);
            },
        );
    }
    group.finish();
}

/// Advances a cursor by `step` modulo `n` without a division (`step < n`).
#[inline]
fn advance(i: &mut usize, step: usize, n: usize) -> usize {
    *i += step;
    if *i >= n {
        *i -= n;
    }
    *i
}

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    group.throughput(Throughput::Elements(1));
    for (label, machine) in machines() {
        let t = Topology::new(machine);
        let ncpu = t.cpu_count();
        let nnode = t.node_count();
        // Strides co-prime with the sizes, so that consecutive queries hit different rows.
        let (step, other) = (97 % ncpu, 31 % nnode);

        group.bench_function(BenchmarkId::new("victims[mid]", label), |b| {
            let mut i = 0;
            b.iter(|| {
                let v = t.victims(black_box(CpuId::new(advance(&mut i, step, ncpu))));
                // Return one word: black-boxing the whole entry measures a store-forwarding
                // stall of the harness (narrow stores, then a wide load), not the lookup.
                black_box(v[v.len() / 2].cpu)
            });
        });
        group.bench_function(BenchmarkId::new("zone_victims[0]", label), |b| {
            let mut i = 0;
            b.iter(|| {
                let v = t.zone_victims(black_box(CpuId::new(advance(&mut i, step, ncpu))));
                black_box(v.first().map_or(CpuId(u32::MAX), |e| e.cpu))
            });
        });
        group.bench_function(BenchmarkId::new("in_zone", label), |b| {
            let (mut i, mut j) = (0, 0);
            b.iter(|| {
                let cpu = CpuId::new(advance(&mut i, step, ncpu));
                let node = NodeId::new(advance(&mut j, other, nnode));
                black_box(t.in_zone(black_box(cpu), black_box(node)))
            });
        });
        group.bench_function(BenchmarkId::new("level_between", label), |b| {
            let (mut i, mut j) = (0, 0);
            b.iter(|| {
                let a = CpuId::new(advance(&mut i, step, ncpu));
                let z = CpuId::new(advance(&mut j, other, ncpu));
                black_box(t.level_between(black_box(a), black_box(z)))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, build, lookup);
criterion_main!(benches);
