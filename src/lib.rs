//! # Zonal
//!
//! A NUMA-aware work-stealing thread pool whose stealing obeys the conservative,
//! zone-limited rules of Mehta & Kanungo. This facade re-exports the workspace crates and
//! offers rayon's API: `use zonal::prelude::*;` in place of `use rayon::prelude::*;`.

pub use zonal_policy as policy;
pub use zonal_runtime as runtime;
pub use zonal_sim as sim;
pub use zonal_topology as topology;

pub mod iter;
pub mod prelude;
pub mod slice;

// --- rayon's pool API at the root (`zonal::join`, `zonal::ThreadPoolBuilder`, ...) ---
pub use zonal_runtime::{
    broadcast, current_num_threads, current_thread_index, in_place_scope, join, scope, scope_fifo,
    spawn, spawn_fifo, yield_now, BroadcastContext, BuildError, Scope, ScopeFifo, ThreadPool,
    ThreadPoolBuilder, Yield,
};
