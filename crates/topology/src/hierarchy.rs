//! The sched-domain hierarchy: memory access levels, spans, the load-balancing zone and
//! per-CPU victim orders.
//!
//! # How the levels are built (Linux's `sched_init_numa`)
//!
//! 1. Only nodes with CPUs count. Collect `d(i, j)` for every pair of them (diagonal
//!    included) and sort the distinct values: `levels = [10, 16, 22, …]`; `M = levels.len()`.
//! 2. Level I (`Level(0)`) is a CPU's own node, even when its diagonal is not the row's
//!    smallest value (a SLIT Linux would refuse). Level `k` spans every CPU node `j` with
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
//! [`Topology::zone_victims`].
//!
//! A CPU's order is built the first time it is asked for (O(cpus) time and memory, kept for
//! the topology's lifetime), never for every CPU up front: a table of every CPU's order is
//! quadratic in CPUs (134 MB at the 4,096-CPU limit), while a pool or a simulation reads the
//! rows of the CPUs it runs on. Later lookups are a slice of the kept row: no allocation on
//! the steal path.

use std::sync::OnceLock;

use crate::error::{Result, TopologyError};
use crate::ids::{CpuId, Level, NodeId};
use crate::machine::{CpuInfo, Machine, MAX_DISTANCE};

/// Sentinel in the node-level matrix: no level relates the pair (a memory-only node, or a
/// distance beyond every CPU-node distance).
const NO_LEVEL: u8 = u8::MAX;

/// How close a victim sits inside its node, for ordering victims of one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
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

impl Tier {
    /// The tier of `other` seen from `me`, two CPUs of one node: SMT sibling, shared
    /// last-level cache, or merely the same node.
    pub(crate) fn within_node(me: &CpuInfo, other: &CpuInfo) -> Tier {
        if other.core == me.core {
            Tier::Smt
        } else if other.cache_group == me.cache_group {
            Tier::Cache
        } else {
            Tier::Node
        }
    }
}

/// A CPU's victim order in compact form ([`Topology::victim_plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VictimPlan {
    /// The other CPUs of its node, in order.
    pub local: Vec<Victim>,
    /// The other nodes with CPUs, in order, with their level seen from the CPU's node.
    pub remote: Vec<(NodeId, Level)>,
    /// The CPU's position in its node's CPU list: each other node's CPUs start at this
    /// index, modulo their count.
    pub pos: usize,
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
/// # use zonal_topology::doc_facade as zonal;
/// use zonal::topology::{presets, Level};
/// let t = presets::preset("s1")?;
/// assert_eq!(t.mal_count(), 6);
/// assert_eq!(t.zone_depth(), 4);
/// let cpu0 = t.cpus_of(0.into())[0];
/// assert_eq!(t.level_between(cpu0, cpu0), Level::LOCAL);
/// # Ok::<(), zonal::topology::TopologyError>(())
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
    /// Per CPU, its victim order (`cpus − 1` entries), built on first use
    /// ([`Topology::victims`]).
    victims: Box<[OnceLock<Box<[Victim]>>]>,
}

/// The most node ids the per-level spans of a machine may list in all: Σ over the nodes
/// with CPUs `i` and the levels `l` of `|span(i, l)|` ([`Topology::span`]), which is
/// `Σ_i Σ_j (M − level(i, j))` over pairs of CPU nodes. Machines over it are refused with
/// [`TopologyError::TooManySpanEntries`] when they are validated
/// ([`Machine::from_specs`], every source and generator), from the matrix alone, before any
/// hierarchy is built.
///
/// Why a limit: the hierarchy keeps spans as prefixes of one nearest-first row per node
/// (`O(nodes² + nodes × levels)`), but whatever lists them level by level — the
/// `TopologyReport`'s `spans` (the JSON of the `topology` example, built
/// by every run of it), Linux's `sched_domains_numa_masks` (one mask per level and node) —
/// grows with nodes² × levels. [`MAX_NODES`](crate::MAX_NODES) nodes with 246 distinct
/// distances (all of 10..=255) would list 4.1 × 10⁹ ids: 16 GiB as `u32`. 2²⁶ ids are 256 MiB
/// as `u32` (about 330 MB of JSON); every machine Linux can describe (at most 1,024 nodes
/// with a handful of distances: ≤ 1.1 × 10⁷) and every generated shape in use fits — a
/// 4,096-node fan-out tree lists at most 3.4 × 10⁷ (`[2; 12]`), a 32 × 32 mesh with 63
/// levels 4.4 × 10⁷ — while a 64 × 64 mesh (127 levels, 1.4 × 10⁹) does not.
pub const MAX_SPAN_ENTRIES: u64 = 1 << 26;

