//! The guest's shape: NUMA nodes, their vCPUs and memory, and the distance matrix, taken from
//! a Zonal machine model, and the QEMU arguments that build it.
//!
//! Guest node ids are dense, `0..n`, in ascending source OS-id order; guest CPU ids are
//! consecutive node by node (node 0 gets CPUs `0..c0`, node 1 the next `c1`, …). Guest node
//! `i` keeps the source distances of the `i`-th source node.

use std::path::Path;

use zonal_topology::{CpuSpec, Machine, NodeSpec, LOCAL_DISTANCE, MAX_DISTANCE};

use crate::error::GuestError;

/// The most vCPUs a guest may have: QEMU's `pc` machine without an IOMMU (no interrupt
/// remapping, so no x2APIC ids above 254) takes at most 255.
pub const MAX_GUEST_CPUS: u32 = 255;

/// The most NUMA nodes a guest may have: QEMU's `MAX_NODES` (`include/sysemu/numa.h`) is
/// 128; `-numa node,nodeid=128` and above are refused.
pub const MAX_GUEST_NODES: usize = 128;

/// The least memory a node may have: Linux on x86 drops NUMA nodes smaller than 4 MiB
/// (`NODE_MIN_SIZE`) and a node needs room for its own page tables and per-node data.
pub const MIN_NODE_MEMORY_MIB: u32 = 16;

/// The most memory one node may have.
pub const MAX_NODE_MEMORY_MIB: u32 = 65_536;

/// The least memory a guest may have in all: Debian's kernel with an initramfs of busybox and
/// a few binaries (a few MiB, held twice while it is unpacked) runs out of memory at 96 MiB.
pub const MIN_GUEST_MEMORY_MIB: u64 = 128;

/// The most memory a guest may have in all (QEMU allocates guest RAM lazily, but the host
/// must still be able to back what the guest touches).
pub const MAX_GUEST_MEMORY_MIB: u64 = 65_536;

/// How many vCPUs a guest node gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuCount {
    /// As many as the source node has.
    AsSource,
    /// At most this many (a node with CPUs keeps at least one; must be ≥ 1).
    AtMost(u32),
}

/// How to shrink a source machine into a guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// vCPUs per node with CPUs (memory-only nodes stay memory-only).
    pub cpus_per_node: CpuCount,
    /// Memory of every node, in MiB.
    pub memory_mib_per_node: u32,
}

impl Default for Shape {
    /// One vCPU and 32 MiB per node: every shape of 4 to 128 nodes boots in seconds (fewer
    /// nodes need more memory each: [`MIN_GUEST_MEMORY_MIB`] in all).
    fn default() -> Self {
        Self {
            cpus_per_node: CpuCount::AtMost(1),
            memory_mib_per_node: 32,
        }
    }
}

/// One guest NUMA node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestNode {
    /// The source machine's OS id of this node.
    pub os_id: u32,
    /// Its vCPUs (0: memory-only).
    pub cpus: u32,
    /// Its memory in MiB.
    pub memory_mib: u32,
}

/// A validated guest shape: nodes in guest-id order and their distance matrix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestSpec {
    name: String,
    nodes: Vec<GuestNode>,
    distances: Vec<Vec<u32>>,
}

impl GuestSpec {
    /// The guest for `machine` shrunk to `shape`.
    ///
    /// # Errors
    /// [`GuestError::TooManyNodes`], [`TooManyCpus`](GuestError::TooManyCpus),
    /// [`NodeMemory`](GuestError::NodeMemory), [`TotalMemory`](GuestError::TotalMemory),
    /// [`CpusPerNode`](GuestError::CpusPerNode), [`LocalDistance`](GuestError::LocalDistance),
    /// [`RemoteDistance`](GuestError::RemoteDistance); all checked before anything that
    /// grows with the machine is allocated.
    pub fn from_machine(machine: &Machine, shape: &Shape) -> Result<Self, GuestError> {
        let sources = machine.nodes();
        check_node_count(sources.len())?;
        let cap = match shape.cpus_per_node {
            CpuCount::AsSource => u32::MAX,
            CpuCount::AtMost(0) => return Err(GuestError::CpusPerNode { value: 0 }),
            CpuCount::AtMost(n) => n,
        };
        let cpus_of =
            |n: &zonal_topology::NodeInfo| u32::try_from(n.cpus.len()).unwrap_or(u32::MAX).min(cap);
        check_cpu_count(sources.iter().map(|n| u64::from(cpus_of(n))).sum())?;
        let nodes: Vec<GuestNode> = sources
            .iter()
            .map(|n| GuestNode {
                os_id: n.os_id,
                cpus: cpus_of(n),
                memory_mib: shape.memory_mib_per_node,
            })
            .collect();
        Self::new(machine.name(), nodes, machine.distance_rows())
    }

