//! fib, scope/spawn and sum on Zonal, rayon and tokio, one copy of each: the criterion bench
//! `runtime`, the paired `vs_rayon` and the `scaling` curve (whose table, [`WORKLOADS`] over
//! [`RUNTIMES`], adds spawns from outside the pool and a chain of spawns) all run these.
//!
//! The workload functions are `#[inline]`, so each program compiles its own copy as it did
//! when the workloads lived in the programs: measured on 2 workers, `fib` compiled in this
//! library instead ran about 4% slower (codegen placement, not the runtime), which would
//! have shown as a runtime regression in the before/after figures (BENCHMARKS.md).

use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The `n` of the fib workloads.
pub const FIB: u32 = 25;
/// fib([`FIB`]).
pub const FIB_VALUE: u64 = 75_025;
/// The tasks one scope spawns.
pub const SCOPE_TASKS: usize = 100_000;
/// The `u64`s the sums add up (16 Mi).
pub const SUM_LEN: usize = 16 << 20;

const OUTSIDE_TASKS: usize = 10_000;
const CHAIN: usize = 10_000;

// --- fib: recursive fork-join -------------------------------------------------------------

/// fib(`n`) by recursive `zonal::join` (the leaves are tiny: the cost of a join).
#[inline]
pub fn fib_zonal(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = zonal::join(|| fib_zonal(n - 1), || fib_zonal(n - 2));
    a + b
}

/// fib(`n`) by recursive `rayon::join`.
#[inline]
pub fn fib_rayon(n: u32) -> u64 {
    if n < 2 {
        return u64::from(n);
    }
    let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
    a + b
}

/// fib(`n`) on tokio: `spawn` one branch and await it, the other inline.
#[inline]
pub fn fib_tokio(n: u32) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if n < 2 {
            return u64::from(n);
        }
        let a = tokio::spawn(fib_tokio(n - 1));
        let b = fib_tokio(n - 2).await;
        a.await.unwrap_or(0) + b
    })
}

// --- scope: many small spawned tasks --------------------------------------------------------

/// One spawned task's work: adds 1 to `counter` (through `black_box`, so it is not folded).
fn scope_task(counter: &AtomicUsize, i: usize) {
    counter.fetch_add(black_box(i) & 1 | 1, Ordering::Relaxed);
}

/// One scope on `pool` spawning `tasks` tasks, each adding 1 to `counter`.
#[inline]
pub fn scope_zonal(pool: &zonal::ThreadPool, tasks: usize, counter: &AtomicUsize) {
    pool.scope(|s| {
        for i in 0..tasks {
            s.spawn(move |_| scope_task(counter, i));
        }
    });
}

/// One scope on `pool` spawning `tasks` tasks, each adding 1 to `counter`.
#[inline]
pub fn scope_rayon(pool: &rayon::ThreadPool, tasks: usize, counter: &AtomicUsize) {
    pool.scope(|s| {
        for i in 0..tasks {
            s.spawn(move |_| scope_task(counter, i));
        }
    });
}

/// The async peer of a scope: `tasks` tasks spawned into a `JoinSet` on `rt` and awaited
/// (tokio's tasks are `'static`: they count on a shared counter, added to `counter` at the
/// end).
#[inline]
pub fn scope_tokio(rt: &tokio::runtime::Runtime, tasks: usize, counter: &AtomicUsize) {
    rt.block_on(async {
        let shared = Arc::new(AtomicUsize::new(0));
        let mut set = tokio::task::JoinSet::new();
        for i in 0..tasks {
            let c = Arc::clone(&shared);
            set.spawn(async move { scope_task(&c, i) });
        }
        while set.join_next().await.is_some() {}
        counter.fetch_add(shared.load(Ordering::Relaxed), Ordering::Relaxed);
    });
}

// --- sum: a parallel sum over a slice -------------------------------------------------------

/// `0..SUM_LEN` as `u64`s, made once.
pub fn sum_data() -> &'static [u64] {
    static DATA: OnceLock<Vec<u64>> = OnceLock::new();
    DATA.get_or_init(|| (0..SUM_LEN as u64).collect())
}

/// The sum of `data` on `pool` by `par_iter().sum()` (the facade's prelude).
#[inline]
pub fn sum_zonal(pool: &zonal::ThreadPool, data: &[u64]) -> u64 {
    use zonal::prelude::*;
    pool.install(|| data.par_iter().sum::<u64>())
}

/// The sum of `data` on `pool` by `ThreadPool::par_reduce` over index ranges of at least
/// `grain`.
#[inline]
pub fn sum_zonal_reduce(pool: &zonal::ThreadPool, data: &[u64], grain: usize) -> u64 {
    pool.par_reduce(
        0..data.len(),
        grain,
        || 0u64,
        |r| data[r].iter().sum::<u64>(),
        |a, b| a + b,
    )
}

/// The grain [`sum_zonal_reduce`] uses for `len` items over `workers` workers: 16 pieces a
/// worker, at least 4096 items each.
pub fn sum_grain(len: usize, workers: usize) -> usize {
    (len / (workers * 16)).max(4096)
}

/// The sum of `data` on `pool` by `par_iter().sum()`.
#[inline]
pub fn sum_rayon(pool: &rayon::ThreadPool, data: &[u64]) -> u64 {
    use rayon::prelude::*;
    pool.install(|| data.par_iter().sum::<u64>())
}

