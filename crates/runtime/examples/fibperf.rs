//! Temporary perf harness (not shipped).
#![allow(missing_docs)]
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
fn fib_z(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = zonal_runtime::join(|| fib_z(n - 1), || fib_z(n - 2));
    a + b
}
fn fib_r(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = rayon::join(|| fib_r(n - 1), || fib_r(n - 2));
    a + b
}
fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let mode = std::env::args().nth(2).unwrap_or_default();
    let zp = zonal_runtime::ThreadPoolBuilder::new().build().unwrap();
    let rp = rayon::ThreadPoolBuilder::new()
        .num_threads(zp.num_workers())
        .build()
        .unwrap();
    let c = AtomicUsize::new(0);
    let data: Vec<u64> = if what == "sum" {
        (0..16u64 << 20).collect()
    } else {
        vec![]
    };
    for _ in 0..10 {
        let t = Instant::now();
        match (what.as_str(), mode.as_str()) {
            ("fib", "z") => {
                zp.install(|| fib_z(30));
            }
            ("fib", _) => {
                rp.install(|| fib_r(30));
            }
            ("scope", "z") => zp.scope(|s| {
                for i in 0..100_000usize {
                    let c = &c;
                    s.spawn(move |_| {
                        c.fetch_add(i & 1, Ordering::Relaxed);
                    });
                }
            }),
            ("scope", _) => rp.scope(|s| {
                for i in 0..100_000usize {
                    let c = &c;
                    s.spawn(move |_| {
                        c.fetch_add(i & 1, Ordering::Relaxed);
                    });
                }
            }),
            ("sum", "z") => {
                std::hint::black_box(zp.par_reduce(
                    0..data.len(),
                    data.len() / 32,
                    || 0u64,
                    |r| data[r].iter().sum::<u64>(),
                    |a, b| a + b,
                ));
            }
            ("sum", _) => {
                use rayon::prelude::*;
                std::hint::black_box(rp.install(|| data.par_iter().sum::<u64>()));
            }
            _ => panic!("fib|scope|sum z|r"),
        }
        eprint!("{:?} ", t.elapsed());
    }
    let m = zp.metrics();
    eprintln!(
        "\nsteals {:?} run {} local {} parks {} idle_ms {}",
        m.total.steals_by_level,
        m.total.tasks_run,
        m.total.local_pops,
        m.total.parks,
        m.total.idle_ns / 1_000_000
    );
}