    /// A guest from its parts (`distances`: one row per node, in `nodes` order).
    ///
    /// # Errors
    /// As [`from_machine`](Self::from_machine), and [`GuestError::InvalidSpec`] for a matrix
    /// that is not `nodes × nodes`, no node with CPUs, or repeated source ids.
    pub fn new(
        name: impl Into<String>,
        nodes: Vec<GuestNode>,
        distances: Vec<Vec<u32>>,
    ) -> Result<Self, GuestError> {
        let name = name.into();
        check_node_count(nodes.len())?;
        check_cpu_count(nodes.iter().map(|n| u64::from(n.cpus)).sum())?;
        let invalid = |problem: String| GuestError::InvalidSpec {
            name: name.clone(),
            problem,
        };
        if nodes.iter().all(|n| n.cpus == 0) {
            return Err(invalid("no node has CPUs".into()));
        }
        let mut total = 0u64;
        for (i, n) in nodes.iter().enumerate() {
            if !(MIN_NODE_MEMORY_MIB..=MAX_NODE_MEMORY_MIB).contains(&n.memory_mib) {
                return Err(GuestError::NodeMemory {
                    node: u32::try_from(i).unwrap_or(u32::MAX),
                    mib: n.memory_mib,
                    min: MIN_NODE_MEMORY_MIB,
                    max: MAX_NODE_MEMORY_MIB,
                });
            }
            total += u64::from(n.memory_mib);
        }
        if !(MIN_GUEST_MEMORY_MIB..=MAX_GUEST_MEMORY_MIB).contains(&total) {
            return Err(GuestError::TotalMemory {
                mib: total,
                min: MIN_GUEST_MEMORY_MIB,
                max: MAX_GUEST_MEMORY_MIB,
            });
        }
        let mut ids: Vec<u32> = nodes.iter().map(|n| n.os_id).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid(format!("source node {} appears twice", w[0])));
        }
        if distances.len() != nodes.len() {
            return Err(invalid(format!(
                "{} matrix rows for {} nodes",
                distances.len(),
                nodes.len()
            )));
        }
        for (i, row) in distances.iter().enumerate() {
            if row.len() != nodes.len() {
                return Err(invalid(format!(
                    "matrix row {i} has {} values for {} nodes",
                    row.len(),
                    nodes.len()
                )));
            }
            for (j, &d) in row.iter().enumerate() {
                let (from, to) = (nodes[i].os_id, nodes[j].os_id);
                if i == j && d != LOCAL_DISTANCE {
                    return Err(GuestError::LocalDistance {
                        node: from,
                        value: d,
                    });
                }
                if i != j && !(LOCAL_DISTANCE + 1..=MAX_DISTANCE).contains(&d) {
                    return Err(GuestError::RemoteDistance { from, to, value: d });
                }
            }
        }
        Ok(Self {
            name,
            nodes,
            distances,
        })
    }

    /// The source machine's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The nodes, in guest-id order.
    #[must_use]
    pub fn nodes(&self) -> &[GuestNode] {
        &self.nodes
    }

    /// The distance matrix, rows and columns in guest-id order.
    #[must_use]
    pub fn distances(&self) -> &[Vec<u32>] {
        &self.distances
    }

    /// Total vCPUs.
    #[must_use]
    pub fn cpu_count(&self) -> u32 {
        self.nodes.iter().map(|n| n.cpus).sum()
    }

    /// Total memory in MiB.
    #[must_use]
    pub fn memory_mib(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.memory_mib)).sum()
    }

    /// The guest CPU ids of each node, in guest-id order (consecutive, node by node).
    #[must_use]
    pub fn node_cpu_ranges(&self) -> Vec<std::ops::Range<u32>> {
        let mut next = 0;
        self.nodes
            .iter()
            .map(|n| {
                let r = next..next + n.cpus;
                next = r.end;
                r
            })
            .collect()
    }

    /// The machine the guest kernel should present: node ids `0..n`, the guest CPU
    /// numbering, this spec's distances and memory sizes.
    ///
    /// # Panics
    /// Never for a spec built by [`new`](Self::new) or [`from_machine`](Self::from_machine),
    /// which validate everything `Machine::from_specs` checks.
    #[must_use]
    pub fn expected_machine(&self) -> Machine {
        let specs = self
            .node_cpu_ranges()
            .into_iter()
            .zip(&self.nodes)
            .enumerate()
            .map(|(i, (cpus, n))| {
                let id = u32::try_from(i).unwrap_or(u32::MAX);
                NodeSpec {
                    os_id: id,
                    cpus: cpus.map(|c| CpuSpec::alone(c, id)).collect(),
                    memory_bytes: Some(u64::from(n.memory_mib) << 20),
                }
            })
            .collect();
        let rows = self
            .distances
            .iter()
            .map(|r| r.iter().map(|&d| u64::from(d)).collect())
            .collect();
        Machine::from_specs(format!("{} (guest)", self.name), specs, Some(rows))
            .expect("a validated guest spec is a valid machine")
    }

    /// The `qemu-system-x86_64` arguments that boot this guest: plain TCG on one host
    /// thread, serial console on stdio, no reboot, `kernel` with `initrd`, and the kernel
    /// command line [`DEFAULT_KERNEL_ARGS`](crate::DEFAULT_KERNEL_ARGS) followed by `append`.
    #[must_use]
    pub fn qemu_args(&self, kernel: &Path, initrd: &Path, append: &str) -> Vec<String> {
        let mut cmdline = crate::boot::DEFAULT_KERNEL_ARGS.to_owned();
        if !append.trim().is_empty() {
            cmdline.push(' ');
            cmdline.push_str(append.trim());
        }
        let mut a: Vec<String> = [
            "-accel",
            "tcg,thread=single",
            "-nographic",
            "-no-reboot",
            "-m",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        a.push(format!("{}M", self.memory_mib()));
        a.push("-smp".into());
        a.push(self.cpu_count().to_string());
        a.push("-kernel".into());
        a.push(kernel.display().to_string());
        a.push("-initrd".into());
        a.push(initrd.display().to_string());
        a.push("-append".into());
        a.push(cmdline);
        for (i, (n, cpus)) in self.nodes.iter().zip(self.node_cpu_ranges()).enumerate() {
            a.push("-object".into());
            a.push(format!("memory-backend-ram,id=m{i},size={}M", n.memory_mib));
            a.push("-numa".into());
            a.push(if cpus.is_empty() {
                format!("node,nodeid={i},memdev=m{i}")
            } else {
                format!(
                    "node,nodeid={i},cpus={}-{},memdev=m{i}",
                    cpus.start,
                    cpus.end - 1
                )
            });
        }
        for (i, row) in self.distances.iter().enumerate() {
            for (j, d) in row.iter().enumerate() {
                if i != j {
                    a.push("-numa".into());
                    a.push(format!("dist,src={i},dst={j},val={d}"));
                }
            }
        }
        a
    }
}

