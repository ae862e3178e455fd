//! The NUMA kit: workloads whose time is decided by locality on a multi-node machine,
//! written once and run on Zonal (three policies), rayon and tokio, with locality measured
//! the same way for every runtime. The criterion bench `numa` and the `numa-report` program
//! run them.
//!
//! - [`host`]: the machine from sysfs and what confounds NUMA figures;
//! - [`sizes`]: how big the workloads are (scaled to the machine, or `ZONAL_NUMA_BYTES`);
//! - [`engine`]: the runtimes, each running one closure per part of the data;
//! - [`data`]: the parts: triad, heat-grid row blocks, pointer chase;
//! - [`kit`]: where threads and data go per workload (the table there), prepared runs, checksums;
//! - [`service`]: the service load on Zonal and tokio;
//! - [`locality`]: `sched_getcpu` and `move_pages` per slice, the kernel's page counts.

pub mod data;
pub mod engine;
pub mod host;
pub mod kit;
pub mod locality;
pub mod service;
pub mod sizes;
