//! The machine model: CPUs, NUMA nodes and the node distance matrix.
//!
//! A [`Machine`] is plain validated data. Every source (hwloc, XML, node dumps, sysfs,
//! presets, generators) produces a list of [`NodeSpec`]s and an optional matrix and goes
//! through [`Machine::from_specs`], so that validation is written once:
//! - at least one node and one CPU; no repeated node id; no CPU claimed by two nodes;
//! - the matrix is `nodes × nodes`, every value in Linux's range 10..=255, no zero diagonal;
//! - the hierarchy's per-level spans, which grow as nodes² × levels, list at most
//!   [`MAX_SPAN_ENTRIES`](crate::MAX_SPAN_ENTRIES) node ids (counted from the matrix);
//! - several nodes without a matrix get Linux's fallback (10 local, 20 remote), recorded in
//!   [`Machine::distance_kind`].
//!
//! Nodes are stored in ascending OS-id order and CPUs in ascending OS-index order; the dense
//! [`NodeId`] / [`CpuId`] indexes follow those orders.

use crate::error::{Result, TopologyError};
use crate::ids::{CpuId, NodeId};

/// Linux's `LOCAL_DISTANCE`.
pub const LOCAL_DISTANCE: u32 = 10;
/// Linux's `REMOTE_DISTANCE`, used when several nodes come without a matrix.
pub const REMOTE_DISTANCE: u32 = 20;
/// Largest distance Linux accepts (`sched_init_numa` rejects ≥ 256).
pub const MAX_DISTANCE: u32 = 255;
/// The most NUMA nodes a machine may have (Linux's `NODES_SHIFT` allows 1,024 on x86-64).
/// What grows with nodes² is bounded by it: at 4,096 nodes the distance matrix takes 64 MiB
/// (`u32`), the hierarchy's node × node level table 16 MiB (`u8`) and its nearest-first node
/// rows 64 MiB (`u32`), and its span ends (nodes × at most 246 levels, `u32`) 4 MiB. What
/// grows with nodes² × levels has a limit of its own,
/// [`MAX_SPAN_ENTRIES`](crate::MAX_SPAN_ENTRIES).
pub const MAX_NODES: usize = 4_096;
/// The most CPUs a machine may have. Every CPU keeps a victim order of every other CPU
/// (`Topology::victims`, 8 bytes a victim): 4,096 CPUs take 128 MiB. Checked before any
/// structure that grows with the input is built.
pub const MAX_CPUS: usize = 4_096;

/// One CPU (hardware thread, hwloc's PU) as a source describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSpec {
    /// The OS index of the PU.
    pub os_index: u32,
    /// An id shared by the SMT siblings of one core (any numbering; only equality matters).
    pub core: u32,
    /// An id shared by the CPUs behind one last-level cache (only equality matters).
    pub cache_group: u32,
}

impl CpuSpec {
    /// A CPU with no known siblings: its own core, sharing a cache with its node only.
    #[must_use]
    pub fn alone(os_index: u32, node_os_id: u32) -> Self {
        Self {
            os_index,
            core: os_index,
            cache_group: node_os_id,
        }
    }
}

/// One NUMA node as a source describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// The OS id (`nodeN`).
    pub os_id: u32,
    /// Its CPUs (may be empty: memory-only nodes).
    pub cpus: Vec<CpuSpec>,
    /// Local memory in bytes, if known.
    pub memory_bytes: Option<u64>,
}

impl NodeSpec {
    /// Node `os_id` holding the CPUs `cpus`, each its own core ([`CpuSpec::alone`]), its
    /// memory size unknown: what a source knows when it has only node → CPU lists.
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// use zonal::topology::{CpuSpec, NodeSpec};
    /// let n = NodeSpec::with_cpus(1, [2, 3]);
    /// assert_eq!(n.cpus, [CpuSpec::alone(2, 1), CpuSpec::alone(3, 1)]);
    /// assert_eq!(n.memory_bytes, None);
    /// ```
    #[must_use]
    pub fn with_cpus(os_id: u32, cpus: impl IntoIterator<Item = u32>) -> Self {
        Self {
            os_id,
            cpus: cpus.into_iter().map(|c| CpuSpec::alone(c, os_id)).collect(),
            memory_bytes: None,
        }
    }
}