/// The distinct distances over `cpu_nodes` (ascending: one per level), and for every
/// distance `0..=MAX_DISTANCE` the smallest level covering it, or `NO_LEVEL`.
///
/// O(cpu nodes²) time; its memory is two tables of `MAX_DISTANCE + 1` entries, whatever
/// the input (a presence table over distances replaces sorting the n² values).
fn distance_levels(machine: &Machine, cpu_nodes: &[NodeId]) -> (Vec<u32>, Vec<u8>) {
    // `Machine` keeps every distance in 10..=MAX_DISTANCE.
    let mut present = vec![false; MAX_DISTANCE as usize + 1];
    for &i in cpu_nodes {
        for &j in cpu_nodes {
            present[machine.distance(i, j) as usize] = true;
        }
    }
    let levels: Vec<u32> = (0..=MAX_DISTANCE)
        .filter(|&d| present[d as usize])
        .collect();
    let m = levels.len();
    // The smallest level whose distance covers d (exact for CPU nodes), or NO_LEVEL.
    let level_of: Vec<u8> = (0..=MAX_DISTANCE)
        .map(|d| {
            let l = levels.partition_point(|&x| x < d);
            if l < m {
                u8::try_from(l).unwrap_or(NO_LEVEL)
            } else {
                NO_LEVEL
            }
        })
        .collect();
    (levels, level_of)
}

/// How many node ids the per-level spans of a machine list ([`MAX_SPAN_ENTRIES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpanCount {
    /// Nodes with CPUs.
    pub(crate) nodes: usize,
    /// The distinct distances among them, ascending.
    pub(crate) levels: Vec<u32>,
    /// `Σ_i Σ_l |span(i, l)|`.
    pub(crate) entries: u64,
}

/// Counts the node ids of every span at every level from the distance matrix: O(cpu
/// nodes²) time, and nothing allocated that grows with the input beyond the list of CPU
/// nodes.
pub(crate) fn span_count(machine: &Machine) -> SpanCount {
    let cpu_nodes: Vec<NodeId> = (0..machine.nodes().len())
        .map(NodeId::new)
        .filter(|&i| machine.node(i).has_cpus())
        .collect();
    let (levels, level_of) = distance_levels(machine, &cpu_nodes);
    let m = levels.len() as u64;
    let mut entries = 0u64;
    for &i in &cpu_nodes {
        for &j in &cpu_nodes {
            // Node `j` lies in the spans of `i` from its level on: M − level of them. Level I
            // is the node itself, whatever its diagonal (as in `Topology::new`).
            let level = if i == j {
                0
            } else {
                u64::from(level_of[machine.distance(i, j) as usize])
            };
            entries += m - level;
        }
    }
    SpanCount {
        nodes: cpu_nodes.len(),
        levels,
        entries,
    }
}

/// Refuses a machine whose per-level spans would list more than [`MAX_SPAN_ENTRIES`] node
/// ids (see there), counted by [`span_count`].
///
/// # Errors
/// [`TopologyError::TooManySpanEntries`].
pub(crate) fn check_span_entries(machine: &Machine) -> Result<()> {
    let c = span_count(machine);
    if c.entries > MAX_SPAN_ENTRIES {
        return Err(TopologyError::TooManySpanEntries {
            nodes: c.nodes,
            levels: c.levels.len(),
            first: c.levels.first().copied().unwrap_or(0),
            last: c.levels.last().copied().unwrap_or(0),
            entries: c.entries,
            limit: MAX_SPAN_ENTRIES,
        });
    }
    Ok(())
}