fn check_node_count(nodes: usize) -> Result<(), GuestError> {
    if nodes > MAX_GUEST_NODES {
        return Err(GuestError::TooManyNodes {
            nodes,
            limit: MAX_GUEST_NODES,
        });
    }
    Ok(())
}

fn check_cpu_count(cpus: u64) -> Result<(), GuestError> {
    if cpus > u64::from(MAX_GUEST_CPUS) {
        return Err(GuestError::TooManyCpus {
            cpus,
            limit: MAX_GUEST_CPUS,
        });
    }
    Ok(())
}

#[cfg(test)]
mod test {
    use super::*;

    fn four_nodes() -> Machine {
        let specs = (0..4)
            .map(|i| NodeSpec {
                os_id: i * 2,
                cpus: (0..3).map(|c| CpuSpec::alone(i * 3 + c, i * 2)).collect(),
                memory_bytes: None,
            })
            .collect();
        let d = [
            [10, 12, 20, 22],
            [12, 10, 22, 20],
            [20, 22, 10, 12],
            [22, 20, 12, 10],
        ];
        Machine::from_specs("four", specs, Some(d.iter().map(|r| r.to_vec()).collect())).unwrap()
    }

    #[test]
    fn shrinks_and_numbers_densely() {
        let shape = Shape {
            cpus_per_node: CpuCount::AtMost(2),
            memory_mib_per_node: 32,
        };
        let s = GuestSpec::from_machine(&four_nodes(), &shape).unwrap();
        assert_eq!(s.cpu_count(), 8);
        assert_eq!(s.nodes()[3].os_id, 6);
        assert_eq!(s.node_cpu_ranges()[1], 2..4);
        let m = s.expected_machine();
        assert_eq!(m.nodes()[1].os_id, 1);
        assert_eq!(m.cpu(m.nodes()[1].cpus[0]).os_index, 2);
        let args = s.qemu_args(Path::new("k"), Path::new("i"), "x=1");
        let joined = args.join(" ");
        assert!(joined.contains("-m 128M -smp 8"), "{joined}");
        assert!(
            joined.contains("node,nodeid=3,cpus=6-7,memdev=m3"),
            "{joined}"
        );
        assert!(joined.contains("dist,src=0,dst=3,val=22"), "{joined}");
        assert!(!joined.contains("src=1,dst=1"), "{joined}");
        assert!(joined.contains("no_timer_check x=1"), "{joined}");
        let all = GuestSpec::from_machine(
            &four_nodes(),
            &Shape {
                cpus_per_node: CpuCount::AsSource,
                memory_mib_per_node: 32,
            },
        )
        .unwrap();
        assert_eq!(all.cpu_count(), 12);
    }