/// Where the distance matrix came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum DistanceKind {
    /// Read from the machine, an hwloc XML export, or a node dump.
    Measured,
    /// A documented preset or a generator.
    Synthetic,
    /// Several nodes but no matrix: Linux's fallback, 10 local and 20 remote, was assumed.
    AssumedFallback,
    /// A single node: the trivial `[[10]]`.
    SingleNode,
}

/// A validated CPU of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuInfo {
    /// The OS index of the PU.
    pub os_index: u32,
    /// Core id (SMT siblings share it).
    pub core: u32,
    /// Last-level-cache group id.
    pub cache_group: u32,
    /// The node this CPU belongs to.
    pub node: NodeId,
}

/// A validated NUMA node of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// The OS id.
    pub os_id: u32,
    /// Its CPUs, ascending: the ones the model may use (online, and allowed to this process
    /// when the model was restricted to it).
    pub cpus: Vec<CpuId>,
    /// Local memory in bytes, if known.
    pub memory_bytes: Option<u64>,
    /// OS indexes of its CPUs that [`Machine::restrict_cpus`] removed (outside this
    /// process's affinity mask or cgroup cpuset), ascending. Not in the model.
    pub withheld_cpus: Vec<u32>,
    /// OS indexes of its CPUs that are present but offline, ascending, where the source can
    /// tell ([`Machine::with_offline_cpus`]). Not in the model.
    pub offline_cpus: Vec<u32>,
}

/// Why a node has CPUs in the model or not ([`NodeInfo::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum NodeKind {
    /// It has CPUs the model uses.
    Cpus,
    /// It has no CPU at all: memory only (CXL memory, a GPU's memory, MCDRAM).
    MemoryOnly,
    /// It has CPUs, but this process may not run on any of them (taskset, a cgroup
    /// cpuset): they are in [`NodeInfo::withheld_cpus`].
    CpusNotAllowed,
    /// Its CPUs are all offline ([`NodeInfo::offline_cpus`]): the kernel treats it as a
    /// memory-only node, and so does the model.
    CpusOffline,
}

impl NodeKind {
    /// The kebab-case name (as serialised).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Cpus => "cpus",
            NodeKind::MemoryOnly => "memory-only",
            NodeKind::CpusNotAllowed => "cpus-not-allowed",
            NodeKind::CpusOffline => "cpus-offline",
        }
    }
}

impl NodeInfo {
    /// Whether the node has CPUs in the model (nodes without take no part in the
    /// hierarchy, as memory-only nodes in Linux; [`kind`](Self::kind) says why).
    #[must_use]
    pub fn has_cpus(&self) -> bool {
        !self.cpus.is_empty()
    }

    /// Why the node has CPUs in the model or not. A node with some CPUs withheld and the
    /// others offline is [`NodeKind::CpusNotAllowed`]: bringing its CPUs online would not
    /// give this process any.
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// use zonal::topology::{CpuSpec, Machine, NodeKind, NodeSpec};
    /// let node = |os_id, cpus: &[u32]| NodeSpec {
    ///     os_id,
    ///     cpus: cpus.iter().map(|&c| CpuSpec::alone(c, os_id)).collect(),
    ///     memory_bytes: None,
    /// };
    /// let m = Machine::from_specs("t", vec![node(0, &[0, 1]), node(1, &[2, 3]), node(2, &[])], None)?;
    /// let r = m.restrict_cpus(|c| c < 2)?;
    /// let kinds: Vec<NodeKind> = r.nodes().iter().map(|n| n.kind()).collect();
    /// assert_eq!(kinds, [NodeKind::Cpus, NodeKind::CpusNotAllowed, NodeKind::MemoryOnly]);
    /// assert_eq!(r.nodes()[1].withheld_cpus, [2, 3]);
    /// # Ok::<(), zonal::topology::TopologyError>(())
    /// ```
    #[must_use]
    pub fn kind(&self) -> NodeKind {
        if self.has_cpus() {
            NodeKind::Cpus
        } else if !self.withheld_cpus.is_empty() {
            NodeKind::CpusNotAllowed
        } else if !self.offline_cpus.is_empty() {
            NodeKind::CpusOffline
        } else {
            NodeKind::MemoryOnly
        }
    }
}

