//! The scaling benchmark's workloads, each on Zonal, rayon and tokio.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Which runtime.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    Zonal,
    Rayon,
    Tokio,
}

/// The runtimes, in the order each round runs them.
pub(crate) const RUNTIMES: [Kind; 3] = [Kind::Zonal, Kind::Rayon, Kind::Tokio];

/// A pool of one kind with `n` workers.
pub(crate) enum Runtime {
    Zonal(zonal::ThreadPool),
    Rayon(rayon::ThreadPool),
    Tokio(tokio::runtime::Runtime),
}

impl Runtime {
    /// Zonal: this machine, the default policy, `num_threads(n)`, pinned if `pin`; rayon: `num_threads(n)`;
    /// tokio: a multi-thread runtime with `n` workers.
    pub(crate) fn new(kind: Kind, n: usize, pin: bool) -> Result<Self, String> {
        Ok(match kind {
            Kind::Zonal => Runtime::Zonal(
                zonal::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .pin(pin)
                    .build()
                    .map_err(|e| format!("zonal pool of {n}: {e}"))?,
            ),
            Kind::Rayon => Runtime::Rayon(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| format!("rayon pool of {n}: {e}"))?,
            ),
            Kind::Tokio => Runtime::Tokio(
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(n)
                    .build()
                    .map_err(|e| format!("tokio runtime of {n}: {e}"))?,
            ),
        })
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Runtime::Zonal(_) => "zonal",
            Runtime::Rayon(_) => "rayon",
            Runtime::Tokio(_) => "tokio",
        }
    }
}

/// A workload: runs once on a runtime and returns the time it took.
pub(crate) struct Workload {
    pub(crate) name: &'static str,
    pub(crate) run: fn(&Runtime) -> Result<Duration, String>,
}

pub(crate) const WORKLOADS: &[Workload] = &[
    Workload {
        name: "scope_100k",
        run: scope_100k,
    },
    Workload {
        name: "outside_10k",
        run: outside_10k,
    },
    Workload {
        name: "chain_10k",
        run: chain_10k,
    },
    Workload {
        name: "fib_25",
        run: fib_25,
    },
    Workload {
        name: "sum_16mi",
        run: sum_16mi,
    },
];

const SCOPE_TASKS: usize = 100_000;
const OUTSIDE_TASKS: usize = 10_000;
const CHAIN: usize = 10_000;
const FIB: u32 = 25;
const SUM_LEN: usize = 16 << 20;

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

fn scope_100k(rt: &Runtime) -> Result<Duration, String> {
    let counter = AtomicUsize::new(0);
    let c = &counter;
    let (d, ()) = timed(|| match rt {
        Runtime::Zonal(p) => p.scope(|s| {
            for i in 0..SCOPE_TASKS {
                s.spawn(move |_| {
                    c.fetch_add(black_box(i) & 1 | 1, Ordering::Relaxed);
                });
            }
        }),
        Runtime::Rayon(p) => p.scope(|s| {
            for i in 0..SCOPE_TASKS {
                s.spawn(move |_| {
                    c.fetch_add(black_box(i) & 1 | 1, Ordering::Relaxed);
                });
            }
        }),
        Runtime::Tokio(r) => r.block_on(async {
            let counter = Arc::new(AtomicUsize::new(0));
            let mut set = tokio::task::JoinSet::new();
            for i in 0..SCOPE_TASKS {
                let c = Arc::clone(&counter);
                set.spawn(async move {
                    c.fetch_add(black_box(i) & 1 | 1, Ordering::Relaxed);
                });
            }
            while set.join_next().await.is_some() {}
            c.fetch_add(counter.load(Ordering::Relaxed), Ordering::Relaxed);
        }),
    });
    check("scope_100k", counter.into_inner(), SCOPE_TASKS)?;
    Ok(d)
}

/// The last of `n` tasks to finish sends on `done`.
fn finisher(
    n: usize,
) -> (
    Arc<(AtomicUsize, SyncSender<()>)>,
    std::sync::mpsc::Receiver<()>,
) {
    let (tx, rx) = sync_channel(1);
    (Arc::new((AtomicUsize::new(n), tx)), rx)
}

fn finish_one(state: &(AtomicUsize, SyncSender<()>)) {
    if state.0.fetch_sub(1, Ordering::AcqRel) == 1 {
        let _ = state.1.send(());
    }
}