/// The sum of `data` on `rt`: one task per 64th of it.
#[inline]
pub fn sum_tokio(rt: &tokio::runtime::Runtime, data: &'static [u64]) -> u64 {
    rt.block_on(async {
        let chunks = 64;
        let len = data.len().div_ceil(chunks);
        let mut set = tokio::task::JoinSet::new();
        for c in data.chunks(len) {
            set.spawn(async move { c.iter().sum::<u64>() });
        }
        let mut s = 0u64;
        while let Some(r) = set.join_next().await {
            s += r.unwrap_or(0);
        }
        s
    })
}

// --- The scaling table: each workload on each runtime ---------------------------------------

/// Which runtime.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Zonal's pool.
    Zonal,
    /// rayon's pool.
    Rayon,
    /// A tokio multi-thread runtime.
    Tokio,
}

/// The runtimes, in the order each round runs them.
pub const RUNTIMES: [Kind; 3] = [Kind::Zonal, Kind::Rayon, Kind::Tokio];

/// A pool of one kind with `n` workers.
#[derive(Debug)]
pub enum Runtime {
    /// Zonal's pool.
    Zonal(zonal::ThreadPool),
    /// rayon's pool.
    Rayon(rayon::ThreadPool),
    /// A tokio multi-thread runtime.
    Tokio(tokio::runtime::Runtime),
}

impl Runtime {
    /// Zonal: this machine, the default policy, `num_threads(n)`, pinned if `pin`; rayon: `num_threads(n)`;
    /// tokio: a multi-thread runtime with `n` workers.
    ///
    /// # Errors
    ///
    /// The pool or runtime that cannot be built, and why.
    pub fn new(kind: Kind, n: usize, pin: bool) -> Result<Self, String> {
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

    /// `zonal`, `rayon` or `tokio`.
    pub fn name(&self) -> &'static str {
        match self {
            Runtime::Zonal(_) => "zonal",
            Runtime::Rayon(_) => "rayon",
            Runtime::Tokio(_) => "tokio",
        }
    }
}

/// A workload: runs once on a runtime and returns the time it took.
#[derive(Debug)]
pub struct Workload {
    /// Its name in tables and plots.
    pub name: &'static str,
    /// One timed run; an error names a wrong result or a failed spawn.
    pub run: fn(&Runtime) -> Result<Duration, String>,
}

/// The scaling benchmark's workloads, in table order.
pub const WORKLOADS: &[Workload] = &[
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

fn timed<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let t = Instant::now();
    let v = f();
    (t.elapsed(), v)
}

fn scope_100k(rt: &Runtime) -> Result<Duration, String> {
    let counter = AtomicUsize::new(0);
    let (d, ()) = timed(|| match rt {
        Runtime::Zonal(p) => scope_zonal(p, SCOPE_TASKS, &counter),
        Runtime::Rayon(p) => scope_rayon(p, SCOPE_TASKS, &counter),
        Runtime::Tokio(r) => scope_tokio(r, SCOPE_TASKS, &counter),
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

fn fib_25(rt: &Runtime) -> Result<Duration, String> {
    let (d, v) = timed(|| match rt {
        Runtime::Zonal(p) => p.install(|| fib_zonal(black_box(FIB))),
        Runtime::Rayon(p) => p.install(|| fib_rayon(black_box(FIB))),
        Runtime::Tokio(r) => r.block_on(fib_tokio(black_box(FIB))),
    });
    check("fib_25", v, FIB_VALUE)?;
    Ok(d)
}

fn sum_16mi(rt: &Runtime) -> Result<Duration, String> {
    let v = sum_data();
    let (d, s) = timed(|| match rt {
        Runtime::Zonal(p) => sum_zonal(p, v),
        Runtime::Rayon(p) => sum_rayon(p, v),
        Runtime::Tokio(r) => sum_tokio(r, v),
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

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn fib_agrees_on_every_runtime() {
        let z = zonal::ThreadPoolBuilder::new().num_threads(2).build();
        let z = z.expect("zonal pool");
        let r = rayon::ThreadPoolBuilder::new().num_threads(2).build();
        let r = r.expect("rayon pool");
        assert_eq!(z.install(|| fib_zonal(20)), 6765);
        assert_eq!(r.install(|| fib_rayon(20)), 6765);
        let t = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("tokio runtime");
        assert_eq!(t.block_on(fib_tokio(20)), 6765);
    }

    #[test]
    fn scopes_and_sums_count_everything() {
        let z = zonal::ThreadPoolBuilder::new().num_threads(2).build();
        let z = z.expect("zonal pool");
        let r = rayon::ThreadPoolBuilder::new().num_threads(2).build();
        let r = r.expect("rayon pool");
        let t = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .expect("tokio runtime");
        let c = AtomicUsize::new(0);
        scope_zonal(&z, 1000, &c);
        scope_rayon(&r, 1000, &c);
        scope_tokio(&t, 1000, &c);
        assert_eq!(c.into_inner(), 3000);
        static DATA: [u64; 10_000] = {
            let mut d = [0u64; 10_000];
            let mut i = 0;
            while i < d.len() {
                d[i] = i as u64;
                i += 1;
            }
            d
        };
        let want = 10_000 * 9_999 / 2;
        assert_eq!(sum_zonal(&z, &DATA), want);
        assert_eq!(sum_zonal_reduce(&z, &DATA, sum_grain(DATA.len(), 2)), want);
        assert_eq!(sum_rayon(&r, &DATA), want);
        assert_eq!(sum_tokio(&t, &DATA), want);
    }
}
