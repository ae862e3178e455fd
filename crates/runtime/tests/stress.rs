//! Exactly-once: a million tasks through nested joins, scopes, spawns, node spawns and
//! continuations, with panics sprinkled in; every task must be counted exactly once.

mod common;

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use zonal_runtime::{TaskOptions, ThreadPoolBuilder};
use zonal_topology::NodeId;

const N: usize = 1_000_000;
const LEAF: usize = 1;

struct Ctx {
    hits: Vec<AtomicU8>,
    nodes: u32,
}

fn leaf(ctx: &Ctx, lo: usize, hi: usize, may_panic: bool) {
    for id in lo..hi {
        ctx.hits[id].fetch_add(1, Ordering::Relaxed);
    }
    if may_panic && lo % 4099 == 0 {
        panic!("planned panic at {lo}");
    }
}

fn run(ctx: &Arc<Ctx>, lo: usize, hi: usize, depth: u32) {
    if hi - lo <= LEAF {
        leaf(ctx, lo, hi, true);
        return;
    }
    let mid = lo + (hi - lo) / 2;
    // 'static spawns are not waited for, and a worker blocked in a join or scope runs
    // whatever it finds (as rayon's do): deep trees of them would nest without bound on the
    // stack, so they are spawned only near the leaves.
    let kind = match depth % 4 {
        2 if hi - lo > 256 => 0,
        k => k,
    };
    match kind {
        0 | 3 => {
            // Panics of either half resume here once both are done; swallow some of them.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                zonal_runtime::join(
                    || run(ctx, lo, mid, depth + 1),
                    || run(ctx, mid, hi, depth + 1),
                )
            }));
            if r.is_err() && depth % 8 != 0 {
                panic!("propagated");
            }
        }
        1 => {
            let q = (hi - lo) / 4;
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                zonal_runtime::scope(|s| {
                    for k in 0..4 {
                        let a = lo + k * q;
                        let b = if k == 3 { hi } else { a + q };
                        if k == 2 {
                            let node = NodeId((a as u32 / 64) % ctx.nodes);
                            s.spawn_on(node, move |_| run(ctx, a, b, depth + 1));
                        } else {
                            s.spawn(move |_| run(ctx, a, b, depth + 1));
                        }
                    }
                })
            }));
        }
        _ => {
            // 'static spawns: the first half as a continuation (inherits migrations: ages),
            // the second as a fresh task; panics go to the panic handler.
            let (c1, c2) = (Arc::clone(ctx), Arc::clone(ctx));
            zonal_runtime::spawn_with(TaskOptions::new().continuation(), move || {
                run(&c1, lo, mid, depth + 1)
            });
            zonal_runtime::spawn(move || {
                run(&c2, mid, hi, depth + 1);
                if mid % 5 == 0 {
                    panic!("planned panic in a spawned task");
                }
            });
        }
    }
}

fn stress(builder: ThreadPoolBuilder, n: usize) {
    // Planned panics by the thousand: keep the output readable.
    std::panic::set_hook(Box::new(|_| {}));
    let panics = Arc::new(AtomicUsize::new(0));
    let p2 = Arc::clone(&panics);
    // A worker waiting in a join or scope runs whatever it finds (as rayon's do), including
    // the quarter-trees this test aims at node injectors, so nesting grows with contention.
    // Measured in debug builds (deepest stack of any worker, 5 runs each, before and after
    // the job blocks): 11-14 MiB typically, once 56 MiB. Stacks are reserved, not touched:
    // give the workers far more than that.
    let pool = builder
        .stack_size(256 << 20)
        .panic_handler(move |_| {
            p2.fetch_add(1, Ordering::Relaxed);
        })
        .build()
        .expect("pool");
    let ctx = Arc::new(Ctx {
        hits: (0..n).map(|_| AtomicU8::new(0)).collect(),
        nodes: pool.topology().node_count() as u32,
    });
    let c = Arc::clone(&ctx);
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool.install(|| run(&c, 0, n, 0))
    }));
    let m_before_drop = pool.metrics();
    pool.shutdown_and_wait(); // every spawned task ran
    let bad: Vec<(usize, u8)> = ctx
        .hits
        .iter()
        .enumerate()
        .map(|(i, h)| (i, h.load(Ordering::Relaxed)))
        .filter(|&(_, h)| h != 1)
        .take(10)
        .collect();
    assert!(
        bad.is_empty(),
        "tasks not run exactly once (id, times): {bad:?}"
    );
    assert!(
        panics.load(Ordering::Relaxed) > 0,
        "the spawned panics reached the handler"
    );
    assert!(m_before_drop.total.tasks_run > 0);
    eprintln!(
        "{} ids, {} tasks spawned, steals by level {:?}, refused {}",
        n,
        m_before_drop.tasks_spawned(),
        m_before_drop.total.steals_by_level,
        m_before_drop.total.refused.total()
    );
}

#[test]
fn million_tasks_exactly_once_s1_conservative() {
    stress(
        ThreadPoolBuilder::new()
            .preset("s1")
            .policy(Arc::new(common::MiniConservative { age_limit: 2 })),
        N,
    );
}

#[test]
fn exactly_once_this_machine_no_policy() {
    stress(ThreadPoolBuilder::new().pin(false).no_policy(), N);
}

/// Job memory (`blocks.rs`): bursts of spawns of every block class and of boxed sizes,
/// spawned by one worker and run by others, with pauses in between so that workers park and
/// give their slabs back; every task runs exactly once and sees its own captures intact.
#[test]
fn bursts_of_spawns_of_every_size_run_exactly_once() {
    const BURST: usize = 60_000;
    for builder in [
        ThreadPoolBuilder::new().preset("s1").no_policy(),
        ThreadPoolBuilder::new().pin(false).no_policy(),
    ] {
        let pool = builder.build().expect("pool");
        let hits: Vec<AtomicU8> = (0..BURST).map(|_| AtomicU8::new(0)).collect();
        let statics = Arc::new(AtomicUsize::new(0));
        for round in 0..4u8 {
            pool.scope(|s| {
                for id in 0..BURST {
                    let hits = &hits;
                    // Three job sizes: a 32-byte block, a 64-byte block, a box.
                    match id % 3 {
                        0 => s.spawn(move |_| {
                            hits[id].fetch_add(1, Ordering::Relaxed);
                        }),
                        1 => {
                            let pad = [id as u64; 3];
                            s.spawn(move |_| {
                                assert_eq!(pad, [id as u64; 3], "captures intact");
                                hits[id].fetch_add(1, Ordering::Relaxed);
                            })
                        }
                        _ => {
                            let pad = [id as u64; 12];
                            s.spawn(move |_| {
                                assert_eq!(pad, [id as u64; 12], "captures intact");
                                hits[id].fetch_add(1, Ordering::Relaxed);
                            })
                        }
                    }
                    if id % 1000 == 0 {
                        let statics = Arc::clone(&statics);
                        zonal_runtime::spawn(move || {
                            statics.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                }
            });
            let wrong = hits
                .iter()
                .position(|h| h.load(Ordering::Relaxed) != round + 1);
            assert_eq!(wrong, None, "round {round}: a task ran other than once");
            // Let the workers run dry and park (and trim) before the next burst.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        pool.shutdown_and_wait();
        assert_eq!(statics.load(Ordering::Relaxed), 4 * BURST.div_ceil(1000));
    }
}
