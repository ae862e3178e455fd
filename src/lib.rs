//! # Zonal: rayon's API on a NUMA-aware work-stealing pool
//!
//! Zonal is a work-stealing thread pool with rayon's API — parallel iterators, `join`,
//! `scope`, a global pool — that knows the machine's NUMA nodes. Its workers are pinned,
//! the distances between nodes come from the kernel, and a computation started on a node
//! stays in the *zone* of nodes near that node's memory (the conservative policy of Mehta &
//! Kanungo). The same workers run async tasks, with tokio's timers and sockets when the
//! `tokio` feature is on.
//!
//! ## Quickstart
//!
//! ```
//! use zonal::prelude::*; // was: use rayon::prelude::*;
//!
//! // rayon's API on the global pool: change the import, keep the code.
//! let v: Vec<u64> = (0..100_000).collect();
//! let sum_sq: u64 = v.par_iter().map(|x| x * x).sum();
//! let (a, b) = zonal::join(|| v[..10].iter().sum::<u64>(), || v.len());
//! assert_eq!((a, b), (45, 100_000));
//!
//! // A pool of its own, with one computation rooted on each NUMA node: it and every task
//! // it spawns stay in that node's zone.
//! let pool = zonal::ThreadPoolBuilder::new().build()?;
//! let nodes: Vec<_> = pool.topology().cpu_nodes().collect();
//! let mut per_node = vec![0u64; nodes.len()];
//! pool.scope(|s| {
//!     for (&node, out) in nodes.iter().zip(per_node.iter_mut()) {
//!         s.spawn_on(node, move |_| *out = (0..1_000u64).sum());
//!     }
//! });
//! assert!(per_node.iter().all(|&x| x == 499_500));
//! # let _ = sum_sq;
//! # Ok::<(), zonal::BuildError>(())
//! ```
//!
//! Until Zonal is on crates.io, depend on it by git or path: `zonal = { git =
//! "https://github.com/zonal-rs/zonal" }`.
//!
//! ## What is where
//!
//! - Parallel iterators: the [`prelude`] brings rayon's traits into scope; the adaptors are
//!   in [`iter`], slices' methods (`par_chunks`, `par_sort`, …) in [`slice`](mod@slice),
//!   strings' in [`str`](mod@str). Custom iterators use rayon's plumbing:
//!   [`iter::plumbing`].
//! - The pool: [`ThreadPoolBuilder`] → [`ThreadPool`] ([`ThreadPool::install`],
//!   [`ThreadPool::scope`], [`ThreadPool::spawn_on`], …), and rayon's free functions on the
//!   current or global pool: [`join`](fn@join), [`scope`], [`spawn`], [`broadcast`].
//! - Async tasks: [`spawn_async`] and [`ThreadPool::spawn_async`] return a [`JoinHandle`];
//!   [`task`] has the pool's own futures ([`task::sleep`], [`task::yield_now`]).
//! - Node-local memory: [`runtime::NodeBuffer`] (a buffer bound to one node, filled by that
//!   node's workers) and [`iter::NodeVec`] (each buffer's items iterated on its own node).
//! - Metrics: [`ThreadPool::metrics`] ([`runtime::PoolMetrics`]); with `control-plane`,
//!   `runtime::ControlPlane` (periodic balancing, a Prometheus endpoint) and
//!   `runtime::PoolCollector` (the pool's series in your own `prometheus-client` registry).
//! - The machine model ([`topology`]), the policies ([`policy`]), the runtime's whole API
//!   ([`runtime`]) and, with `sim`, the simulator (`sim`).
//!
//! ## Feature flags
//!
//! The default build is what a rayon user needs — the pool, the parallel iterators,
//! node-local memory, discovery through sysfs on Linux — with no C library and 19 packages
//! in all. Everything else is opt-in:
//!
//! <!-- features:begin (tests/docs.rs checks this table against Cargo.toml's [features]) -->
//! | feature | what it adds |
//! |---|---|
//! | `tokio` | async tasks that use tokio's timers and sockets: a task spawned inside a tokio runtime enters it, and [`ThreadPoolBuilder`]'s `tokio_handle` gives the workers one |
//! | `control-plane` | the tokio control plane (includes `tokio`): periodic balancing of async tasks, metric samples, the Prometheus endpoint and `PoolCollector` |
//! | `serde` | `Serialize` on the metrics, reports and machine model |
//! | `config` | policy configs from TOML and JSON (`PolicyConfig::from_toml_str`, `from_json_str`) |
//! | `json` | node dumps in the `--nodes` JSON format (`ThreadPoolBuilder::nodes_file`) and `TopologyReport` |
//! | `sim` | the deterministic simulator (`zonal::sim`) |
//! | `hwloc` | hwloc XML exports and hwloc's discovery (`zonal::topology::hwloc`); needs libhwloc-dev, libudev-dev and pkg-config |
//! | `rayon-env` | the global pool reads `RAYON_NUM_THREADS` when `ZONAL_NUM_THREADS` gives no count: Zonal as rayon (the `rayon-core` package of `compat/` turns it on) |
//! <!-- features:end -->
//!
//! ## Coming from rayon
//!
//! Change `use rayon::prelude::*` to `use zonal::prelude::*` and `rayon::` to `zonal::`:
//! every public item of rayon 1.12 and rayon-core 1.13 is here under the same path and
//! name (the README's table lists them, generated from rayon's sources), and rayon's own
//! test files pass against Zonal. What differs: workers are pinned (`pin(false)` turns it
//! off); `num_threads(n)` spreads the workers over the nodes; a computation started outside
//! the pool is rooted on one node (round-robin) and, under the default policy
//! (`conservative-hard`), stays in that node's zone; an indexed parallel iterator first
//! cuts its range into one part per node. The global pool reads `ZONAL_NUM_THREADS` where
//! rayon reads `RAYON_NUM_THREADS` (and, with the `rayon-env` feature, `RAYON_NUM_THREADS`
//! after it). A dependency tree whose crates use rayon moves onto Zonal as a whole with one
//! `[patch.crates-io]`: the README's "A whole dependency tree on Zonal".
//!
//! ## Coming from tokio
//!
//! [`spawn_async`] runs a future on the pool's workers and returns a [`JoinHandle`] that
//! you `.await` (or [`JoinHandle::join`] from a plain thread). Zonal's own futures
//! ([`task::sleep`], [`task::yield_now`]) and anything woken by a plain `Waker` (channels,
//! `tokio::sync`) work anywhere. tokio's timers and sockets need the `tokio` feature: a
//! task spawned inside a tokio runtime (`#[tokio::main]`, `#[tokio::test]`) then enters it
//! whenever it is polled, and `ThreadPoolBuilder::tokio_handle` gives every worker a
//! runtime for tasks spawned from anywhere. The README's "Coming from tokio" has a
//! complete program with tokio's timer and a TCP round trip.
//!
//! ```
//! let pool = zonal::ThreadPoolBuilder::new().num_threads(2).build()?;
//! let h = pool.spawn_async(async {
//!     zonal::task::sleep(std::time::Duration::from_millis(1)).await;
//!     6 * 7
//! });
//! assert_eq!(h.join()?, 42);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## When not to use Zonal
//!
//! On a machine with one NUMA node (laptops, desktops, most one-socket servers) there is
//! no memory to keep near, and rayon is as good or better: measured on a 16-core one-node
//! machine, Zonal is at or ahead of rayon up to 4 workers on most workloads but behind at
//! 8 and 16 on join-heavy work (recursive `join` 1.2–1.7×, mergesort 2.3× rayon's time at
//! 16), while it stays ahead when spawning many small tasks (100,000 spawns in a scope:
//! 0.47×). For I/O-bound services tokio's own scheduler is the choice. The figures, their
//! machines and commands are in
//! [BENCHMARKS.md](https://github.com/zonal-rs/zonal/blob/main/BENCHMARKS.md).
//!
//! ## Guides
//!
//! - [README](https://github.com/zonal-rs/zonal#readme): a first program, coming from
//!   rayon and tokio, node-local memory, metrics, MPI, how fast.
//! - [ARCHITECTURE.md](https://github.com/zonal-rs/zonal/blob/main/ARCHITECTURE.md): the
//!   crates, where each rule lives, a task from spawn to a steal decision.
//! - [CONTRIBUTING.md](https://github.com/zonal-rs/zonal/blob/main/CONTRIBUTING.md): the
//!   two commands, CI, the NUMA guests.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The README's code blocks run as doc tests of the facade (`cargo test -p zonal --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use zonal_policy as policy;
pub use zonal_runtime as runtime;
/// The deterministic NUMA simulator (feature `sim`).
#[cfg(feature = "sim")]
#[cfg_attr(docsrs, doc(cfg(feature = "sim")))]
pub use zonal_sim as sim;
pub use zonal_topology as topology;

