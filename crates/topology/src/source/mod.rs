//! Where machine descriptions come from: this machine (sysfs and procfs on Linux, hwloc
//! elsewhere with the `hwloc` feature), hwloc XML exports, node dumps, sysfs roots, presets
//! and generators. Each source yields a validated [`Machine`](crate::Machine).

pub(crate) mod cgroup;
pub(crate) mod cpu_topology;
pub(crate) mod cpulist;
#[cfg(feature = "hwloc")]
pub(crate) mod hwloc;
pub(crate) mod input;
#[cfg(feature = "json")]
pub mod json_keys;
#[cfg(target_os = "linux")]
pub(crate) mod linux;
#[cfg(feature = "json")]
pub(crate) mod nodes_json;
pub(crate) mod offline;
pub mod presets;
pub(crate) mod sysfs;
pub(crate) mod thread_affinity;
#[cfg(not(any(target_os = "linux", feature = "hwloc")))]
pub(crate) mod unsupported;
#[cfg(feature = "hwloc")]
pub(crate) mod xml_check;
