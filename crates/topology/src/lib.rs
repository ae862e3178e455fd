//! # zonal-topology
//!
//! The machine model every Zonal policy reads: CPUs, NUMA nodes, the node distance matrix,
//! and the sched-domain hierarchy Linux's `sched_init_numa` derives from it — memory access
//! levels (MALs), per-node spans, the load-balancing zone, and per-CPU victim orders.
//!
//! ## Map
//! - Sources → [`Machine`]: [`Machine::from_specs`] (validation), `from_nodes_file` /
//!   `parse_nodes_json` (the `--nodes` format; feature `json`), [`from_sysfs_root`], [`presets`] (the paper's
//!   `s1`/`s2`/`s3`, fan-out trees, meshes), [`this_machine`] (on Linux through sysfs and
//!   procfs, without libhwloc; elsewhere through hwloc), and with the `hwloc` feature
//!   `from_xml_file` and the `hwloc` module (discovery through hwlocality).
//! - [`Topology::new`] builds levels, spans, the zone and victim orders; queries such as
//!   [`Topology::distance`], [`Topology::level_between`], [`Topology::in_zone`],
//!   [`Topology::numa_factor`] are O(1) and allocation-free; [`Topology::victims`] builds a
//!   CPU's order the first time it is asked for (O(cpus)), then returns it without
//!   allocating.
//! - `TopologyReport` (feature `json`) is the machine model as data: the JSON interface of
//!   the `topology` example. The example (`crates/examples/examples/topology/`) holds the command line, the
//!   choice of a source from its flags and the human view (an
//!   lstopo-like tree, the levels table and the zones).
//!
//! ## Limits
//!
//! Every input is checked before anything that grows with it is allocated, with a typed
//! [`TopologyError`] naming the file, field and value: at most [`MAX_NODES`] nodes and
//! [`MAX_CPUS`] CPUs (checked in cpulists, generators and every source), only regular files
//! of at most [`MAX_INPUT_BYTES`] (a FIFO would block the reader), XML nested at most
//! [`MAX_XML_DEPTH`] deep (deeper files overflowed hwloc's parser), node memory sizes that
//! add up to at most 2^64 bytes, JSON objects without a repeated key (at any level), and
//! per-level spans listing at most [`MAX_SPAN_ENTRIES`] node ids in all (they grow as
//! nodes² × levels: a 4,096-node dump with hundreds of distinct distances is refused from
//! its matrix, before the hierarchy or a report is built). What grows with nodes² is bounded
//! by [`MAX_NODES`] (see there), and each CPU's victim order (cpus − 1 entries, built on
//! first use) by [`MAX_CPUS`]. An hwloc XML export is read by Zonal first
//! (`source/xml_check.rs`: object types, bitmaps of at most 4,096 words, numbers, indexes,
//! how the sets fit, distance matrices of exactly n² values), so that what hwloc would refuse
//! with a bare errno, misread, or crash on is a [`TopologyError::Xml`] naming the file, the
//! line and the value. Errors found inside a file are wrapped in [`TopologyError::InFile`]
//! where their own message does not name it ([`TopologyError::cause`] unwraps them).
//!
//! In builds with debug assertions, hwlocality calls libhwloc's `hwloc_topology_check`
//! after every load, which *aborts* on an inconsistent topology; Zonal's checks refuse the
//! inconsistencies it knows of first, and this workspace turns hwlocality's debug
//! assertions off (`[profile.dev.package.hwlocality]`). An application reading untrusted
//! XML in debug builds should do the same.
//!
//! ```
//! # use zonal_topology::doc_facade as zonal;
//! use zonal::topology::{presets, Level, CpuId};
//! let t = presets::preset("s1")?;
//! let thief = CpuId(0);
//! // Victims come nearest first; the in-zone ones form a prefix.
//! assert_eq!(t.victims(thief)[0].level, Level::LOCAL);
//! assert!(t.zone_victims(thief).iter().all(|v| v.level < Level(4)));
//! # Ok::<(), zonal::topology::TopologyError>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
// The README's example runs as a doc test.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod error;
mod hierarchy;
mod ids;
mod machine;
#[cfg(feature = "json")]
mod report;
mod source;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub use source::json_keys;

pub use error::{Result, TopologyError};
pub use hierarchy::{default_zone_depth, Tier, Topology, Victim, VictimPlan, MAX_SPAN_ENTRIES};
pub use ids::{CpuId, Level, NodeId};
pub use machine::{
    CpuInfo, CpuSpec, DistanceKind, Machine, NodeInfo, NodeKind, NodeSpec, LOCAL_DISTANCE,
    MAX_CPUS, MAX_DISTANCE, MAX_NODES, REMOTE_DISTANCE,
};
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub use report::TopologyReport;
pub use source::cgroup::cgroup_cpus;
pub use source::cpulist::{format_cpulist, parse_cpulist};
#[cfg(feature = "hwloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "hwloc")))]
pub use source::hwloc::from_xml_file;
#[cfg(all(not(target_os = "linux"), feature = "hwloc"))]
pub use source::hwloc::{allowed_cpus, this_machine, this_machine_unrestricted};
pub use source::input::{MAX_INPUT_BYTES, MAX_XML_DEPTH};
#[cfg(target_os = "linux")]
pub use source::linux::{allowed_cpus, this_machine, this_machine_unrestricted};
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
pub use source::nodes_json::{from_nodes_file, parse_nodes_json};
pub use source::presets;
pub use source::sysfs::from_sysfs_root;
#[cfg(not(any(target_os = "linux", feature = "hwloc")))]
pub use source::unsupported::{allowed_cpus, this_machine, this_machine_unrestricted};

/// Discovery and XML through hwloc (hwlocality; needs libhwloc): this machine as hwloc sees
/// it, and other machines' XML exports. On Linux the crate-level [`this_machine`],
/// [`this_machine_unrestricted`] and [`allowed_cpus`] read sysfs and procfs instead and give
/// the same [`Machine`]; elsewhere they are these.
#[cfg(feature = "hwloc")]
#[cfg_attr(docsrs, doc(cfg(feature = "hwloc")))]
pub mod hwloc {
    pub use crate::source::hwloc::{
        allowed_cpus, from_xml_file, this_machine, this_machine_unrestricted,
    };
}

/// The `zonal` facade's paths, for this crate's doc examples (`# use
/// zonal_topology::doc_facade as zonal;`), which appear on the facade's pages and so are
/// written as a `zonal` user writes them: `zonal::topology::…` (`tests/doc_paths.rs` in the
/// facade checks them).
#[doc(hidden)]
pub mod doc_facade {
    pub use crate as topology;
}