fn outside_10k(rt: &Runtime) -> Result<Duration, String> {
    let (state, rx) = finisher(OUTSIDE_TASKS);
    let (d, r) = timed(|| {
        for _ in 0..OUTSIDE_TASKS {
            let s = Arc::clone(&state);
            match rt {
                Runtime::Zonal(p) => p.spawn(move || finish_one(&s)),
                Runtime::Rayon(p) => p.spawn(move || finish_one(&s)),
                Runtime::Tokio(r) => {
                    r.spawn(async move { finish_one(&s) });
                }
            }
        }
        rx.recv()
    });
    r.map_err(|e| format!("outside_10k: {e}"))?;
    Ok(d)
}

fn chain_zonal(left: usize, state: Arc<(AtomicUsize, SyncSender<()>)>) {
    finish_one(&state);
    if left > 1 {
        zonal::spawn(move || chain_zonal(left - 1, state));
    }
}

fn chain_rayon(left: usize, state: Arc<(AtomicUsize, SyncSender<()>)>) {
    finish_one(&state);
    if left > 1 {
        rayon::spawn(move || chain_rayon(left - 1, state));
    }
}

fn chain_tokio(left: usize, state: Arc<(AtomicUsize, SyncSender<()>)>) {
    finish_one(&state);
    if left > 1 {
        tokio::spawn(async move { chain_tokio(left - 1, state) });
    }
}

fn chain_10k(rt: &Runtime) -> Result<Duration, String> {
    let (state, rx) = finisher(CHAIN);
    let (d, r) = timed(|| {
        match rt {
            Runtime::Zonal(p) => p.spawn(move || chain_zonal(CHAIN, state)),
            Runtime::Rayon(p) => p.spawn(move || chain_rayon(CHAIN, state)),
            Runtime::Tokio(r) => {
                r.spawn(async move { chain_tokio(CHAIN, state) });
            }
        }
        rx.recv()
    });
    r.map_err(|e| format!("chain_10k: {e}"))?;
    Ok(d)
}

fn fib_zonal(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = zonal::join(|| fib_zonal(n - 1), || fib_zonal(n - 2));
    a + b
}

fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

fn fib_tokio(n: u32) -> std::pin::Pin<Box<dyn std::future::Future<Output = u64> + Send>> {
    Box::pin(async move {
        if n < 2 {
            return u64::from(n);
        }
        let a = tokio::spawn(fib_tokio(n - 1));
        let b = fib_tokio(n - 2).await;
        a.await.unwrap_or(0) + b
    })
}

fn fib_25(rt: &Runtime) -> Result<Duration, String> {
    let (d, v) = timed(|| match rt {
        Runtime::Zonal(p) => p.install(|| fib_zonal(black_box(FIB))),
        Runtime::Rayon(p) => p.install(|| fib_rayon(black_box(FIB))),
        Runtime::Tokio(r) => r.block_on(fib_tokio(black_box(FIB))),
    });
    check("fib_25", v, 75_025)?;
    Ok(d)
}

fn data() -> &'static [u64] {
    static DATA: OnceLock<Vec<u64>> = OnceLock::new();
    DATA.get_or_init(|| (0..SUM_LEN as u64).collect())
}

fn sum_16mi(rt: &Runtime) -> Result<Duration, String> {
    let v = data();
    let (d, s) = timed(|| match rt {
        Runtime::Zonal(p) => p.install(|| {
            use zonal::prelude::*;
            v.par_iter().sum::<u64>()
        }),
        Runtime::Rayon(p) => p.install(|| {
            use rayon::prelude::*;
            v.par_iter().sum::<u64>()
        }),
        Runtime::Tokio(r) => r.block_on(async {
            let chunks = 64;
            let len = v.len().div_ceil(chunks);
            let mut set = tokio::task::JoinSet::new();
            for c in v.chunks(len) {
                set.spawn(async move { c.iter().sum::<u64>() });
            }
            let mut s = 0u64;
            while let Some(r) = set.join_next().await {
                s += r.unwrap_or(0);
            }
            s
        }),
    });
    let n = SUM_LEN as u64;
    check("sum_16mi", s, n * (n - 1) / 2)?;
    Ok(d)
}

fn check<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: computed {got:?}, expected {want:?}"))
    }
}