/// A validated machine: CPUs, nodes and their distance matrix.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// use zonal::topology::{Machine, NodeSpec, CpuSpec};
/// let nodes = vec![
///     NodeSpec { os_id: 0, cpus: vec![CpuSpec::alone(0, 0)], memory_bytes: None },
///     NodeSpec { os_id: 1, cpus: vec![CpuSpec::alone(1, 1)], memory_bytes: None },
/// ];
/// let m = Machine::from_specs("two", nodes, Some(vec![vec![10, 21], vec![21, 10]]))?;
/// assert_eq!(m.distance(0.into(), 1.into()), 21);
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Machine {
    name: String,
    cpus: Vec<CpuInfo>,
    nodes: Vec<NodeInfo>,
    /// Row-major `nodes × nodes`.
    distances: Vec<u32>,
    distance_kind: DistanceKind,
}

impl From<usize> for NodeId {
    fn from(i: usize) -> Self {
        NodeId::new(i)
    }
}

impl From<usize> for CpuId {
    fn from(i: usize) -> Self {
        CpuId::new(i)
    }
}

impl Machine {
    /// Validates a description and builds the model.
    ///
    /// `distances`, when given, is one row per node in the order of `nodes` (the order of the
    /// input, which need not be sorted). When absent, one node gets `[[10]]` and several get
    /// Linux's 10/20 fallback, recorded as [`DistanceKind::AssumedFallback`].
    ///
    /// # Errors
    /// [`TopologyError::NoNodes`], [`NoCpus`](TopologyError::NoCpus),
    /// [`DuplicateNode`](TopologyError::DuplicateNode),
    /// [`OverlappingCpus`](TopologyError::OverlappingCpus),
    /// [`MatrixRows`](TopologyError::MatrixRows),
    /// [`NonSquareMatrix`](TopologyError::NonSquareMatrix),
    /// [`DistanceOutOfRange`](TopologyError::DistanceOutOfRange),
    /// [`ZeroDiagonal`](TopologyError::ZeroDiagonal),
    /// [`TooManySpanEntries`](TopologyError::TooManySpanEntries) (more distinct distances
    /// over more nodes than the hierarchy's spans may list: [`MAX_SPAN_ENTRIES`](crate::MAX_SPAN_ENTRIES)).
    pub fn from_specs(
        name: impl Into<String>,
        nodes: Vec<NodeSpec>,
        distances: Option<Vec<Vec<u64>>>,
    ) -> Result<Self> {
        Self::build(name.into(), nodes, distances, DistanceKind::Measured)
    }

    /// Like [`from_specs`](Self::from_specs) for presets and generators: the matrix is
    /// recorded as [`DistanceKind::Synthetic`].
    ///
    /// # Errors
    /// As [`from_specs`](Self::from_specs).
    pub fn synthetic(
        name: impl Into<String>,
        nodes: Vec<NodeSpec>,
        distances: Vec<Vec<u64>>,
    ) -> Result<Self> {
        Self::build(name.into(), nodes, Some(distances), DistanceKind::Synthetic)
    }

