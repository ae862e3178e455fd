//! The sched-domain hierarchy: memory access levels, spans, the load-balancing zone and
//! per-CPU victim orders.
//!
//! # How the levels are built (Linux's `sched_init_numa`)
//!
//! 1. Only nodes with CPUs count. Collect `d(i, j)` for every pair of them (diagonal
//!    included) and sort the distinct values: `levels = [10, 16, 22, …]`; `M = levels.len()`.
//! 2. Level I (`Level(0)`) is a CPU's own node. Level `k` spans every CPU node `j` with
//!    `d(i, j) ≤ levels[k]`, reading row `i` (an asymmetric matrix is accepted, as Linux
//!    only warns).
//! 3. Spans of different nodes at one level may *overlap* without nesting (a ring, the
//!    Kunpeng 920's `[10, 16, 25, 32, 33]`): no tree is built; every query is per node.
//!
//! # The load-balancing zone
//!
//! With `M ≥ 4` the zone is levels I..S with `S = M/2 + 1`; with `M ≤ 3` it is every level.
//! [`Topology::zone_depth`] is `S` (the number of levels in the zone).
//!
//! # Victim orders
//!
//! For each CPU, every other CPU sorted nearest first: by level, then by sub-node tier (SMT
//! sibling, shared last-level cache, same node, remote), then rotated so that thieves of one
//! node start on different victims. In-zone victims therefore form a prefix, whose length is
//! [`Topology::zone_victims`]. Lookups are O(1) slices into one flat array: no allocation
//! on the steal path.

use crate::ids::{CpuId, Level, NodeId};
use crate::machine::Machine;

/// Sentinel in the node-level matrix: no level relates the pair (a memory-only node, or a
/// distance beyond every CPU-node distance).
const NO_LEVEL: u8 = u8::MAX;

/// How close a victim sits inside its node, for ordering victims of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// An SMT sibling (same core).
    Smt = 0,
    /// Shares the last-level cache.
    Cache = 1,
    /// Same node, different cache.
    Node = 2,
    /// Another node.
    Remote = 3,
}

/// One entry of a CPU's victim order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    /// The CPU to steal from.
    pub cpu: CpuId,
    /// Its memory access level relative to the thief.
    pub level: Level,
    /// Its closeness inside the level.
    pub tier: Tier,
}

/// The machine model plus its NUMA hierarchy, zone and victim orders.
///
/// ```
/// use zonal_topology::{presets, Level};
/// let t = presets::preset("s1")?;
/// assert_eq!(t.mal_count(), 6);
/// assert_eq!(t.zone_depth(), 4);
/// let cpu0 = t.cpus_of(0.into())[0];
/// assert_eq!(t.level_between(cpu0, cpu0), Level::LOCAL);
/// # Ok::<(), zonal_topology::TopologyError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Topology {
    machine: Machine,
    levels: Vec<u32>,
    /// `n × n`, row-major: level of column node from row node, or `NO_LEVEL`.
    node_level: Vec<u8>,
    zone_depth: u8,
    cpu_node: Vec<NodeId>,
    /// Per node, its CPU nodes sorted by (level, OS id); `near_off[i]..near_off[i+1]`.
    near: Vec<NodeId>,
    near_off: Vec<u32>,
    /// `span_end[node * M + l]`: how many of `near(node)` lie within level `l`.
    span_end: Vec<u32>,
    /// `ncpu × (ncpu - 1)` victims, row per CPU.
    victims: Vec<Victim>,
    zone_len: Vec<u32>,
}

/// The default zone depth for `M` memory access levels (DESIGN.md): `M/2 + 1` when `M ≥ 4`,
/// otherwise every level.
///
/// ```
/// assert_eq!(zonal_topology::default_zone_depth(6), 4);
/// assert_eq!(zonal_topology::default_zone_depth(3), 3);
/// ```
#[must_use]
pub fn default_zone_depth(mal_count: usize) -> usize {
    if mal_count >= 4 {
        mal_count / 2 + 1
    } else {
        mal_count
    }
}

