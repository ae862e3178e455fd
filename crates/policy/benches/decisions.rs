//! The cost of policy decisions: regression benches, not a contest.
#![allow(missing_docs)]
//!
//! - `eligibility`: one steal-eligibility check (zone, origin, ageing, cache-hotness) through
//!   `Arc<dyn Policy>`, as the runtime's steal path makes it.
//! - `victim`: one victim decision.
//! - `balance`: one periodic pass of an idle CPU with every level due, over a machine with
//!   0–4 tasks per CPU (seeded); a fresh state per iteration (`iter_batched`), the view built
//!   once outside the timed loop.
//!
//! Machines: 64 CPUs = the paper's `s2` (16 nodes × 4, 6 levels); 256 = a 4×4×4 fan-out
//! tree of 4-CPU nodes (64 nodes, 4 levels); 1024 = a 4×4×4×4 tree of 4-CPU nodes
//! (256 nodes, 5 levels).
//!
//! Targets (a check runs before every steal, a pass every balancing tick): an eligibility
//! check in single-digit nanoseconds; a 1024-CPU pass well under 100 µs.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use zonal_policy::{
    CpuBalanceState, CpuPass, MoveContext, PolicyConfig, Rng, SnapshotView, TaskId, TaskMeta,
};
use zonal_topology::{presets, CpuId, NodeId, Topology};

const NOW: u64 = 100_000_000;

fn machines() -> Vec<(usize, Arc<Topology>)> {
    vec![
        (64, Arc::new(presets::preset("s2").unwrap())),
        (256, Arc::new(presets::hierarchical(&[4, 4, 4], 4).unwrap())),
        (
            1024,
            Arc::new(presets::hierarchical(&[4, 4, 4, 4], 4).unwrap()),
        ),
    ]
}

/// `steady`: two tasks on every CPU (CPU 0 busy; every level is walked and balanced).
/// `pull`: 0–4 tasks on every CPU outside node 0, born on their CPU's node or a random one;
/// node 0 idle, so CPU 0 balances as the first idle CPU and pulls.
fn loaded_view(topo: &Arc<Topology>, steady: bool) -> SnapshotView {
    let mut v = SnapshotView::new(Arc::clone(topo));
    v.set_now(NOW);
    let mut rng = Rng::new(42);
    let nodes: Vec<NodeId> = topo.cpu_nodes().collect();
    let mut id = 0;
    for c in 0..topo.cpu_count() {
        let cpu = CpuId::new(c);
        let n = if steady {
            2
        } else if topo.node_of(cpu) == NodeId(0) {
            0
        } else {
            rng.below(5)
        };
        for k in 0..n {
            let origin = if rng.below(4) == 0 {
                nodes[rng.below(nodes.len())]
            } else {
                topo.node_of(cpu)
            };
            let mut t = TaskMeta::new(TaskId(id), origin, cpu);
            id += 1;
            t.running = k == 0;
            t.migrations = rng.below(3) as u32;
            t.last_ran_us = Some(NOW - 1_000 * rng.below(4) as u64);
            v.push_task(t);
        }
    }
    v
}

fn steal_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("steal_path");
    let policy = PolicyConfig::named("conservative-hard")
        .unwrap()
        .build()
        .unwrap();
    for (n, topo) in machines() {
        let thief = CpuId(0);
        // A victim inside the zone, one level up; a task away from home.
        let victim = *topo
            .zone_victims(thief)
            .iter()
            .rev()
            .find(|v| v.level.0 > 0)
            .unwrap();
        let ctx = MoveContext::steal(NOW);
        // At home on the victim's node (the common case), and away from home (born on the
        // thief's node: the origin-distance rule reads two distances).
        for (case, origin) in [
            ("eligibility", topo.node_of(victim.cpu)),
            ("eligibility-away", topo.node_of(thief)),
        ] {
            let mut task = TaskMeta::new(TaskId(1), origin, victim.cpu);
            task.migrations = 1;
            task.last_ran_us = Some(NOW - 10_000);
            assert!(policy
                .steal_side()
                .eligibility(&topo, &task, thief, ctx)
                .is_allowed());
            g.bench_function(BenchmarkId::new(case, n), |b| {
                b.iter(|| {
                    policy.steal_side().eligibility(
                        black_box(&topo),
                        black_box(&task),
                        black_box(thief),
                        black_box(ctx),
                    )
                })
            });
        }
        g.bench_function(BenchmarkId::new("victim", n), |b| {
            b.iter(|| {
                policy.steal_side().victim(
                    black_box(&topo),
                    black_box(thief),
                    black_box(&victim),
                    black_box(0),
                    black_box(3),
                )
            })
        });
    }
    g.finish();
}

fn periodic_pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("balance");
    for name in ["linux", "conservative-hard"] {
        let policy = PolicyConfig::named(name).unwrap().build().unwrap();
        for (n, topo) in machines() {
            for (shape, steady) in [("steady", true), ("pull", false)] {
                let view = loaded_view(&topo, steady);
                let mut st = CpuBalanceState::new(&topo, CpuId(0));
                let out = policy.balance_side().unwrap().balance(CpuPass::new(
                    &view,
                    &mut st,
                    &mut Rng::new(1),
                ));
                eprintln!(
                    "{name}/{shape}/{n}: {} attempts (levels {:?}), {} migrations, {} CPUs scanned",
                    out.attempts.len(),
                    out.attempts.iter().map(|a| a.level.0).collect::<Vec<_>>(),
                    out.migrations.len(),
                    out.attempts.iter().map(|a| a.cpus_scanned).sum::<u32>(),
                );
                g.bench_function(BenchmarkId::new(format!("{name}/{shape}"), n), |b| {
                    b.iter_batched(
                        || (CpuBalanceState::new(&topo, CpuId(0)), Rng::new(1)),
                        |(mut st, mut rng)| {
                            policy
                                .balance_side()
                                .unwrap()
                                .balance(CpuPass::new(&view, &mut st, &mut rng))
                        },
                        BatchSize::SmallInput,
                    )
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, steal_path, periodic_pass);
criterion_main!(benches);
