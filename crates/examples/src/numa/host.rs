//! What the NUMA report says about the machine it ran on: the topology from sysfs (nodes,
//! distances, CPUs, memory per node), the CPUs this process may use, and what confounds
//! NUMA figures (automatic page migration, transparent huge pages, SMT, the frequency
//! governor, the kernel, Zonal's commit). The host name is never read.

use std::path::Path;

use serde::Serialize;
use zonal::topology::{allowed_cpus, from_sysfs_root, Machine};

/// One node as sysfs describes it.
#[derive(Clone, Debug, Serialize)]
pub struct NodeFacts {
    /// The kernel's node id.
    pub os_id: u32,
    /// Its online CPUs (OS indexes).
    pub cpus: Vec<u32>,
    /// Its CPUs this process may run on.
    pub allowed_cpus: Vec<u32>,
    /// Its memory (`MemTotal`), bytes, if sysfs says.
    pub memory_bytes: Option<u64>,
}

/// The machine's topology.
#[derive(Clone, Debug, Serialize)]
pub struct Topo {
    /// The nodes, in sysfs order.
    pub nodes: Vec<NodeFacts>,
    /// The node distances (SLIT), row by row, in the order of `nodes`.
    pub distances: Vec<Vec<u32>>,
    /// CPUs online.
    pub cpus_online: usize,
    /// CPUs this process may run on (affinity within its cpuset).
    pub cpus_allowed: usize,
}

impl Topo {
    /// This machine, read from `/sys` (every online CPU), and the CPUs allowed to us.
    ///
    /// # Errors
    /// Why sysfs could not be read.
    pub fn discover() -> Result<(Self, Machine), zonal::topology::TopologyError> {
        let machine = from_sysfs_root(Path::new("/"))?;
        let allowed = allowed_cpus()?;
        let nodes: Vec<NodeFacts> = machine
            .nodes()
            .iter()
            .map(|n| {
                let cpus: Vec<u32> = n.cpus.iter().map(|&c| machine.cpu(c).os_index).collect();
                NodeFacts {
                    os_id: n.os_id,
                    allowed_cpus: cpus
                        .iter()
                        .copied()
                        .filter(|c| allowed.contains(c))
                        .collect(),
                    cpus,
                    memory_bytes: n.memory_bytes,
                }
            })
            .collect();
        let topo = Self {
            cpus_online: nodes.iter().map(|n| n.cpus.len()).sum(),
            cpus_allowed: allowed.len(),
            distances: machine.distance_rows(),
            nodes,
        };
        Ok((topo, machine))
    }

    /// The nodes with at least one CPU this process may use.
    pub fn nodes_with_cpus(&self) -> Vec<&NodeFacts> {
        self.nodes
            .iter()
            .filter(|n| !n.allowed_cpus.is_empty())
            .collect()
    }

    /// The distance between the nodes of OS ids `a` and `b`, if both are known.
    pub fn distance(&self, a: u32, b: u32) -> Option<u32> {
        let i = self.nodes.iter().position(|n| n.os_id == a)?;
        let j = self.nodes.iter().position(|n| n.os_id == b)?;
        self.distances.get(i)?.get(j).copied()
    }
}

/// What confounds NUMA figures on this machine, each as read (or why it could not be).
#[derive(Clone, Debug, Serialize)]
pub struct Confounders {
    /// `/proc/sys/kernel/numa_balancing` (1: the kernel migrates pages and tasks itself).
    pub numa_balancing: String,
    /// `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub transparent_hugepages: String,
    /// `/sys/kernel/mm/transparent_hugepage/defrag`.
    pub thp_defrag: String,
    /// `/sys/devices/system/cpu/smt/active` (1: sibling hyperthreads share cores).
    pub smt_active: String,
    /// `scaling_governor` of the first CPU.
    pub cpu_governor: String,
    /// `/proc/sys/kernel/osrelease`.
    pub kernel: String,
    /// Zonal's commit (`git rev-parse HEAD` in the source tree, `+dirty` with local
    /// changes), or `unknown` and why.
    pub zonal_commit: String,
}

/// A file's first line, or `unknown (why)`.
pub(crate) fn read(path: &str) -> String {
    match std::fs::read_to_string(path) {
        Ok(s) => s.lines().next().unwrap_or("").trim().to_owned(),
        Err(e) => format!("unknown ({path}: {e})"),
    }
}

impl Confounders {
    /// Reads them now.
    pub fn read() -> Self {
        Self {
            numa_balancing: read("/proc/sys/kernel/numa_balancing"),
            transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled"),
            thp_defrag: read("/sys/kernel/mm/transparent_hugepage/defrag"),
            smt_active: read("/sys/devices/system/cpu/smt/active"),
            cpu_governor: read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            kernel: read("/proc/sys/kernel/osrelease"),
            zonal_commit: commit(),
        }
    }
}

/// The source tree's commit, from `git` (the tree this program was built from).
fn commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
    };
    match git(&["rev-parse", "HEAD"]) {
        Ok(out) if out.status.success() => {
            let rev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .map(|o| !o.stdout.is_empty())
                .unwrap_or(false);
            if dirty {
                format!("{rev}+dirty")
            } else {
                rev
            }
        }
        Ok(out) => format!(
            "unknown (git rev-parse in {dir}: {})",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => format!("unknown (no git here: {e})"),
    }
}
