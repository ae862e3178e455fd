//! # zonal-runtime
//!
//! A NUMA-aware work-stealing thread pool, embedded like rayon: one pinned worker per CPU,
//! crossbeam deques, and stealing that asks a [`zonal_policy::Policy`] before every move —
//! so that under the conservative policies nothing is stolen beyond the load-balancing
//! zone, no task moves farther from the node it came from, and aged tasks stay put.
//!
//! ## Map
//! - [`ThreadPoolBuilder`] → [`ThreadPool`]: topology (this machine, XML, node dump,
//!   preset), policy by name or object, worker CPUs, pinning, handlers. Errors:
//!   [`BuildError`]. Runs anywhere: by default a worker that cannot be pinned runs
//!   unpinned ([`ThreadPool::pin_fallback_workers`]; `pin(true)` makes it an error), and a
//!   machine that cannot be discovered is one flat node
//!   ([`ThreadPool::is_topology_discovered`]), each with a `tracing` warning
//!   ([`ThreadPoolBuilder`]'s "Runs anywhere").
//! - Work: [`ThreadPool::install`], [`ThreadPool::join`] / [`join`](fn@join), [`ThreadPool::scope`]
//!   ([`Scope::spawn`], [`Scope::spawn_on`]), [`ThreadPool::spawn`],
//!   [`ThreadPool::spawn_on`], [`ThreadPool::spawn_pinned`], [`TaskOptions`] (origin,
//!   group, weight, continuations that age); loops split by node:
//!   [`ThreadPool::par_for`], [`ThreadPool::par_chunks`], [`ThreadPool::par_chunks_mut`],
//!   [`ThreadPool::par_reduce`]. Spawns aimed at a place the pool lacks (a node outside
//!   its topology, a worker out of range) panic; their `try_` forms
//!   ([`ThreadPool::try_spawn_on`], [`ThreadPool::try_spawn_pinned`],
//!   [`ThreadPool::try_spawn_with`], [`Scope::try_spawn_on`]) return a [`SpawnError`].
//!   Calling into another pool from a worker keeps that worker busy with its own pool's
//!   work until the call returns.
//! - Async tasks: [`ThreadPool::spawn_async`] / [`spawn_async`] (futures polled on the
//!   workers, re-queued on their last worker when woken from any thread, aged ones never
//!   stolen again), [`ThreadPool::spawn_handle`] (a closure with a handle), their
//!   [`JoinHandle`] (await it, or [`JoinHandle::join`]) and [`JoinError`]; the futures of
//!   [`task`]: [`task::yield_now`], [`task::sleep`]. Dropping the pool cancels the tasks
//!   that wait for a wake.
//! - rayon's pool API, so that a rayon user switches by changing an import:
//!   [`ThreadPoolBuilder::num_threads`] (spread over nodes; beyond the CPUs, extra unpinned
//!   workers: [`ThreadPool::extra_workers`], [`ThreadPool::unpinned_workers`], at most
//!   [`MAX_THREADS`]), [`ThreadPool::spawn_fifo`] / [`spawn_fifo`],
//!   [`ThreadPool::scope_fifo`] / [`scope_fifo`] ([`ScopeFifo::spawn_fifo`]),
//!   [`ThreadPool::broadcast`] / [`broadcast`] ([`BroadcastContext`]), [`yield_now`]
//!   ([`Yield`]), [`ThreadPool::in_place_scope`] / [`in_place_scope`],
//!   [`current_thread_index`], [`join_context`] ([`FnContext`]), [`Scope::spawn_broadcast`],
//!   [`ThreadPoolBuilder::spawn_handler`] / [`ThreadPoolBuilder::build_scoped`]
//!   ([`ThreadBuilder`]: the builder is generic over its spawner, `ThreadPoolBuilder<S =
//!   DefaultSpawn>`), [`ThreadPoolBuilder::use_current_thread`], and rayon-core's deprecated
//!   [`Configuration`] / [`initialize`]. Dropping a pool returns at once, as rayon's (the
//!   workers finish the pending tasks, then exit); [`ThreadPool::shutdown_and_wait`] waits
//!   for that, however the worker threads were spawned.
//! - The global pool: the free functions ([`join`](fn@join), [`scope`], [`spawn`],
//!   [`spawn_with`], [`spawn_fifo`], [`scope_fifo`], [`broadcast`], [`in_place_scope`],
//!   [`current_num_threads`], [`current_node_partition`]) use the current worker's pool,
//!   and on any other thread the global pool: built on first use from
//!   [`ThreadPoolBuilder::new`] with [`NUM_THREADS_VAR`] (`ZONAL_NUM_THREADS`) honoured —
//!   it panics if that cannot be built, saying why (never for an invalid
//!   `ZONAL_NUM_THREADS`, which falls back to the default count with a warning, nor for a
//!   pinning failure, which falls back to unpinned workers) — or installed once by
//!   [`ThreadPoolBuilder::build_global`].
//! - Where am I: [`current_worker_index`] ([`current_thread_index`]), [`current_node`],
//!   [`current_task`].
//! - Node-local memory: [`NodeBuffer`]. Jobs themselves live in per-worker slabs
//!   (`src/blocks.rs`), given back when a worker runs out of work
//!   ([`WorkerMetrics::job_memory_bytes`]).
//! - Balancing and policy switches: [`ThreadPool::balance_now`] runs one periodic balancing
//!   pass of the policy's balance side over the pool's queued tasks ([`PassReport`],
//!   [`MoveRecord`]; `src/balance/`); [`ThreadPool::set_policy`],
//!   [`ThreadPool::set_policy_config`] and [`ThreadPool::set_policy_object`] switch the
//!   policy while the pool runs (`src/policy_switch.rs`).
//! - Metrics: [`ThreadPool::metrics`] → [`PoolMetrics`] (serde), from any thread through a
//!   [`MetricsHandle`]; steals are reported to a [`ThreadPoolBuilder::steal_observer`] as
//!   [`StealRecord`]s. With the `control-plane` feature, `ControlPlane` samples them
//!   periodically on a tokio runtime of its own, and serves them to Prometheus
//!   (`ControlPlane::serve_metrics`, loopback only unless allowed); `PoolCollector` puts
//!   the same series in a `prometheus-client` registry of the user's, and
//!   `MetricsHandle::encode` / `encode_metrics` write them for a handler of the user's.
//! - tokio: with the `tokio` feature (included in `control-plane`),
//!   `ThreadPoolBuilder::tokio_handle` makes the workers enter a tokio runtime, so that
//!   async tasks can use tokio's reactor and timers (`async_task/mod.rs`, "tokio's reactor
//!   and timers").
//!
//! ## Warning: stack depth
//! As in rayon, a worker blocked in `join` or `scope` runs other queued tasks on its own
//! stack while it waits. Deep recursion mixing scopes and un-awaited `spawn`s can nest those
//! waits; give workers room with [`ThreadPoolBuilder::stack_size`] if you do that in debug
//! builds.
//!
//! ## Source files
//! One concept a file, in layers (one core, features on top, as rayon-core); the map of the
//! files is in the repository's `ARCHITECTURE.md` ("The runtime's source files"), and
//! `tests/layers.rs` at the repository root checks the layering.
//!
//! ## Protocols
//! The steal protocol is written down in `src/steal/README.md`, the sleep protocol in
//! `src/sleep/README.md`. Panics in joined or scoped work resume in the caller; panics in
//! spawned work go to the panic handler; a worker never dies from a user panic.
//!
//! ```
//! # use zonal_runtime::doc_facade as zonal;
//! use zonal::ThreadPoolBuilder;
//! let pool = ThreadPoolBuilder::new().preset("s1").no_policy().build()?;
//! let v: Vec<u64> = (0..10_000).collect();
//! let sum = pool.par_reduce(0..v.len(), 1000, || 0, |r| v[r].iter().sum::<u64>(), |a, b| a + b);
//! assert_eq!(sum, 49_995_000);
//! # Ok::<(), zonal::BuildError>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's example runs as a doc test.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