    fn build(
        name: String,
        nodes: Vec<NodeSpec>,
        distances: Option<Vec<Vec<u64>>>,
        measured: DistanceKind,
    ) -> Result<Self> {
        let n = nodes.len();
        if n == 0 {
            return Err(TopologyError::NoNodes);
        }
        if n > MAX_NODES {
            return Err(TopologyError::TooMany {
                what: "NUMA nodes",
                count: n,
                limit: MAX_NODES,
            });
        }
        let cpus = nodes
            .iter()
            .map(|s| s.cpus.len())
            .fold(0usize, usize::saturating_add);
        if cpus > MAX_CPUS {
            return Err(TopologyError::TooMany {
                what: "CPUs",
                count: cpus,
                limit: MAX_CPUS,
            });
        }
        // Matrix shape and values, checked in input order so errors name the input's rows.
        let (matrix, distance_kind) = match distances {
            Some(rows) => {
                if rows.len() != n {
                    return Err(TopologyError::MatrixRows {
                        rows: rows.len(),
                        nodes: n,
                    });
                }
                for (row, r) in rows.iter().enumerate() {
                    if r.len() != n {
                        return Err(TopologyError::NonSquareMatrix {
                            nodes: n,
                            row,
                            len: r.len(),
                        });
                    }
                }
                for (i, r) in rows.iter().enumerate() {
                    for (j, &v) in r.iter().enumerate() {
                        if i == j && v == 0 {
                            return Err(TopologyError::ZeroDiagonal {
                                node: nodes[i].os_id,
                            });
                        }
                        if !(u64::from(LOCAL_DISTANCE)..=u64::from(MAX_DISTANCE)).contains(&v) {
                            return Err(TopologyError::DistanceOutOfRange {
                                from: nodes[i].os_id,
                                to: nodes[j].os_id,
                                value: v,
                            });
                        }
                    }
                }
                (Some(rows), measured)
            }
            None if n == 1 => (None, DistanceKind::SingleNode),
            // Linux's fallback (10 local, 20 remote), written straight into the node × node
            // table below: no second matrix of u64 rows.
            None => (None, DistanceKind::AssumedFallback),
        };
        let distance_kind = if n == 1 && distance_kind == DistanceKind::Measured {
            DistanceKind::SingleNode
        } else {
            distance_kind
        };

        // Sort nodes by OS id, keeping the matrix in step.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| nodes[i].os_id);
        for w in order.windows(2) {
            if nodes[w[0]].os_id == nodes[w[1]].os_id {
                return Err(TopologyError::DuplicateNode {
                    id: nodes[w[0]].os_id,
                });
            }
        }
        // The nodes' memory sizes must add up to a byte count: sizes that wrap past 2^64
        // when summed are refused, naming the node where the sum overflows.
        let mut total_memory = 0u64;
        for &i in &order {
            if let Some(bytes) = nodes[i].memory_bytes {
                total_memory =
                    total_memory
                        .checked_add(bytes)
                        .ok_or(TopologyError::MemoryOverflow {
                            node: nodes[i].os_id,
                            bytes,
                        })?;
            }
        }
        let mut distances = Vec::with_capacity(n * n);
        for &i in &order {
            for &j in &order {
                distances.push(match &matrix {
                    // In range: checked above.
                    Some(rows) => u32::try_from(rows[i][j]).unwrap_or(MAX_DISTANCE),
                    None if i == j => LOCAL_DISTANCE,
                    None => REMOTE_DISTANCE,
                });
            }
        }

        // CPUs: global OS-index order; each claimed by exactly one node.
        let mut all: Vec<(CpuSpec, usize)> = Vec::new();
        for (dense, &i) in order.iter().enumerate() {
            for c in &nodes[i].cpus {
                all.push((c.clone(), dense));
            }
        }
        if all.is_empty() {
            return Err(TopologyError::NoCpus);
        }
        all.sort_by_key(|(c, node)| (c.os_index, *node));
        for w in all.windows(2) {
            if w[0].0.os_index == w[1].0.os_index {
                return Err(TopologyError::OverlappingCpus {
                    cpu: w[0].0.os_index,
                    first: nodes[order[w[0].1]].os_id,
                    second: nodes[order[w[1].1]].os_id,
                });
            }
        }
        let mut node_infos: Vec<NodeInfo> = order
            .iter()
            .map(|&i| NodeInfo {
                os_id: nodes[i].os_id,
                cpus: Vec::new(),
                memory_bytes: nodes[i].memory_bytes,
                withheld_cpus: Vec::new(),
                offline_cpus: Vec::new(),
            })
            .collect();
        let cpus: Vec<CpuInfo> = all
            .into_iter()
            .enumerate()
            .map(|(idx, (c, node))| {
                node_infos[node].cpus.push(CpuId::new(idx));
                CpuInfo {
                    os_index: c.os_index,
                    core: c.core,
                    cache_group: c.cache_group,
                    node: NodeId::new(node),
                }
            })
            .collect();
        let machine = Self {
            name,
            cpus,
            nodes: node_infos,
            distances,
            distance_kind,
        };
        // Before anything that grows with nodes² × levels is built from it.
        crate::hierarchy::check_span_entries(&machine)?;
        Ok(machine)
    }

    /// A human name for the machine (file name, preset name, `this machine`).
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All CPUs, in OS-index order.
    #[must_use]
    pub fn cpus(&self) -> &[CpuInfo] {
        &self.cpus
    }

