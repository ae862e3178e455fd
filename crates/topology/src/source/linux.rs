//! This machine on Linux, through sysfs and procfs alone (no libhwloc): the default
//! discovery behind [`this_machine`], [`this_machine_unrestricted`] and [`allowed_cpus`].
//!
//! It gives the [`Machine`] hwloc's discovery (`hwloc.rs`, the `hwloc` feature) gives, read
//! from the same files hwloc's `linux` backend reads:
//!
//! - Nodes, their CPUs, memory and distances: `/sys/devices/system/node/node*/{cpulist,
//!   meminfo,distance}` through the sysfs reader (`sysfs.rs`), by OS id. As hwloc's `linux`
//!   backend, a single node records no distance matrix (its `[[10]]` is
//!   [`DistanceKind::SingleNode`](crate::DistanceKind::SingleNode)).
//! - Cores and last-level caches: `/sys/devices/system/cpu/cpuN/{topology,cache}`,
//!   numbered as hwloc numbers its `Core` and cache objects (`cpu_topology.rs`).
//! - A kernel without NUMA (`CONFIG_NUMA=n`) has no `node/` directory: as hwloc, one node
//!   (OS id 0) holding the CPUs of `cpu/online`. Without either, [`TopologyError::NoSysfs`]
//!   (sysfs not mounted), which a pool treats as an undiscoverable machine.
//! - Offline CPUs: `cpu/online` and the nodes' `cpuM` links (`offline.rs`); as in
//!   `hwloc.rs`, a `/sys` that cannot say records none.
//! - The allowed CPUs: the calling thread's `Cpus_allowed_list` (`thread_affinity.rs`),
//!   which holds the affinity mask and the cgroup cpuset; the CPUs left out are recorded per
//!   node ([`NodeInfo::withheld_cpus`](crate::NodeInfo::withheld_cpus)).
//! - The machine is named `this machine`, as hwloc's discovery names it.
//!
//! Nothing here changes any thread's binding.

use std::path::Path;

use crate::error::{Result, TopologyError};
use crate::machine::{CpuSpec, Machine, NodeSpec};

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
    let system = root.join("sys/devices/system");
    let (mut specs, matrix) = if system.join("node").exists() {
        super::sysfs::node_specs(root)?
    } else {
        (vec![without_numa(&system)?], None)
    };
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

/// A kernel without NUMA: one node, OS id 0, holding the online CPUs.
fn without_numa(system: &Path) -> Result<NodeSpec> {
    let online = system.join("cpu/online");
    let Some(text) = super::sysfs::optional_text(&online)? else {
        return Err(TopologyError::NoSysfs {
            path: system.to_path_buf(),
        });
    };
    let cpus = super::cpulist::parse_cpulist(text.trim()).map_err(|e| e.in_file(&online))?;
    Ok(NodeSpec {
        os_id: 0,
        cpus: cpus.into_iter().map(|c| CpuSpec::alone(c, 0)).collect(),
        memory_bytes: None,
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

    /// A kernel built without NUMA: no `node/` directory, one node of the online CPUs; and
    /// a root without sysfs at all.
    #[test]
    fn a_kernel_without_numa_is_one_node_and_no_sysfs_is_named() {
        let root = std::env::temp_dir().join(format!("zonal-linux-flat-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let p = root.join("sys/devices/system/cpu/online");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "0-2\n").unwrap();
        let m = discover(&root).unwrap();
        assert_eq!(m.nodes().len(), 1);
        assert_eq!(m.nodes()[0].os_id, 0);
        let cpus: Vec<u32> = m.cpus().iter().map(|c| c.os_index).collect();
        assert_eq!(cpus, [0, 1, 2]);

        std::fs::write(&p, "0-x\n").unwrap();
        let e = discover(&root).unwrap_err();
        assert!(e.to_string().contains("cpu/online"), "{e}");

        std::fs::remove_dir_all(root.join("sys")).unwrap();
        let e = discover(&root).unwrap_err();
        assert!(matches!(e, TopologyError::NoSysfs { .. }), "{e}");
        assert!(e.to_string().contains("is sysfs mounted"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
