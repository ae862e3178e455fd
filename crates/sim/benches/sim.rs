//! Simulator speed, in events per second: the paper's S1 and a 1024-CPU fan-out tree.
//!
//! These benches are regression tests of the simulator's speed. Each case runs one whole
//! simulation per iteration; the workload and policy are built outside the timed loop, and
//! the throughput is the run's event count (arrivals, segment ends, I/O completions, ticks).
//! `null` is `zonal_policy::NoPolicy`: every task starts on its parent CPU, nothing balances; it
//! measures the engine alone; `linux` adds the cost of the Linux baseline's decisions;
//! `linux-2.6` is the paper's 2.6-era baseline with the 2.6 balancer's cost
//! (`CostModel::for_linux_era`: the fitted tick and load lag), the reproduction's 2.6 variants.
//!
//! ```text
//! cargo bench -p zonal-sim --bench sim -- --warm-up-time 1 --measurement-time 5
//! ```

use criterion::{criterion_main, BenchmarkId, Criterion, Throughput};
use zonal_policy::{LinuxEra, NoPolicy, Policy, Rng};
use zonal_sim::{simulate, Arrival, CostModel, ExecTime, SimConfig, WorkloadSpec};
use zonal_topology::Topology;

fn case(c: &mut Criterion, group: &str, topo: &Topology, procs: usize, policies: &[&str]) {
    let spec = WorkloadSpec {
        procs,
        exec: ExecTime::Fixed(200),
        arrival: Arrival::Uniform { window_ms: 1_000 },
        io_share: 0.5,
    };
    let cost = CostModel::default();
    let w = spec.generate(topo.cpu_count(), cost.mem_bound_range, &mut Rng::new(1));
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    for &name in policies {
        let v2_6 = name.ends_with("-2.6");
        let cfg = SimConfig {
            seed: 1,
            cost: cost.for_linux_era(v2_6),
            ..SimConfig::default()
        };
        let policy: std::sync::Arc<dyn Policy> = if name == "null" {
            std::sync::Arc::new(NoPolicy)
        } else {
            let built = zonal_policy::PolicyConfig::named(name.trim_end_matches("-2.6")).and_then(
                |mut p| {
                    if v2_6 {
                        p.linux_era = LinuxEra::V2_6;
                    }
                    p.build()
                },
            );
            match built {
                Ok(p) => p,
                Err(_) => continue,
            }
        };
        let events = simulate(topo, policy.as_ref(), &w, &cfg).stats.events;
        g.throughput(Throughput::Elements(events));
        g.bench_with_input(BenchmarkId::new(name, procs), &w, |b, w| {
            b.iter(|| simulate(topo, policy.as_ref(), w, &cfg).stats.events);
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let s1 = zonal_topology::presets::preset("s1").expect("s1");
    case(
        c,
        "sim-s1",
        &s1,
        400,
        &["null", "linux", "conservative-hard", "linux-2.6"],
    );
    let big = zonal_topology::presets::hierarchical(&[4, 4, 4, 4, 4], 1).expect("tree");
    case(c, "sim-1024cpu", &big, 20_000, &["null"]);
    case(c, "sim-1024cpu", &big, 1_000, &["linux"]);
}

#[allow(missing_docs, unreachable_pub)]
mod group {
    criterion::criterion_group!(sim, super::benches);
}
criterion_main!(group::sim);