pub mod array;
pub mod collections;
pub mod iter;
pub mod option;
pub mod prelude;
pub mod range;
pub mod range_inclusive;
pub mod result;
pub mod slice;
pub mod str;
pub mod string;
pub mod vec;

// --- rayon's pool API at the root (`zonal::join`, `zonal::ThreadPoolBuilder`, ...) ---
pub use zonal_runtime::{
    broadcast, current_num_threads, current_thread_has_pending_tasks, current_thread_index,
    in_place_scope, in_place_scope_fifo, join, join_context, max_num_threads, scope, scope_fifo,
    spawn, spawn_broadcast, spawn_fifo, yield_local, yield_now, BroadcastContext, BuildError,
    FnContext, Scope, ScopeFifo, ThreadBuilder, ThreadPool, ThreadPoolBuilder, Yield,
};
/// rayon-core's deprecated `Configuration` and `initialize` (thin wrappers over
/// [`ThreadPoolBuilder`]).
#[allow(deprecated)]
pub use zonal_runtime::{initialize, Configuration};
/// rayon's name for [`BuildError`].
pub type ThreadPoolBuildError = BuildError;

// --- async tasks on the pool's workers (`zonal::spawn_async`, `zonal::task::sleep`, ...) ---
/// Spawns a future on the current pool (the global pool outside every pool); see
/// [`ThreadPool::spawn_async`].
///
/// ```
/// let h = zonal::spawn_async(async {
///     zonal::task::yield_now().await;
///     zonal::task::sleep(std::time::Duration::from_millis(1)).await;
///     6 * 7
/// });
/// assert_eq!(h.join().unwrap(), 42);
/// ```
pub use zonal_runtime::spawn_async;
pub use zonal_runtime::task;
pub use zonal_runtime::{JoinError, JoinHandle};
/// A NUMA node's dense index, as `ThreadPool::spawn_on` (which also takes a `usize`) and
/// the task options take it.
pub use zonal_topology::NodeId;