impl Topology {
    /// Builds the hierarchy of a machine with the default zone.
    #[must_use]
    pub fn new(machine: Machine) -> Self {
        let n = machine.nodes().len();
        let cpu_nodes: Vec<NodeId> = (0..n)
            .map(NodeId::new)
            .filter(|&i| machine.node(i).has_cpus())
            .collect();

        let mut levels: Vec<u32> = Vec::new();
        for &i in &cpu_nodes {
            for &j in &cpu_nodes {
                levels.push(machine.distance(i, j));
            }
        }
        levels.sort_unstable();
        levels.dedup();
        let m = levels.len();

        let mut node_level = vec![NO_LEVEL; n * n];
        for &i in &cpu_nodes {
            for j in 0..n {
                let d = machine.distance(i, NodeId::new(j));
                // The smallest level whose distance covers d (exact for CPU nodes).
                let l = levels.partition_point(|&x| x < d);
                if l < m {
                    node_level[i.index() * n + j] = u8::try_from(l).unwrap_or(NO_LEVEL);
                }
            }
        }

        let mut near = Vec::new();
        let mut near_off = vec![0u32; n + 1];
        let mut span_end = vec![0u32; n * m];
        for i in 0..n {
            let start = near.len();
            if machine.node(NodeId::new(i)).has_cpus() {
                let mut row: Vec<NodeId> = cpu_nodes.clone();
                row.sort_by_key(|&j| (node_level[i * n + j.index()], j));
                for (l, end) in span_end[i * m..(i + 1) * m].iter_mut().enumerate() {
                    *end = row.partition_point(|&j| usize::from(node_level[i * n + j.index()]) <= l)
                        as u32;
                }
                near.extend(row);
            }
            let _ = start;
            near_off[i + 1] = near.len() as u32;
        }

        let cpu_node: Vec<NodeId> = machine.cpus().iter().map(|c| c.node).collect();
        let mut t = Self {
            machine,
            levels,
            node_level,
            zone_depth: 0,
            cpu_node,
            near,
            near_off,
            span_end,
            victims: Vec::new(),
            zone_len: Vec::new(),
        };
        t.build_victims();
        t.set_zone_depth(default_zone_depth(m));
        t
    }

    /// Overrides the zone depth `S` (clamped to `1..=M`); the paper's rule is the default.
    #[must_use]
    pub fn with_zone_depth(mut self, depth: usize) -> Self {
        self.set_zone_depth(depth);
        self
    }

    fn set_zone_depth(&mut self, depth: usize) {
        let depth = depth.clamp(1, self.levels.len().max(1));
        self.zone_depth = u8::try_from(depth).unwrap_or(u8::MAX);
        let per = self.cpu_count().saturating_sub(1);
        self.zone_len = (0..self.cpu_count())
            .map(|c| {
                let row = &self.victims[c * per..(c + 1) * per];
                row.partition_point(|v| v.level.index() < depth) as u32
            })
            .collect();
    }

    fn build_victims(&mut self) {
        let ncpu = self.machine.cpus().len();
        let per = ncpu.saturating_sub(1);
        let mut victims = Vec::with_capacity(ncpu * per);
        for c in 0..ncpu {
            let me = self.machine.cpu(CpuId::new(c));
            let home = me.node;
            let node_cpus = &self.machine.node(home).cpus;
            let pos = node_cpus.iter().position(|&x| x.index() == c).unwrap_or(0);
            // Same node: by tier, then rotated from our position.
            let mut local: Vec<(Tier, usize, CpuId)> = node_cpus
                .iter()
                .enumerate()
                .filter(|(_, &x)| x.index() != c)
                .map(|(k, &x)| {
                    let other = self.machine.cpu(x);
                    let tier = if other.core == me.core {
                        Tier::Smt
                    } else if other.cache_group == me.cache_group {
                        Tier::Cache
                    } else {
                        Tier::Node
                    };
                    (tier, (k + node_cpus.len() - pos) % node_cpus.len(), x)
                })
                .collect();
            local.sort_unstable();
            victims.extend(local.into_iter().map(|(tier, _, cpu)| Victim {
                cpu,
                level: Level::LOCAL,
                tier,
            }));
            // Other nodes: nearest first; among nodes of one level, rotated from our node so
            // that thieves of different nodes fan out; inside a node, start at our position.
            let near = self.near_of(home);
            let n = self.machine.nodes().len();
            let mut others: Vec<NodeId> = near.iter().copied().filter(|&b| b != home).collect();
            others.sort_by_key(|&b| {
                (
                    self.node_level_raw(home, b),
                    (b.index() + n - home.index()) % n,
                )
            });
            for b in others {
                let level = Level(self.node_level_raw(home, b));
                let cpus = &self.machine.node(b).cpus;
                let k = cpus.len();
                for off in 0..k {
                    victims.push(Victim {
                        cpu: cpus[(pos + off) % k],
                        level,
                        tier: Tier::Remote,
                    });
                }
            }
        }
        self.victims = victims;
    }

    #[inline]
    fn node_level_raw(&self, a: NodeId, b: NodeId) -> u8 {
        self.node_level[a.index() * self.machine.nodes().len() + b.index()]
    }

