//! The cost of one balancing pass of the control plane (`src/balance/`) over a 1024-CPU
//! machine: a 4×4×4×4 fan-out tree of 4-CPU nodes (256 nodes, 5 levels).
#![allow(missing_docs)]
//!
//! A pool of 1024 worker threads is too heavy for a small host, so the pass runs over a
//! `SyntheticPool`: the same driver code (`driver.rs`: sampling every worker, the view, one
//! `BalanceSide::balance` call per CPU, applying migrations with the real eligibility
//! re-check), over queues in plain memory instead of crossbeam's.
//!
//! - `first`: the first pass over a loaded machine: every CPU's states are created and every
//!   level of every CPU is due; node 0's CPUs idle, every other CPU runs and holds 0–4
//!   queued tasks (seeded), born on its node.
//! - `tick`: a pass 4 ms after that one, as the control plane runs them: few levels due.
//!
//! Goal: under 100 µs per pass, so that a balancing tick every few milliseconds costs the
//! pool a few percent of one worker at most.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use zonal_policy::{PolicyConfig, Rng};
use zonal_runtime::SyntheticPool;
use zonal_topology::{presets, NodeId};

const NOW: u64 = 100_000_000;

fn machine(policy: &str) -> SyntheticPool {
    let topo = Arc::new(presets::hierarchical(&[4, 4, 4, 4], 4).unwrap());
    assert_eq!(topo.cpu_count(), 1024);
    let policy = PolicyConfig::named(policy).unwrap().build().unwrap();
    let mut rng = Rng::new(42);
    let t = Arc::clone(&topo);
    SyntheticPool::new(topo, policy, move |c| {
        if t.node_of(c) == NodeId(0) {
            (0, true)
        } else {
            (rng.below(5) as u32, false)
        }
    })
}

fn pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("control_pass_1024cpu");
    for policy in ["linux", "conservative-hard"] {
        let base = machine(policy);
        g.bench_function(format!("{policy}/first"), |b| {
            b.iter_batched(
                || base.clone(),
                |mut m| {
                    let r = m.pass(NOW);
                    (m, r) // dropped after the timing
                },
                BatchSize::LargeInput,
            );
        });
        let mut after = base.clone();
        let first = after.pass(NOW);
        assert!(first.balances);
        g.bench_function(format!("{policy}/tick"), |b| {
            b.iter_batched(
                || after.clone(),
                |mut m| {
                    let r = m.pass(NOW + 4_000);
                    (m, r)
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, pass);
criterion_main!(benches);