// Test code shared between the unit tests and the behaviour tests (`tests/support/`) names
// the crate as those tests do.
#[cfg(test)]
extern crate self as zonal_runtime;

mod async_task;
mod balance;
mod blocks;
mod boundary;
mod broadcast;
mod builder;
mod compile_fail;
mod construct;
#[cfg(feature = "control-plane")]
mod control;
mod discovery;
mod displacement;
mod enter;
mod error;
mod fifo;
mod free;
mod global;
mod handle;
mod idle_signal;
mod job;
mod join;
mod latch;
mod launcher;
#[cfg(all(test, zonal_loom))]
mod loom_support;
mod memory;
mod metrics;
mod node_workers;
mod num_threads;
pub mod os;
mod parallel;
mod policy_switch;
mod pool;
mod queues;
mod registry;
mod route;
mod scope;
mod scope_fifo;
mod sleep;
mod spawn;
mod steal;
mod sync;
pub mod task;
mod task_meta;
mod thread_builder;
mod turnaround;
mod unwind;
mod worker;
mod yield_now;

pub use async_task::{JoinError, JoinHandle};
#[doc(hidden)]
pub use balance::SyntheticPool;
pub use balance::{MoveRecord, PassReport};
pub use broadcast::BroadcastContext;
pub use builder::{ThreadPoolBuilder, VirtualPinning, DEFAULT_POLICY};
#[cfg(feature = "control-plane")]
#[cfg_attr(docsrs, doc(cfg(feature = "control-plane")))]
pub use control::{
    encode_metrics, BalanceStats, ControlOptions, ControlPlane, PoolCollector, Sample, ServeError,
    ServeOptions, BALANCE_TICK, METRICS_CONTENT_TYPE,
};
pub use error::{BuildError, LauncherError, MemoryError, SpawnError};
pub use free::{
    broadcast, current_node_partition, current_num_threads, in_place_scope, in_place_scope_fifo,
    join, join_context, scope, scope_fifo, spawn, spawn_async, spawn_broadcast, spawn_fifo,
    spawn_with,
};
pub use global::{env_num_threads, in_worker, NUM_THREADS_VAR, RAYON_NUM_THREADS_VAR};
pub use handle::MetricsHandle;
pub use join::FnContext;
pub use launcher::{
    is_unbound, is_unbound_here, launcher_ranks, launcher_ranks_from_env, split_cpus,
    LauncherRanks, LocalRanks, LocalShare, ShareSource, LAUNCHER_VARS,
};
pub use memory::{MemoryBinding, NodeBuffer};
pub use metrics::{PoolMetrics, Refusals, WorkerMetrics};
pub use node_workers::NodeWorkers;
pub use num_threads::{max_num_threads, MAX_THREADS};
pub use pool::{
    current_node, current_task, current_thread_index, current_worker_index, Pinning, ThreadPool,
};
#[allow(deprecated)]
pub use pool::{initialize, Configuration};
pub use scope::Scope;
pub use scope_fifo::ScopeFifo;
pub use steal::{QueueKind, StealRecord};
pub use task::{TaskInfo, TaskOptions};
pub use thread_builder::{CustomSpawn, DefaultSpawn, ThreadBuilder, ThreadSpawn};
pub use turnaround::{QuantileError, Turnaround};
pub use yield_now::{current_thread_has_pending_tasks, yield_local, yield_now, Yield};
pub use zonal_policy::NoPolicy;

/// The `zonal` facade's paths, for this crate's doc examples (`# use
/// zonal_runtime::doc_facade as zonal;`), which appear on the facade's pages and so are
/// written as a `zonal` user writes them: `zonal::ThreadPoolBuilder` for what the facade
/// re-exports at its root, `zonal::runtime::…`, `zonal::topology::…`, `zonal::policy::…`
/// for the rest (`tests/doc_paths.rs` checks both).
#[doc(hidden)]
pub mod doc_facade {
    pub use crate as runtime;
    pub use crate::*;
    pub use zonal_policy as policy;
    pub use zonal_topology as topology;
}
