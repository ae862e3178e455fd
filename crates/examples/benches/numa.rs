//! NUMA-sensitive workloads (`zonal_examples::numa`): one group per workload, comparing
//! Zonal (conservative-hard, conservative-soft, linux) with rayon and tokio on the same
//! data size. The triad over every node, on one node, and with its data on the wrong node
//! (the control); the heat stencil; the pointer chase. (The service load runs for seconds
//! at a time, not in criterion's loop: `numa-report` measures it.)
//!
//! Sizes scale with the machine (`src/numa/sizes.rs`): 1/16 of the smallest node's memory
//! per workload and node (8 MiB..=1 GiB) under `cargo bench`, 1 MiB under `cargo test
//! --bench numa`, which runs each benchmark once; `ZONAL_NUMA_BYTES` (e.g. `256M`)
//! overrides both.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};

use zonal_examples::numa::host::Topo;
use zonal_examples::numa::kit::{Kit, WORKLOADS};
use zonal_examples::numa::sizes::{Mode, Sizes, BYTES_VAR};

fn numa(c: &mut Criterion) {
    // `cargo bench` passes `--bench`; `cargo test --bench numa` does not.
    let benching = std::env::args().any(|a| a == "--bench");
    let (topo, machine) = Topo::discover().unwrap_or_else(|e| panic!("the machine: {e}"));
    let var = std::env::var(BYTES_VAR).ok();
    let sizes = Sizes::new(
        &topo,
        if benching { Mode::Full } else { Mode::Test },
        var.as_deref(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let kit = Kit::new(topo, &machine, sizes).unwrap_or_else(|e| panic!("{e}"));
    let runtimes = kit.runtimes();
    for w in WORKLOADS {
        if w == "service" {
            continue;
        }
        let mut group = c.benchmark_group(format!("numa/{w}"));
        group.sample_size(10);
        let mut checksums = Vec::new();
        for (r, name) in runtimes.iter().enumerate() {
            let mut p = kit
                .prepare(w, r)
                .unwrap_or_else(|e| panic!("{w} on {name}: {e}"))
                .unwrap_or_else(|| panic!("{w} is a part workload"));
            p.run_once();
            checksums.push(p.checksum());
            group.bench_function(name.as_str(), |b| b.iter(|| p.run_once()));
            let s = p.slices();
            assert!(s.slices > 0, "{w} on {name}: no slice recorded");
        }
        assert!(
            checksums.windows(2).all(|p| p[0] == p[1]),
            "{w}: the runtimes disagree: {checksums:?}"
        );
        group.finish();
    }
}

criterion_group!(benches, numa);
criterion_main!(benches);
