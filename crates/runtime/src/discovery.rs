//! This machine's topology for a pool: discovered (sysfs on Linux, hwloc elsewhere with the
//! `hwloc` feature), or, where it cannot be, one flat node of `available_parallelism` CPUs.

use zonal_topology::Topology;

use crate::error::BuildError;

/// This machine's topology, not virtual; where it cannot be discovered (neither Linux nor
/// the `hwloc` feature), one node holding `available_parallelism` CPUs, as a virtual pool
/// (its CPU numbers are not known to be the OS's, so nothing is pinned to them).
pub(crate) fn this_machine() -> Result<(Topology, bool), BuildError> {
    match zonal_topology::this_machine() {
        Ok(m) => Ok((Topology::new(m), false)),
        Err(e @ zonal_topology::TopologyError::NoDiscovery { .. }) => {
            let cpus = flat_cpus();
            tracing::warn!("{e}; running over one node of {} CPUs", cpus.len());
            let node = zonal_topology::NodeSpec {
                os_id: 0,
                cpus: cpus
                    .into_iter()
                    .map(|c| zonal_topology::CpuSpec::alone(c, 0))
                    .collect(),
                memory_bytes: None,
            };
            let m = zonal_topology::Machine::from_specs(
                "this machine (undiscovered)",
                vec![node],
                None,
            )?;
            Ok((Topology::new(m), true))
        }
        Err(e) => Err(e.into()),
    }
}

/// The CPUs the calling thread may run on; where this machine cannot be discovered,
/// `0..available_parallelism`.
pub(crate) fn allowed_cpus() -> Result<Vec<u32>, zonal_topology::TopologyError> {
    match zonal_topology::allowed_cpus() {
        Err(zonal_topology::TopologyError::NoDiscovery { .. }) => Ok(flat_cpus()),
        other => other,
    }
}

fn flat_cpus() -> Vec<u32> {
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (0..u32::try_from(n).unwrap_or(1)).collect()
}
