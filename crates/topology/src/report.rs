//! The machine model as data: the JSON of `examples/topology --json` (DESIGN.md).
//!
//! `node_ids` are OS ids ascending; `levels` the distinct distances over CPU nodes;
//! `spans[level]` one row per node in `node_ids` order listing the OS ids within that
//! distance (ascending; an empty row for a node without CPUs); `mal_count` is `M` and
//! `zone_depth` is `S`. The remaining fields describe the machine further and may grow.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::hierarchy::Topology;
use crate::ids::{Level, NodeId};
use crate::machine::DistanceOrigin;

/// The serialisable summary of a [`Topology`].
#[derive(Clone, Debug, Serialize)]
pub struct TopologyReport {
    /// The machine's name.
    pub name: String,
    /// OS node ids, ascending.
    pub node_ids: Vec<u32>,
    /// Distinct distances over nodes with CPUs, ascending.
    pub levels: Vec<u32>,
    /// Per level (key: the distance as a string), per node: the OS ids within it.
    pub spans: BTreeMap<String, Vec<Vec<u32>>>,
    /// `M`.
    pub mal_count: usize,
    /// `S`.
    pub zone_depth: usize,
    /// Per node (in `node_ids` order): the OS ids inside its load-balancing zone.
    pub zones: Vec<Vec<u32>>,
    /// Per node: its CPUs' OS indexes.
    pub node_cpus: Vec<Vec<u32>>,
    /// Nodes without CPUs.
    pub cpuless_nodes: Vec<u32>,
    /// The distance matrix, rows in `node_ids` order.
    pub distances: Vec<Vec<u32>>,
    /// Where the matrix came from.
    pub distance_origin: DistanceOrigin,
    /// Number of CPUs.
    pub cpu_count: usize,
    /// Things Linux would warn about (an asymmetric matrix, an assumed fallback).
    pub warnings: Vec<String>,
}

impl TopologyReport {
    /// Summarises a topology.
    ///
    /// ```
    /// let t = zonal_topology::presets::preset("s1")?;
    /// let r = zonal_topology::TopologyReport::new(&t);
    /// assert_eq!(r.spans["16"][0], vec![0, 1]);
    /// # Ok::<(), zonal_topology::TopologyError>(())
    /// ```
    #[must_use]
    pub fn new(t: &Topology) -> Self {
        let m = t.machine();
        let nodes: Vec<NodeId> = (0..t.node_count()).map(NodeId::new).collect();
        let os = |n: &NodeId| m.node(*n).os_id;
        let sorted_os = |list: &[NodeId]| {
            let mut v: Vec<u32> = list.iter().map(os).collect();
            v.sort_unstable();
            v
        };
        let mut spans = BTreeMap::new();
        for (l, d) in t.levels().iter().enumerate() {
            let level = Level(u8::try_from(l).unwrap_or(u8::MAX));
            spans.insert(
                d.to_string(),
                nodes.iter().map(|&n| sorted_os(t.span(n, level))).collect(),
            );
        }
        let zones = nodes
            .iter()
            .map(|&n| sorted_os(t.span(n, t.zone_level())))
            .collect();
        let mut warnings = Vec::new();
        if let Some(e) = m.asymmetry() {
            warnings.push(format!(
                "{e} (accepted, as Linux does; spans read row d(node, other))"
            ));
        }
        if m.distance_origin() == DistanceOrigin::AssumedFallback {
            warnings.push(
                "no distance matrix: assumed Linux's fallback, 10 local and 20 remote".into(),
            );
        }
        Self {
            name: m.name().to_owned(),
            node_ids: nodes.iter().map(os).collect(),
            levels: t.levels().to_vec(),
            spans,
            mal_count: t.mal_count(),
            zone_depth: t.zone_depth(),
            zones,
            node_cpus: m
                .nodes()
                .iter()
                .map(|n| n.cpus.iter().map(|&c| m.cpu(c).os_index).collect())
                .collect(),
            cpuless_nodes: m
                .nodes()
                .iter()
                .filter(|n| !n.has_cpus())
                .map(|n| n.os_id)
                .collect(),
            distances: m.distance_rows(),
            distance_origin: m.distance_origin(),
            cpu_count: t.cpu_count(),
            warnings,
        }
    }
}