    /// All nodes, in OS-id order (memory-only nodes included).
    #[must_use]
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }

    /// One CPU.
    #[must_use]
    pub fn cpu(&self, cpu: CpuId) -> &CpuInfo {
        &self.cpus[cpu.index()]
    }

    /// One node.
    #[must_use]
    pub fn node(&self, node: NodeId) -> &NodeInfo {
        &self.nodes[node.index()]
    }

    /// The CPU with this OS index, if the model has it.
    #[must_use]
    pub fn cpu_by_os_index(&self, os_index: u32) -> Option<CpuId> {
        self.cpus
            .binary_search_by_key(&os_index, |c| c.os_index)
            .ok()
            .map(CpuId::new)
    }

    /// The node with this OS id, if the model has it.
    #[must_use]
    pub fn node_by_os_id(&self, os_id: u32) -> Option<NodeId> {
        self.nodes
            .binary_search_by_key(&os_id, |n| n.os_id)
            .ok()
            .map(NodeId::new)
    }

    /// `d(a, b)` from the matrix (row `a`).
    #[inline]
    #[must_use]
    pub fn distance(&self, a: NodeId, b: NodeId) -> u32 {
        self.distances[a.index() * self.nodes.len() + b.index()]
    }

    /// Where the matrix came from.
    #[must_use]
    pub fn distance_kind(&self) -> DistanceKind {
        self.distance_kind
    }

    /// The first asymmetric pair, if any (Linux only warns about these; so do we).
    #[must_use]
    pub fn asymmetry(&self) -> Option<TopologyError> {
        let n = self.nodes.len();
        for i in 0..n {
            for j in (i + 1)..n {
                let (a, b) = (NodeId::new(i), NodeId::new(j));
                let (ab, ba) = (self.distance(a, b), self.distance(b, a));
                if ab != ba {
                    return Some(TopologyError::AsymmetricMatrix {
                        a: self.nodes[i].os_id,
                        b: self.nodes[j].os_id,
                        ab,
                        ba,
                    });
                }
            }
        }
        None
    }

    /// Fails on the first asymmetric pair, for callers that want strict input.
    ///
    /// # Errors
    /// [`TopologyError::AsymmetricMatrix`].
    pub fn require_symmetric(&self) -> Result<()> {
        self.asymmetry().map_or(Ok(()), Err)
    }

    /// The rows of the matrix, in node order.
    #[must_use]
    pub fn distance_rows(&self) -> Vec<Vec<u32>> {
        self.distances
            .chunks(self.nodes.len())
            .map(<[u32]>::to_vec)
            .collect()
    }

    /// The machine's nodes as specs (OS ids, CPUs, memory), in node order: edit them (remove
    /// or add CPUs) and rebuild with [`respecify`](Self::respecify).
    #[must_use]
    pub fn node_specs(&self) -> Vec<NodeSpec> {
        self.nodes
            .iter()
            .map(|n| NodeSpec {
                os_id: n.os_id,
                cpus: n
                    .cpus
                    .iter()
                    .map(|&c| {
                        let c = self.cpu(c);
                        CpuSpec {
                            os_index: c.os_index,
                            core: c.core,
                            cache_group: c.cache_group,
                        }
                    })
                    .collect(),
                memory_bytes: n.memory_bytes,
            })
            .collect()
    }

    /// A machine of `specs` — this machine's [`node_specs`](Self::node_specs), edited, one
    /// per node in the same order — with this machine's name, distances and their kind.
    ///
    /// # Errors
    /// As [`Machine::from_specs`] (for example [`TopologyError::NoCpus`] if no CPU is left).
    pub fn respecify(&self, specs: Vec<NodeSpec>) -> Result<Self> {
        let rows = self
            .distance_rows()
            .into_iter()
            .map(|r| r.into_iter().map(u64::from).collect())
            .collect();
        let mut m = Self::build(self.name.clone(), specs, Some(rows), self.distance_kind)?;
        m.distance_kind = self.distance_kind;
        Ok(m)
    }

    /// Restricts the model to the CPUs for which `keep` returns true (for example the
    /// process's allowed set). The CPUs removed are recorded in each node's
    /// [`withheld_cpus`](NodeInfo::withheld_cpus) (with those withheld before), so that a
    /// node that loses every CPU is [`NodeKind::CpusNotAllowed`], not memory-only; it takes
    /// no part in the hierarchy all the same. Offline CPUs stay recorded.
    ///
    /// # Errors
    /// [`TopologyError::NoCpus`] if nothing is kept.
    pub fn restrict_cpus(&self, keep: impl Fn(u32) -> bool) -> Result<Self> {
        let mut specs = self.node_specs();
        let mut withheld: Vec<Vec<u32>> = Vec::with_capacity(specs.len());
        for (n, info) in specs.iter_mut().zip(&self.nodes) {
            let mut gone = info.withheld_cpus.clone();
            gone.extend(n.cpus.iter().map(|c| c.os_index).filter(|&c| !keep(c)));
            gone.sort_unstable();
            gone.dedup();
            withheld.push(gone);
            n.cpus.retain(|c| keep(c.os_index));
        }
        let mut m = self.respecify(specs)?;
        for ((node, gone), old) in m.nodes.iter_mut().zip(withheld).zip(&self.nodes) {
            node.withheld_cpus = gone;
            node.offline_cpus.clone_from(&old.offline_cpus);
        }
        Ok(m)
    }

    /// Records the CPUs that are present but offline, per node OS id (`offline(os_id)`):
    /// a node whose CPUs are all offline is then [`NodeKind::CpusOffline`] rather than
    /// memory-only. CPUs the model has (online ones) are ignored, as are duplicates.
    /// The sources of this machine (hwloc, sysfs) call it with what sysfs says
    /// (`nodeN/cpuM` links of CPUs whose `online` is 0).
    #[must_use]
    pub fn with_offline_cpus(mut self, offline: impl Fn(u32) -> Vec<u32>) -> Self {
        for k in 0..self.nodes.len() {
            let mut cpus = offline(self.nodes[k].os_id);
            cpus.retain(|&c| self.cpu_by_os_index(c).is_none());
            cpus.sort_unstable();
            cpus.dedup();
            self.nodes[k].offline_cpus = cpus;
        }
        self
    }
}

