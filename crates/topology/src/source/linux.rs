//! This machine on Linux, through sysfs and procfs alone (no libhwloc): the default
//! discovery behind [`this_machine`], [`this_machine_unrestricted`] and [`allowed_cpus`].
//!
//! It gives the [`Machine`] hwloc's discovery (`hwloc.rs`, the `hwloc` feature) gives, read
//! from the same files hwloc's `linux` backend reads:
//!
//! - Nodes, their CPUs, memory and distances: `/sys/devices/system/node/node*/{cpulist,
//!   meminfo,distance}` through the sysfs reader (`sysfs.rs`), by OS id. As hwloc's `linux`
//!   backend, a single node records no distance matrix (its `[[10]]` is
//!   [`DistanceOrigin::SingleNode`](crate::DistanceOrigin::SingleNode)).
//! - Cores and last-level caches: `/sys/devices/system/cpu/cpuN/{topology,cache}`,
//!   numbered as hwloc numbers its `Core` and cache objects (`cpu_topology.rs`).
//! - Offline CPUs: `cpu/online` and the nodes' `cpuM` links (`offline.rs`); as in
//!   `hwloc.rs`, a `/sys` that cannot say records none.
//! - The allowed CPUs: the calling thread's `Cpus_allowed_list` (`thread_affinity.rs`),
//!   which holds the affinity mask and the cgroup cpuset; the CPUs left out are recorded per
//!   node ([`NodeInfo::withheld_cpus`](crate::NodeInfo::withheld_cpus)).
//! - The machine is named `this machine`, as hwloc's discovery names it.
//!
//! Nothing here changes any thread's binding.

use std::path::Path;

use crate::error::Result;
use crate::machine::Machine;

const NAME: &str = "this machine";

/// This machine, restricted to the CPUs the calling thread may use (taskset, cgroups).
///
/// # Errors
/// [`TopologyError::Io`](crate::TopologyError::Io) and
/// [`TopologyError::Sysfs`](crate::TopologyError::Sysfs) naming the file that cannot be
/// read or is malformed, [`TopologyError::ProcStatus`](crate::TopologyError::ProcStatus)
/// for a malformed `Cpus_allowed_list`, and validation errors of
/// [`Machine::from_specs`] (e.g. [`TopologyError::NoCpus`](crate::TopologyError::NoCpus)).
pub fn this_machine() -> Result<Machine> {
    restricted(Path::new("/"))
}

/// This machine with every online CPU, ignoring the calling thread's affinity mask and its
/// cgroup cpuset.
///
/// # Errors
/// As [`this_machine`].
pub fn this_machine_unrestricted() -> Result<Machine> {
    discover(Path::new("/"))
}

/// The OS indexes of the CPUs the calling thread may run on (its affinity mask, within its
/// cgroup cpuset), ascending. Without `/proc`, every CPU of the machine.
///
/// # Errors
/// As [`this_machine`].
pub fn allowed_cpus() -> Result<Vec<u32>> {
    match super::thread_affinity::allowed_cpus_in(Path::new("/"))? {
        Some(cpus) => Ok(cpus),
        None => Ok(this_machine_unrestricted()?
            .cpus()
            .iter()
            .map(|c| c.os_index)
            .collect()),
    }
}

/// The machine under a root (`/` for this one), restricted to the allowed CPUs read there.
pub(crate) fn restricted(root: &Path) -> Result<Machine> {
    let machine = discover(root)?;
    match super::thread_affinity::allowed_cpus_in(root)? {
        Some(allowed) => machine.restrict_cpus(|c| allowed.binary_search(&c).is_ok()),
        None => Ok(machine),
    }
}

/// The machine under a root, every online CPU included.
pub(crate) fn discover(root: &Path) -> Result<Machine> {
    let (mut specs, matrix) = super::sysfs::node_specs(root)?;
    super::cpu_topology::number_cores_and_caches(root, &mut specs)?;
    // hwloc's `linux` backend reads `nodeN/distance` only when there are several nodes.
    let matrix = if specs.len() < 2 { None } else { matrix };
    let machine = Machine::from_specs(NAME, specs, matrix)?;
    // As `hwloc.rs`: a `/sys` that cannot say which CPUs are offline records none.
    Ok(match super::offline::offline_cpus(root) {
        Ok(off) => machine.with_offline_cpus(|id| off.get(&id).cloned().unwrap_or_default()),
        Err(_) => machine,
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::NodeKind;

    /// A fake root: node 0 with CPUs 0-1 (one core, one L2), node 1 with CPUs 2-3 online
    /// (one core each), node 2 whose CPU 4 is offline, node 3 memory-only; the thread may
    /// run on CPUs 0-2 only.
    #[test]
    fn a_fake_root_gives_hwlocs_machine() {
        let root = std::env::temp_dir().join(format!("zonal-linux-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let nodes = [
            ("0-1", &[0, 1][..]),
            ("2-3", &[2, 3]),
            ("", &[4]),
            ("", &[]),
        ];
        for (id, (cpulist, links)) in nodes.iter().enumerate() {
            let d = format!("sys/devices/system/node/node{id}");
            write(&format!("{d}/cpulist"), cpulist);
            write(&format!("{d}/distance"), "10 20 20 20");
            for c in *links {
                std::fs::create_dir_all(root.join(format!("{d}/cpu{c}"))).unwrap();
            }
        }
        write("sys/devices/system/cpu/online", "0-3\n");
        for (cpu, core, l2) in [
            (0, "0-1", "0-1"),
            (1, "0-1", "0-1"),
            (2, "2", "2"),
            (3, "3", "3"),
        ] {
            let d = format!("sys/devices/system/cpu/cpu{cpu}");
            write(&format!("{d}/topology/core_cpus_list"), core);
            write(&format!("{d}/cache/index0/level"), "2");
            write(&format!("{d}/cache/index0/type"), "Unified");
            write(&format!("{d}/cache/index0/shared_cpu_list"), l2);
        }
        write("proc/thread-self/status", "Cpus_allowed_list:\t0-2\n");
        let m = restricted(&root).unwrap();
        assert_eq!(m.name(), "this machine");
        let cpus: Vec<(u32, u32, u32)> = m
            .cpus()
            .iter()
            .map(|c| (c.os_index, c.core, c.cache_group))
            .collect();
        assert_eq!(
            cpus,
            [(0, 0, 2 << 24), (1, 0, 2 << 24), (2, 1, 2 << 24 | 1)]
        );
        let kinds: Vec<NodeKind> = m.nodes().iter().map(|n| n.kind()).collect();
        assert_eq!(
            kinds,
            [
                NodeKind::Cpus,
                NodeKind::Cpus,
                NodeKind::CpusOffline,
                NodeKind::MemoryOnly
            ]
        );
        assert_eq!(m.nodes()[1].withheld_cpus, [3]);
        assert_eq!(m.nodes()[2].offline_cpus, [4]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