    #[test]
    fn memory_only_nodes_stay_memory_only() {
        let specs = vec![
            NodeSpec {
                os_id: 0,
                cpus: vec![CpuSpec::alone(0, 0), CpuSpec::alone(1, 0)],
                memory_bytes: None,
            },
            NodeSpec {
                os_id: 7,
                cpus: vec![],
                memory_bytes: None,
            },
        ];
        let m = Machine::from_specs("m", specs, Some(vec![vec![10, 40], vec![40, 10]])).unwrap();
        let shape = Shape {
            memory_mib_per_node: 64,
            ..Shape::default()
        };
        let s = GuestSpec::from_machine(&m, &shape).unwrap();
        assert_eq!(s.nodes()[1].cpus, 0);
        let args = s.qemu_args(Path::new("k"), Path::new("i"), "").join(" ");
        assert!(args.contains("node,nodeid=1,memdev=m1"), "{args}");
        assert!(s.expected_machine().nodes()[1].cpus.is_empty());
    }

    #[test]
    fn limits_are_typed() {
        let m = four_nodes();
        let bad = |cpus, mem| {
            GuestSpec::from_machine(
                &m,
                &Shape {
                    cpus_per_node: cpus,
                    memory_mib_per_node: mem,
                },
            )
            .unwrap_err()
        };
        assert!(matches!(
            bad(CpuCount::AtMost(0), 32),
            GuestError::CpusPerNode { value: 0 }
        ));
        assert!(matches!(
            bad(CpuCount::AtMost(1), 4),
            GuestError::NodeMemory { mib: 4, .. }
        ));
        let many = zonal_topology::presets::hierarchical_machine(&[16, 16], 1).unwrap();
        assert!(matches!(
            GuestSpec::from_machine(&many, &Shape::default()),
            Err(GuestError::TooManyNodes { nodes: 256, .. })
        ));
        let wide = zonal_topology::presets::hierarchical_machine(&[4], 64).unwrap();
        let e = GuestSpec::from_machine(
            &wide,
            &Shape {
                cpus_per_node: CpuCount::AsSource,
                memory_mib_per_node: 32,
            },
        )
        .unwrap_err();
        assert!(
            matches!(e, GuestError::TooManyCpus { cpus: 256, .. }),
            "{e}"
        );
        let node = |os_id, cpus| GuestNode {
            os_id,
            cpus,
            memory_mib: 32,
        };
        let small = GuestSpec::new(
            "x",
            vec![node(0, 1), node(1, 1)],
            vec![vec![10, 20], vec![20, 10]],
        );
        assert!(matches!(
            small,
            Err(GuestError::TotalMemory { mib: 64, .. })
        ));
        let node = |os_id, cpus| GuestNode {
            os_id,
            cpus,
            memory_mib: 64,
        };
        let e = GuestSpec::new(
            "x",
            vec![node(0, 1), node(1, 1)],
            vec![vec![10, 10], vec![20, 10]],
        );
        assert!(matches!(
            e,
            Err(GuestError::RemoteDistance {
                from: 0,
                to: 1,
                value: 10
            })
        ));
        let node = |os_id, cpus| GuestNode {
            os_id,
            cpus,
            memory_mib: 128,
        };
        let e = GuestSpec::new("x", vec![node(0, 1)], vec![vec![12]]);
        assert!(matches!(
            e,
            Err(GuestError::LocalDistance { value: 12, .. })
        ));
        let e = GuestSpec::new("x", vec![node(0, 1)], vec![vec![10, 20]]);
        assert!(matches!(e, Err(GuestError::InvalidSpec { .. })));
        let e = GuestSpec::new("x", vec![node(0, 1); 2], vec![vec![10, 20], vec![20, 10]]);
        assert!(e.unwrap_err().to_string().contains("appears twice"));
    }
}