/// Machines shared by the crate's unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{Machine, NodeSpec};

    /// Node `os_id` holding `cpus`, each its own core, no memory size.
    pub(crate) fn node(os_id: u32, cpus: &[u32]) -> NodeSpec {
        NodeSpec::with_cpus(os_id, cpus.iter().copied())
    }

    /// Four nodes: CPUs 0–1 on node 0, 2–3 on node 1, none on nodes 2 and 3 (before any
    /// offline CPUs or restriction are applied to tell their kinds apart).
    pub(crate) fn two_nodes_and_two_without_cpus() -> Machine {
        Machine::from_specs(
            "t",
            vec![
                node(0, &[0, 1]),
                node(1, &[2, 3]),
                node(2, &[]),
                node(3, &[]),
            ],
            None,
        )
        .unwrap()
    }
}

#[cfg(test)]
mod test {
    use super::fixtures::{node, two_nodes_and_two_without_cpus};
    use super::*;

    #[test]
    fn sorts_nodes_and_matrix_together() {
        let m = Machine::from_specs(
            "t",
            vec![node(1, &[2, 3]), node(0, &[0, 1])],
            Some(vec![vec![10, 21], vec![21, 10]]),
        )
        .unwrap();
        assert_eq!(m.nodes()[0].os_id, 0);
        assert_eq!(m.cpu(CpuId(0)).node, NodeId(0));
        assert_eq!(m.cpu(CpuId(3)).node, NodeId(1));
        assert_eq!(m.distance(NodeId(0), NodeId(1)), 21);
    }

    #[test]
    fn fallback_matrix_is_recorded() {
        let m = Machine::from_specs("t", vec![node(0, &[0]), node(1, &[1]), node(2, &[2])], None)
            .unwrap();
        assert_eq!(m.distance_kind(), DistanceKind::AssumedFallback);
        assert_eq!(m.distance(NodeId(0), NodeId(2)), 20);
        let one = Machine::from_specs("t", vec![node(0, &[0, 1])], None).unwrap();
        assert_eq!(one.distance_kind(), DistanceKind::SingleNode);
    }

