//! The machine model as data: the JSON of the `topology` example's `--json` (docs/DESIGN.md).
//!
//! `node_ids` are OS ids ascending; `levels` the distinct distances over CPU nodes;
//! `spans[level]` one row per node in `node_ids` order listing the OS ids within that
//! distance (ascending; an empty row for a node without CPUs); `mal_count` is `M` and
//! `zone_depth` is `S`. The remaining fields describe the machine further and may grow.

use std::collections::BTreeMap;

use serde::Serialize;

mod json;

use crate::hierarchy::Topology;
use crate::ids::{Level, NodeId};
use crate::machine::{DistanceKind, NodeKind, LOCAL_DISTANCE};

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
    /// Nodes without any CPU: memory-only nodes, and nodes whose CPUs are all offline
    /// (which the kernel treats as memory-only). Not the nodes whose CPUs this process may
    /// not use: those are in `cpus_not_allowed_nodes`.
    pub cpuless_nodes: Vec<u32>,
    /// Per node (in `node_ids` order): why it has CPUs in the model or not.
    pub node_kinds: Vec<NodeKind>,
    /// Nodes with CPUs, none of which this process may use (taskset, a cgroup cpuset): no
    /// CPU in the model, no part in the hierarchy, but not memory-only.
    pub cpus_not_allowed_nodes: Vec<u32>,
    /// Per node: OS indexes of its CPUs withheld from this process (empty for most).
    pub withheld_cpus: Vec<Vec<u32>>,
    /// Per node: OS indexes of its CPUs that are present but offline.
    pub offline_cpus: Vec<Vec<u32>>,
    /// The distance matrix, rows in `node_ids` order.
    pub distances: Vec<Vec<u32>>,
    /// Where the matrix came from.
    pub distance_kind: DistanceKind,
    /// Number of CPUs.
    pub cpu_count: usize,
    /// Things Linux would warn about (an asymmetric matrix, an assumed fallback).
    pub warnings: Vec<String>,
}

impl TopologyReport {
    /// Summarises a topology.
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// let t = zonal::topology::presets::preset("s1")?;
    /// let r = zonal::topology::TopologyReport::new(&t);
    /// assert_eq!(r.spans["16"][0], vec![0, 1]);
    /// # Ok::<(), zonal::topology::TopologyError>(())
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
        if let Some(w) = slit_violation(t) {
            warnings.push(w);
        }
        if m.distance_kind() == DistanceKind::AssumedFallback {
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
                .filter(|n| matches!(n.kind(), NodeKind::MemoryOnly | NodeKind::CpusOffline))
                .map(|n| n.os_id)
                .collect(),
            node_kinds: m.nodes().iter().map(|n| n.kind()).collect(),
            cpus_not_allowed_nodes: m
                .nodes()
                .iter()
                .filter(|n| n.kind() == NodeKind::CpusNotAllowed)
                .map(|n| n.os_id)
                .collect(),
            withheld_cpus: m.nodes().iter().map(|n| n.withheld_cpus.clone()).collect(),
            offline_cpus: m.nodes().iter().map(|n| n.offline_cpus.clone()).collect(),
            distances: m.distance_rows(),
            distance_kind: m.distance_kind(),
            cpu_count: t.cpu_count(),
            warnings,
        }
    }
}

impl TopologyReport {
    /// The report as indented JSON, with every list of numbers on one line (as in
    /// `crates/topology/tests/data/expected.json`), which keeps spans readable. Ends with a newline.
    ///
    /// ```
    /// # use zonal_topology::doc_facade as zonal;
    /// let t = zonal::topology::presets::preset("s1")?;
    /// let json = zonal::topology::TopologyReport::new(&t).to_json_pretty();
    /// assert!(json.contains("\"levels\": [10, 16, 22, 28, 34, 40]"));
    /// let back: serde_json::Value = serde_json::from_str(&json).unwrap();
    /// assert_eq!(back["zone_depth"], 4);
    /// # Ok::<(), zonal::topology::TopologyError>(())
    /// ```
    #[must_use]
    pub fn to_json_pretty(&self) -> String {
        let mut out = Vec::new();
        // Writing plain data (strings, numbers, maps with string keys) into memory cannot
        // fail, and the formatter only writes UTF-8.
        let _ = self.write_json(&mut out);
        String::from_utf8(out).unwrap_or_default()
    }

