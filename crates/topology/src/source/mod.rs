//! Where machine descriptions come from: hwloc (this machine, XML exports), node dumps,
//! sysfs roots, presets and generators. Each source yields a validated [`Machine`](crate::Machine).

pub(crate) mod cpulist;
#[cfg(feature = "hwloc")]
pub(crate) mod hwloc;
pub(crate) mod input;
pub mod json_keys;
pub(crate) mod nodes_json;
pub(crate) mod offline;
pub mod presets;
pub(crate) mod sysfs;
#[cfg(feature = "hwloc")]
pub(crate) mod xml_check;