    #[test]
    fn typed_errors() {
        let e = Machine::from_specs("t", vec![], None).unwrap_err();
        assert!(matches!(e, TopologyError::NoNodes));
        let e = Machine::from_specs("t", vec![node(0, &[])], None).unwrap_err();
        assert!(matches!(e, TopologyError::NoCpus));
        let e = Machine::from_specs("t", vec![node(0, &[0]), node(0, &[1])], None).unwrap_err();
        assert!(matches!(e, TopologyError::DuplicateNode { id: 0 }));
        let e = Machine::from_specs("t", vec![node(0, &[0, 1]), node(1, &[1])], None).unwrap_err();
        assert!(matches!(
            e,
            TopologyError::OverlappingCpus {
                cpu: 1,
                first: 0,
                second: 1
            }
        ));
        let e = Machine::from_specs(
            "t",
            vec![node(0, &[0]), node(1, &[1])],
            Some(vec![vec![10, 20], vec![20]]),
        )
        .unwrap_err();
        assert!(matches!(
            e,
            TopologyError::NonSquareMatrix { row: 1, len: 1, .. }
        ));
        let e = Machine::from_specs(
            "t",
            vec![node(0, &[0]), node(1, &[1])],
            Some(vec![vec![10, 20]]),
        )
        .unwrap_err();
        assert!(matches!(e, TopologyError::MatrixRows { rows: 1, nodes: 2 }));
        let e = Machine::from_specs(
            "t",
            vec![node(0, &[0]), node(1, &[1])],
            Some(vec![vec![0, 20], vec![20, 10]]),
        )
        .unwrap_err();
        assert!(matches!(e, TopologyError::ZeroDiagonal { node: 0 }));
        let e = Machine::from_specs(
            "t",
            vec![node(0, &[0]), node(7, &[1])],
            Some(vec![vec![10, 256], vec![20, 10]]),
        )
        .unwrap_err();
        assert!(matches!(
            e,
            TopologyError::DistanceOutOfRange {
                from: 0,
                to: 7,
                value: 256
            }
        ));
        assert!(e.to_string().contains("256"));
    }

    #[test]
    fn asymmetry_is_reported_not_rejected() {
        let m = Machine::from_specs(
            "t",
            vec![node(0, &[0]), node(1, &[1])],
            Some(vec![vec![10, 20], vec![30, 10]]),
        )
        .unwrap();
        assert!(matches!(
            m.require_symmetric(),
            Err(TopologyError::AsymmetricMatrix { ab: 20, ba: 30, .. })
        ));
    }

    #[test]
    fn restrict_keeps_matrix() {
        let m = Machine::from_specs(
            "t",
            vec![node(0, &[0, 1]), node(1, &[2, 3])],
            Some(vec![vec![10, 21], vec![21, 10]]),
        )
        .unwrap();
        let r = m.restrict_cpus(|c| c != 1).unwrap();
        assert_eq!(r.cpus().len(), 3);
        assert_eq!(r.distance(NodeId(0), NodeId(1)), 21);
        assert!(matches!(
            m.restrict_cpus(|_| false),
            Err(TopologyError::NoCpus)
        ));
    }

    #[test]
    fn node_with_cpus_is_the_fixture_node() {
        // Each CPU its own core, its cache group the node, no memory size; an empty list is
        // a node without CPUs.
        assert_eq!(NodeSpec::with_cpus(3, [4, 5]), node(3, &[4, 5]));
        assert_eq!(
            NodeSpec::with_cpus(2, []),
            NodeSpec {
                os_id: 2,
                cpus: Vec::new(),
                memory_bytes: None
            }
        );
    }

    #[test]
    fn restricted_nodes_are_not_memory_only() {
        let m = two_nodes_and_two_without_cpus().with_offline_cpus(|n| {
            if n == 3 {
                vec![5, 4, 4]
            } else {
                vec![0]
            }
        });
        let r = m.restrict_cpus(|c| c != 2 && c != 3).unwrap();
        let kinds: Vec<NodeKind> = r.nodes().iter().map(NodeInfo::kind).collect();
        assert_eq!(
            kinds,
            [
                NodeKind::Cpus,
                NodeKind::CpusNotAllowed,
                NodeKind::MemoryOnly,
                NodeKind::CpusOffline
            ]
        );
        assert_eq!(r.nodes()[1].withheld_cpus, [2, 3]);
        assert!(!r.nodes()[1].has_cpus());
        // CPU 0 is online: never recorded as offline.
        assert!(r.nodes()[0].offline_cpus.is_empty());
        assert_eq!(r.nodes()[3].offline_cpus, [4, 5]);
        // A second restriction keeps what the first withheld.
        let rr = r.restrict_cpus(|c| c != 1).unwrap();
        assert_eq!(rr.nodes()[0].withheld_cpus, [1]);
        assert_eq!(rr.nodes()[1].withheld_cpus, [2, 3]);
        assert_eq!(rr.nodes()[3].kind(), NodeKind::CpusOffline);
        assert_eq!(NodeKind::CpusNotAllowed.as_str(), "cpus-not-allowed");
    }
}
