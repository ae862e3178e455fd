//! # Zonal
//!
//! A NUMA-aware work-stealing thread pool whose stealing obeys the conservative,
//! zone-limited rules of Mehta & Kanungo. This facade re-exports the workspace crates.

pub use zonal_policy as policy;
pub use zonal_runtime as runtime;
pub use zonal_sim as sim;
pub use zonal_topology as topology;

pub mod slice;
