//! # Zonal
//!
//! A NUMA-aware work-stealing thread pool whose stealing obeys the conservative,
//! zone-limited rules of Mehta & Kanungo. This facade re-exports the workspace crates and
//! offers rayon's API: `use zonal::prelude::*;` in place of `use rayon::prelude::*;`.
//! Parallel iterators over slices are in [`slice`](mod@slice), over strings in
//! [`str`](mod@str).
#![cfg_attr(docsrs, feature(doc_cfg))]

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
