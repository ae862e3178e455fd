//! Which nodes of a pool's topology have workers, and why the others have none
//! ([`ThreadPool::node_workers`]).

/// One node of a pool's topology: its workers, or why it has none.
///
/// ```
/// # use zonal_runtime::doc_facade as zonal;
/// use zonal::runtime::{NodeWorkers, ThreadPoolBuilder};
/// let pool = ThreadPoolBuilder::new().preset("s1").no_policy().workers_per_node(1).build()?;
/// let nodes = pool.node_workers();
/// assert_eq!(nodes.len(), 16);
/// assert!(matches!(&nodes[0], NodeWorkers::Workers { workers } if workers.len() == 1));
/// # Ok::<(), zonal::BuildError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum NodeWorkers {
    /// Workers sit on it (their indexes, ascending).
    Workers {
        /// The workers.
        workers: Vec<usize>,
    },
    /// It has CPUs the pool could use, but the builder chose none of them
    /// (`worker_cpus`, `num_threads`).
    NotChosen,
    /// It has no CPU at all: memory only (a [`NodeBuffer`](crate::NodeBuffer) can still
    /// live there).
    MemoryOnly,
    /// Its CPUs are withheld from this process (taskset, a cgroup cpuset).
    CpusNotAllowed {
        /// The withheld CPUs (OS indexes).
        cpus: Vec<u32>,
    },
    /// Its CPUs were all offline when the topology was read: treated as memory-only.
    CpusOffline {
        /// The offline CPUs (OS indexes).
        cpus: Vec<u32>,
    },
}

#[cfg(test)]
mod tests {
    use zonal_topology::{CpuSpec, Machine, NodeSpec, Topology};

    use super::*;
    use crate::ThreadPoolBuilder;

    #[test]
    fn every_node_says_why_it_has_no_workers() {
        let node = |os_id: u32, cpus: &[u32]| NodeSpec {
            os_id,
            cpus: cpus.iter().map(|&c| CpuSpec::alone(c, os_id)).collect(),
            memory_bytes: None,
        };
        let m = Machine::from_specs(
            "t",
            vec![
                node(0, &[0, 1]),
                node(1, &[2, 3]),
                node(2, &[4, 5]),
                node(3, &[]),
                node(4, &[]),
            ],
            None,
        )
        .unwrap()
        .with_offline_cpus(|n| if n == 4 { vec![8, 9] } else { Vec::new() })
        .restrict_cpus(|c| c < 4)
        .unwrap();
        let pool = ThreadPoolBuilder::new()
            .topology(Topology::new(m))
            .no_policy()
            .worker_cpus([0, 1])
            .build()
            .unwrap();
        assert_eq!(
            pool.node_workers(),
            [
                NodeWorkers::Workers {
                    workers: vec![0, 1]
                },
                NodeWorkers::NotChosen,
                NodeWorkers::CpusNotAllowed { cpus: vec![4, 5] },
                NodeWorkers::MemoryOnly,
                NodeWorkers::CpusOffline { cpus: vec![8, 9] },
            ]
        );
    }
}