    /// Streams [`to_json_pretty`](Self::to_json_pretty)'s text into `w` (ends with a
    /// newline); large machines are written without building the text in memory.
    ///
    /// # Errors
    /// The writer's I/O error.
    pub fn write_json(&self, mut w: impl std::io::Write) -> std::io::Result<()> {
        let mut ser = serde_json::Serializer::with_formatter(&mut w, json::LineArrays::default());
        self.serialize(&mut ser)?;
        w.write_all(b"\n")
    }
}

/// The first entry a Linux ACPI SLIT check would refuse (`d(i, i) != 10`, or `d(i, j) <= 10`
/// for `i != j`): such a matrix is accepted here, but Linux would ignore it entirely.
fn slit_violation(t: &Topology) -> Option<String> {
    let m = t.machine();
    let n = t.node_count();
    for i in (0..n).map(NodeId::new) {
        for j in (0..n).map(NodeId::new) {
            let d = m.distance(i, j);
            let (a, b) = (m.node(i).os_id, m.node(j).os_id);
            if i == j && d != LOCAL_DISTANCE {
                return Some(format!(
                    "d({a},{a}) = {d}: Linux expects {LOCAL_DISTANCE} on the diagonal and would \
                     ignore this matrix; node {a} is still taken as its own level I"
                ));
            }
            if i != j && d <= LOCAL_DISTANCE {
                return Some(format!(
                    "d({a},{b}) = {d}: Linux expects remote distances above {LOCAL_DISTANCE} \
                     and would ignore this matrix"
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn compact_json_is_the_same_document() {
        let asymmetric = crate::Machine::from_specs(
            "odd [name], {with} brackets\n",
            (0..3)
                .map(|i| crate::NodeSpec {
                    os_id: i,
                    cpus: if i == 2 {
                        Vec::new()
                    } else {
                        vec![crate::CpuSpec::alone(i, i)]
                    },
                    memory_bytes: None,
                })
                .collect(),
            Some(vec![vec![10, 20, 30], vec![21, 10, 30], vec![30, 30, 10]]),
        )
        .unwrap();
        for t in [
            crate::presets::preset("s3").unwrap(),
            crate::presets::mesh(3, 2, true, 2).unwrap(),
            Topology::new(asymmetric),
        ] {
            let r = TopologyReport::new(&t);
            let compact = r.to_json_pretty();
            let a: serde_json::Value = serde_json::from_str(&compact).unwrap();
            assert_eq!(a, serde_json::to_value(&r).unwrap(), "{compact}");
            assert!(compact.contains("\"node_ids\": ["), "{compact}");
            assert!(
                compact.lines().count() < serde_json::to_string_pretty(&r).unwrap().lines().count()
            );
        }
        let r = TopologyReport::new(&crate::presets::preset("s1").unwrap());
        assert!(r
            .to_json_pretty()
            .contains("\"16\": [\n      [0, 1],\n      [0, 1],"));
    }

    #[test]
    fn withheld_nodes_are_reported_apart_from_cpuless_ones() {
        let m = crate::machine::fixtures::two_nodes_and_two_without_cpus()
            .with_offline_cpus(|n| if n == 3 { vec![4, 5] } else { Vec::new() })
            .restrict_cpus(|c| c < 2)
            .unwrap();
        let r = TopologyReport::new(&Topology::new(m));
        assert_eq!(r.cpuless_nodes, [2, 3]);
        assert_eq!(r.cpus_not_allowed_nodes, [1]);
        assert_eq!(
            r.node_kinds,
            [
                NodeKind::Cpus,
                NodeKind::CpusNotAllowed,
                NodeKind::MemoryOnly,
                NodeKind::CpusOffline
            ]
        );
        assert_eq!(r.withheld_cpus[1], [2, 3]);
        assert_eq!(r.offline_cpus[3], [4, 5]);
        let json = r.to_json_pretty();
        assert!(json.contains("\"cpus-not-allowed\""), "{json}");
        assert!(r.spans.values().all(|rows| rows[1].is_empty()));
    }

    #[test]
    fn linux_would_warn() {
        let one = |i: u32| crate::NodeSpec {
            os_id: i,
            cpus: vec![crate::CpuSpec::alone(i, i)],
            memory_bytes: None,
        };
        let m = crate::Machine::from_specs(
            "t",
            vec![one(0), one(1)],
            Some(vec![vec![12, 20], vec![30, 10]]),
        )
        .unwrap();
        let r = TopologyReport::new(&Topology::new(m));
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
        assert!(r.warnings[0].contains("asymmetric"));
        assert!(r.warnings[1].contains("d(0,0) = 12"));
        let m = crate::Machine::from_specs("t", vec![one(0), one(1)], None).unwrap();
        let r = TopologyReport::new(&Topology::new(m));
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("fallback"));
    }
}