    fn near_of(&self, node: NodeId) -> &[NodeId] {
        &self.near[self.near_off[node.index()] as usize..self.near_off[node.index() + 1] as usize]
    }

    /// The machine model underneath.
    #[must_use]
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    /// Number of CPUs.
    #[inline]
    #[must_use]
    pub fn cpu_count(&self) -> usize {
        self.cpu_node.len()
    }

    /// Number of nodes (memory-only ones included).
    #[inline]
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.machine.nodes().len()
    }

    /// The nodes that have CPUs, ascending.
    pub fn cpu_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.node_count())
            .map(NodeId::new)
            .filter(|&n| self.machine.node(n).has_cpus())
    }

    /// The node of a CPU.
    #[inline]
    #[must_use]
    pub fn node_of(&self, cpu: CpuId) -> NodeId {
        self.cpu_node[cpu.index()]
    }

    /// The CPUs of a node.
    #[inline]
    #[must_use]
    pub fn cpus_of(&self, node: NodeId) -> &[CpuId] {
        &self.machine.node(node).cpus
    }

    /// The distinct distances over nodes with CPUs, ascending (one per memory access level).
    #[must_use]
    pub fn levels(&self) -> &[u32] {
        &self.levels
    }

    /// `M`, the number of memory access levels.
    #[inline]
    #[must_use]
    pub fn mal_count(&self) -> usize {
        self.levels.len()
    }

    /// `S`, the number of levels in the load-balancing zone (levels I..S).
    #[inline]
    #[must_use]
    pub fn zone_depth(&self) -> usize {
        usize::from(self.zone_depth)
    }

    /// The deepest level inside the zone.
    #[inline]
    #[must_use]
    pub fn zone_level(&self) -> Level {
        Level(self.zone_depth - 1)
    }

    /// `d(a, b)`.
    #[inline]
    #[must_use]
    pub fn distance(&self, a: NodeId, b: NodeId) -> u32 {
        self.machine.distance(a, b)
    }

    /// The level of node `b` seen from node `a`; `None` when either has no CPUs... more
    /// precisely: when `a` has no CPUs, or `d(a, b)` exceeds every level's distance.
    #[inline]
    #[must_use]
    pub fn node_level(&self, a: NodeId, b: NodeId) -> Option<Level> {
        match self.node_level_raw(a, b) {
            NO_LEVEL => None,
            l => Some(Level(l)),
        }
    }

    /// The level of CPU `b` seen from CPU `a` (level I when they share a node).
    #[inline]
    #[must_use]
    pub fn level_between(&self, a: CpuId, b: CpuId) -> Level {
        // Both nodes have CPUs, so the level exists.
        Level(self.node_level_raw(self.node_of(a), self.node_of(b)))
    }

    /// Whether `node` lies inside the load-balancing zone of `cpu`.
    #[inline]
    #[must_use]
    pub fn in_zone(&self, cpu: CpuId, node: NodeId) -> bool {
        self.node_level_raw(self.node_of(cpu), node) < self.zone_depth
    }

    /// Whether `b` lies inside the zone of node `a`.
    #[inline]
    #[must_use]
    pub fn node_in_zone(&self, a: NodeId, b: NodeId) -> bool {
        self.node_level_raw(a, b) < self.zone_depth
    }

    /// The NUMA factor `d(a, b) / d(a, a)` (Pilla et al.'s relative latency).
    #[inline]
    #[must_use]
    pub fn numa_factor(&self, a: NodeId, b: NodeId) -> f64 {
        f64::from(self.distance(a, b)) / f64::from(self.distance(a, a))
    }

    /// The CPU nodes within level `level` of `node`, nearest first (by level, then OS id).
    /// Empty for memory-only nodes. Levels past the last one return the last span.
    #[must_use]
    pub fn span(&self, node: NodeId, level: Level) -> &[NodeId] {
        let m = self.mal_count();
        let near = self.near_of(node);
        if near.is_empty() || m == 0 {
            return near;
        }
        let l = level.index().min(m - 1);
        &near[..self.span_end[node.index() * m + l] as usize]
    }

    /// Every other CPU, nearest first, with its level and tier.
    #[inline]
    #[must_use]
    pub fn victims(&self, cpu: CpuId) -> &[Victim] {
        let per = self.cpu_count() - 1;
        &self.victims[cpu.index() * per..(cpu.index() + 1) * per]
    }

    /// The in-zone prefix of [`victims`](Self::victims).
    #[inline]
    #[must_use]
    pub fn zone_victims(&self, cpu: CpuId) -> &[Victim] {
        &self.victims(cpu)[..self.zone_len[cpu.index()] as usize]
    }
}

#[cfg(test)]
mod test;