/// The default zone depth for `M` memory access levels (docs/DESIGN.md): `M/2 + 1` when `M ≥ 4`,
/// otherwise every level.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// assert_eq!(zonal::topology::default_zone_depth(6), 4);
/// assert_eq!(zonal::topology::default_zone_depth(3), 3);
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
    ///
    /// Cost: O(nodes² + nodes × levels + cpus) time and memory (bounded by
    /// [`MAX_NODES`](crate::MAX_NODES) and [`MAX_CPUS`](crate::MAX_CPUS); nothing here grows
    /// with nodes² × levels, see [`MAX_SPAN_ENTRIES`]), without sorting at the node level (every
    /// distance lies in 10..=255, so levels and per-node orders are bucketed by distance).
    /// Victim orders are built per CPU when first asked for (see [`victims`](Self::victims)).
    #[must_use]
    pub fn new(machine: Machine) -> Self {
        // --- Implementation details ---
        // 1. `levels`: a presence table over distances replaces sorting the n² values.
        // 2. `node_level`: a distance → level table replaces a binary search per pair.
        // 3. `near`: per CPU node, a counting sort by level, stable in OS-id order, gives the
        //    (level, id) order and the span ends (the bucket ends) in O(n + M).
        let n = machine.nodes().len();
        let cpu_nodes: Vec<NodeId> = (0..n)
            .map(NodeId::new)
            .filter(|&i| machine.node(i).has_cpus())
            .collect();

        let (levels, level_of) = distance_levels(&machine, &cpu_nodes);
        let m = levels.len();

        let mut node_level = vec![NO_LEVEL; n * n];
        for &i in &cpu_nodes {
            let row = &mut node_level[i.index() * n..(i.index() + 1) * n];
            for (j, l) in row.iter_mut().enumerate() {
                *l = level_of[machine.distance(i, NodeId::new(j)) as usize];
            }
            // Level I is the node itself, whatever its diagonal: Linux refuses a SLIT whose
            // diagonal is not 10 (or whose other entries are ≤ 10), while `Machine` accepts
            // any value in range, so pin it here to keep `span`, `level_between`, `in_zone`
            // and the victim orders (which put the own node first) consistent.
            row[i.index()] = 0;
        }

        let mut near = vec![NodeId(0); cpu_nodes.len() * cpu_nodes.len()];
        let mut near_off = vec![0u32; n + 1];
        let mut span_end = vec![0u32; n * m];
        let mut filled = 0usize;
        let mut next = vec![0u32; m];
        for i in 0..n {
            if machine.node(NodeId::new(i)).has_cpus() {
                let row = &node_level[i * n..(i + 1) * n];
                let ends = &mut span_end[i * m..(i + 1) * m];
                // From a CPU node every CPU node has a level (its distance is one of them).
                for &j in &cpu_nodes {
                    ends[usize::from(row[j.index()])] += 1;
                }
                let mut total = 0;
                for (end, start) in ends.iter_mut().zip(next.iter_mut()) {
                    *start = total;
                    total += *end;
                    *end = total;
                }
                let out = &mut near[filled..filled + cpu_nodes.len()];
                for &j in &cpu_nodes {
                    let slot = &mut next[usize::from(row[j.index()])];
                    out[*slot as usize] = j;
                    *slot += 1;
                }
                filled += cpu_nodes.len();
            }
            near_off[i + 1] = filled as u32;
        }

        let cpu_node: Vec<NodeId> = machine.cpus().iter().map(|c| c.node).collect();
        let victims = (0..cpu_node.len()).map(|_| OnceLock::new()).collect();
        let mut t = Self {
            machine,
            levels,
            node_level,
            zone_depth: 0,
            cpu_node,
            near,
            near_off,
            span_end,
            victims,
        };
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
    }

    /// Builds one CPU's victim order (`cpus − 1` entries).
    ///
    /// Its own node's CPUs come first, by tier and rotated from the thief's position; then
    /// the other nodes in [`other_nodes_in_order`](Self::other_nodes_in_order): by level,
    /// and inside a level rotated to start after the thief's node, so that thieves of
    /// different nodes fan out; inside a node, from the thief's position. `near(home)` is
    /// already grouped by level in OS-id order, so the rotation is a split of each group at
    /// `home`: no sort beyond the thief's own node.
    fn build_row(&self, c: CpuId) -> Box<[Victim]> {
        let plan = self.victim_plan(c);
        let mut row = Vec::with_capacity(self.cpu_count().saturating_sub(1));
        row.extend_from_slice(&plan.local);
        for &(b, level) in &plan.remote {
            let cpus = self.cpus_of(b);
            let first = plan.pos % cpus.len().max(1);
            row.extend(
                cpus[first..]
                    .iter()
                    .chain(&cpus[..first])
                    .map(|&cpu| Victim {
                        cpu,
                        level,
                        tier: Tier::Remote,
                    }),
            );
        }
        debug_assert_eq!(row.len(), self.cpu_count() - 1, "every other CPU once");
        row.into_boxed_slice()
    }

    /// The victim order of `cpu` ([`victims`](Self::victims)) in compact form, O(CPUs of its
    /// node + nodes) rather than O(CPUs): its own node's other CPUs in order (by tier, then
    /// rotated from its position), and the other nodes in order with their level. Inside
    /// each other node `b` the order is `cpus_of(b)` rotated to start at index
    /// `pos % cpus_of(b).len()`. A walker over thousands of CPUs builds from this, sharing
    /// the per-node lists, instead of keeping a row of every CPU per thief.
    #[must_use]
    pub fn victim_plan(&self, cpu: CpuId) -> VictimPlan {
        let me = self.machine.cpu(cpu);
        let home = me.node;
        let mut remote: Vec<(NodeId, Level)> = Vec::new();
        self.other_nodes_in_order(home, &mut remote);
        let node_cpus = &self.machine.node(home).cpus;
        let pos = node_cpus.binary_search(&cpu).unwrap_or(0);
        // Same node: by tier, then rotated from our position.
        let mut local: Vec<(Tier, usize, CpuId)> = node_cpus
            .iter()
            .enumerate()
            .filter(|&(_, &x)| x != cpu)
            .map(|(k, &x)| {
                let tier = Tier::within_node(me, self.machine.cpu(x));
                (tier, (k + node_cpus.len() - pos) % node_cpus.len(), x)
            })
            .collect();
        local.sort_unstable();
        VictimPlan {
            local: local
                .iter()
                .map(|&(tier, _, cpu)| Victim {
                    cpu,
                    level: Level::LOCAL,
                    tier,
                })
                .collect(),
            remote,
            pos,
        }
    }

    /// The CPU nodes other than `home`, by level and, inside a level, rotated to start after
    /// `home`; written into `out`.
    fn other_nodes_in_order(&self, home: NodeId, out: &mut Vec<(NodeId, Level)>) {
        out.clear();
        let m = self.mal_count();
        let near = self.near_of(home);
        let mut start = 0usize;
        for l in 0..m {
            let end = self.span_end[home.index() * m + l] as usize;
            let group = &near[start..end];
            let split = group.partition_point(|&b| b <= home);
            let level = Level(u8::try_from(l).unwrap_or(u8::MAX));
            out.extend(
                group[split..]
                    .iter()
                    .chain(&group[..split])
                    .filter(|&&b| b != home)
                    .map(|&b| (b, level)),
            );
            start = end;
        }
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

    /// The level of node `b` seen from node `a` (level I for `a` itself); `None` when `a`
    /// has no CPUs, or when `d(a, b)` exceeds every level's distance (a memory-only `b`
    /// farther than every CPU node).
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

    /// Whether `level` lies beyond the load-balancing zone (`level ≥ S`): the one zone test
    /// of the conservative filter, the runtime's counters and the simulator's.
    #[inline]
    #[must_use]
    pub fn beyond_zone(&self, level: Level) -> bool {
        level.index() >= self.zone_depth()
    }

    /// Whether `origin` is a node of this machine lying inside the zone of node `to` (an
    /// origin index out of range is in no zone; never panics on it).
    #[inline]
    #[must_use]
    pub fn origin_in_zone(&self, to: NodeId, origin: NodeId) -> bool {
        origin.index() < self.node_count() && self.node_in_zone(to, origin)
    }

    /// Whether a move from node `from` to node `to`, across `level` (the level of `from`
    /// seen from `to`), takes a task rooted on `origin` beyond its origin's zone, as every
    /// driver counts it: a task at home (`origin == from`) when `level` is
    /// [beyond the zone](Self::beyond_zone); a task away when `origin` is not
    /// [in the zone](Self::origin_in_zone) of `to` (an origin out of range counts as beyond).
    #[inline]
    #[must_use]
    pub fn leaves_zone(&self, origin: NodeId, from: NodeId, to: NodeId, level: Level) -> bool {
        if origin == from {
            self.beyond_zone(level)
        } else {
            !self.origin_in_zone(to, origin)
        }
    }

    /// Whether `to` is farther from `origin` than `from` is: `d(origin, to) > d(origin, from)`
    /// (the conservative origin rule's test). `false` for an origin index out of range (no
    /// distance to compare; never panics on it).
    #[inline]
    #[must_use]
    pub fn farther_from(&self, origin: NodeId, from: NodeId, to: NodeId) -> bool {
        origin.index() < self.node_count()
            && self.distance(origin, to) > self.distance(origin, from)
    }

    /// The NUMA factor `d(a, b) / d(a, a)` (Pilla et al.'s relative latency).
    #[inline]
    #[must_use]
    pub fn numa_factor(&self, a: NodeId, b: NodeId) -> f64 {
        f64::from(self.distance(a, b)) / f64::from(self.distance(a, a))
    }

    /// The CPU nodes within level `level` of `node`, nearest first (by level, then OS id).
    /// Empty for memory-only nodes. Levels past the last one return the last span.
    #[inline]
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
    ///
    /// The first call for a CPU builds its order (O(cpus)); later calls return the kept row.
    #[inline]
    #[must_use]
    pub fn victims(&self, cpu: CpuId) -> &[Victim] {
        self.victims[cpu.index()].get_or_init(|| self.build_row(cpu))
    }

    /// The in-zone prefix of [`victims`](Self::victims).
    #[inline]
    #[must_use]
    pub fn zone_victims(&self, cpu: CpuId) -> &[Victim] {
        let row = self.victims(cpu);
        let depth = self.zone_depth();
        &row[..row.partition_point(|v| v.level.index() < depth)]
    }
}

#[cfg(test)]
mod test;
