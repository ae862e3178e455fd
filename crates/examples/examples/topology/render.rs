//! The human view of `examples/topology`: an lstopo-like tree, the levels table and the
//! load-balancing zones.
//!
//! ```text
//! Machine "s1" (32 CPUs, 16 NUMA nodes; distances: synthetic)
//!   NUMANode P#0  CPUs 0-1
//!   …
//!
//! Memory access levels: M = 6; load-balancing zone S = 4 (levels I-IV)
//!   level  distance  zone  span size (nodes)
//!   I            10  yes   1 (every node)
//!   …
//!
//! Zones (levels I-IV): nodes inside each node's zone
//!   P#0   0-5,12-15  (10 nodes, 20 CPUs)
//! ```
//!
//! Warnings (an asymmetric matrix, assumed distances) are not part of the view: they are in
//! [`TopologyReport::warnings`](zonal_topology::TopologyReport::warnings), for stderr.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use zonal_topology::{format_cpulist, DistanceKind, Level, NodeId, NodeKind, Topology};

/// Above this many CPU nodes, a level's span sizes are summarised as `size ×count`.
const PER_NODE_SIZES_UP_TO: usize = 16;

/// Renders the human view of a topology (ends with a newline).
///
/// ```
/// let t = zonal_topology::presets::preset("s1")?;
/// let text = zonal_topology::render_human(&t);
/// assert!(text.contains("NUMANode P#0  CPUs 0-1"));
/// assert!(text.contains("zone S = 4 (levels I-IV)"));
/// # Ok::<(), zonal_topology::TopologyError>(())
/// ```
#[must_use]
pub(crate) fn render_human(t: &Topology) -> String {
    let mut out = String::new();
    tree(t, &mut out);
    out.push('\n');
    levels(t, &mut out);
    out.push('\n');
    zones(t, &mut out);
    out
}

fn level_range(last: Level) -> String {
    if last == Level::LOCAL {
        "level I".to_owned()
    } else {
        format!("levels I-{last}")
    }
}

/// `1.5 GiB`, `512 MiB`, `4 KiB`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value.fract() == 0.0 || value >= 100.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// `1 node`, `2 nodes`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn distance_kind(o: DistanceKind) -> &'static str {
    match o {
        DistanceKind::Measured => "measured",
        DistanceKind::Synthetic => "synthetic",
        DistanceKind::AssumedFallback => "assumed 10/20 (no matrix)",
        DistanceKind::SingleNode => "single node",
        _ => "other",
    }
}

fn tree(t: &Topology, out: &mut String) {
    let m = t.machine();
    let memory: Option<u64> = m
        .nodes()
        .iter()
        .map(|n| n.memory_bytes)
        .try_fold(0u64, |sum, b| sum.checked_add(b?))
        .filter(|&b| b > 0);
    let _ = write!(
        out,
        "Machine {:?} ({}, {}",
        m.name(),
        count(t.cpu_count(), "CPU"),
        count(t.node_count(), "NUMA node")
    );
    if let Some(total) = memory {
        let _ = write!(out, ", {} total", bytes(total));
    }
    let _ = writeln!(out, "; distances: {})", distance_kind(m.distance_kind()));
    for node in m.nodes() {
        let _ = write!(out, "  NUMANode P#{}", node.os_id);
        if let Some(b) = node.memory_bytes {
            let _ = write!(out, " ({})", bytes(b));
        }
        if node.has_cpus() {
            let os: Vec<u32> = node.cpus.iter().map(|&c| m.cpu(c).os_index).collect();
            let cores: std::collections::BTreeSet<u32> =
                node.cpus.iter().map(|&c| m.cpu(c).core).collect();
            let _ = write!(out, "  CPUs {}", format_cpulist(&os));
            if cores.len() < os.len() {
                let _ = write!(out, " ({} cores)", cores.len());
            }
            if !node.withheld_cpus.is_empty() {
                let _ = write!(
                    out,
                    "; not allowed here: {}",
                    format_cpulist(&node.withheld_cpus)
                );
            }
            if !node.offline_cpus.is_empty() {
                let _ = write!(out, "; offline: {}", format_cpulist(&node.offline_cpus));
            }
            out.push('\n');
        } else {
            let why = match node.kind() {
                NodeKind::CpusNotAllowed => format!(
                    "CPUs {} not allowed to this process (taskset or cpuset)",
                    format_cpulist(&node.withheld_cpus)
                ),
                NodeKind::CpusOffline => format!(
                    "CPUs {} offline: memory only",
                    format_cpulist(&node.offline_cpus)
                ),
                _ => "no CPUs: memory only".to_owned(),
            };
            let _ = writeln!(out, "  {why}, outside every level and zone");
        }
    }
}

fn levels(t: &Topology, out: &mut String) {
    let cpu_nodes: Vec<NodeId> = t.cpu_nodes().collect();
    let _ = writeln!(
        out,
        "Memory access levels: M = {}; load-balancing zone S = {} ({})",
        t.mal_count(),
        t.zone_depth(),
        level_range(t.zone_level())
    );
    let _ = writeln!(out, "  level  distance  zone  span size (nodes)");
    for (l, d) in t.levels().iter().enumerate() {
        let level = Level(u8::try_from(l).unwrap_or(u8::MAX));
        let sizes: Vec<usize> = cpu_nodes.iter().map(|&n| t.span(n, level).len()).collect();
        let zone = if level <= t.zone_level() { "yes" } else { "no" };
        let _ = writeln!(
            out,
            "  {:<5}  {:>8}  {:<4}  {}",
            level.to_string(),
            d,
            zone,
            span_sizes(t, &cpu_nodes, &sizes)
        );
    }
}

/// One size for every node, per-node sizes on small machines, a histogram on large ones.
fn span_sizes(t: &Topology, nodes: &[NodeId], sizes: &[usize]) -> String {
    if sizes.windows(2).all(|w| w[0] == w[1]) {
        return format!("{} (every node)", sizes.first().copied().unwrap_or(0));
    }
    if sizes.len() <= PER_NODE_SIZES_UP_TO {
        let parts: Vec<String> = nodes
            .iter()
            .zip(sizes)
            .map(|(&n, s)| format!("P#{}:{s}", t.machine().node(n).os_id))
            .collect();
        return parts.join(" ");
    }
    let mut histogram: BTreeMap<usize, usize> = BTreeMap::new();
    for &s in sizes {
        *histogram.entry(s).or_default() += 1;
    }
    let parts: Vec<String> = histogram
        .iter()
        .map(|(size, count)| format!("{size} ×{count}"))
        .collect();
    parts.join(", ")
}

fn zones(t: &Topology, out: &mut String) {
    let m = t.machine();
    let _ = writeln!(
        out,
        "Zones ({}): nodes inside each node's zone",
        level_range(t.zone_level())
    );
    let width = m
        .nodes()
        .iter()
        .map(|n| n.os_id.to_string().len())
        .max()
        .unwrap_or(1);
    for (k, node) in m.nodes().iter().enumerate() {
        let id = NodeId::new(k);
        let label = format!("P#{:<width$}", node.os_id);
        if !node.has_cpus() {
            let _ = writeln!(out, "  {label}  - (no CPUs)");
            continue;
        }
        let zone = t.span(id, t.zone_level());
        let ids: Vec<u32> = zone.iter().map(|&n| m.node(n).os_id).collect();
        let cpus: usize = zone.iter().map(|&n| t.cpus_of(n).len()).sum();
        let _ = writeln!(
            out,
            "  {label}  {}  ({}, {})",
            format_cpulist(&ids),
            count(zone.len(), "node"),
            count(cpus, "CPU")
        );
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use zonal_topology::{CpuSpec, Machine, NodeSpec};

    #[test]
    fn renders_tree_levels_and_zones() {
        let node = |os_id: u32, cpus: &[u32], mem| NodeSpec {
            os_id,
            cpus: cpus
                .iter()
                .map(|&c| CpuSpec {
                    os_index: c,
                    core: c / 2,
                    cache_group: os_id,
                })
                .collect(),
            memory_bytes: mem,
        };
        let m = Machine::from_specs(
            "demo",
            vec![
                node(0, &[0, 1, 2, 3], Some(8 << 30)),
                node(1, &[4, 5, 6, 7], Some(8 << 30)),
                node(4, &[], Some(16 << 30)),
            ],
            Some(vec![vec![10, 21, 40], vec![21, 10, 40], vec![40, 40, 10]]),
        )
        .unwrap();
        let text = render_human(&Topology::new(m));
        let expected = "\
Machine \"demo\" (8 CPUs, 3 NUMA nodes, 32 GiB total; distances: measured)
  NUMANode P#0 (8 GiB)  CPUs 0-3 (2 cores)
  NUMANode P#1 (8 GiB)  CPUs 4-7 (2 cores)
  NUMANode P#4 (16 GiB)  no CPUs: memory only, outside every level and zone

Memory access levels: M = 2; load-balancing zone S = 2 (levels I-II)
  level  distance  zone  span size (nodes)
  I            10  yes   1 (every node)
  II           21  yes   2 (every node)

Zones (levels I-II): nodes inside each node's zone
  P#0  0-1  (2 nodes, 8 CPUs)
  P#1  0-1  (2 nodes, 8 CPUs)
  P#4  - (no CPUs)
";
        assert_eq!(text, expected);
    }

    #[test]
    fn nodes_without_cpus_say_why() {
        let m = Machine::from_specs(
            "restricted",
            vec![
                NodeSpec::with_cpus(0, [0, 1]),
                NodeSpec::with_cpus(1, [2, 3]),
                NodeSpec::with_cpus(2, []),
                NodeSpec::with_cpus(3, []),
            ],
            None,
        )
        .unwrap()
        .with_offline_cpus(|n| if n == 2 { vec![4, 5] } else { Vec::new() })
        .restrict_cpus(|c| c != 1 && c < 2)
        .unwrap();
        let text = render_human(&Topology::new(m));
        assert!(
            text.contains("  NUMANode P#0  CPUs 0; not allowed here: 1\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "  NUMANode P#1  CPUs 2-3 not allowed to this process (taskset or cpuset), \
                 outside every level and zone\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  NUMANode P#2  CPUs 4-5 offline: memory only, outside"),
            "{text}"
        );
        assert!(
            text.contains("  NUMANode P#3  no CPUs: memory only, outside"),
            "{text}"
        );
    }

    #[test]
    fn large_machines_summarise_span_sizes() {
        let t = zonal_topology::presets::mesh(6, 6, false, 1).unwrap();
        let text = render_human(&t);
        // Level II of a 6×6 mesh: corners see 3 nodes, edges 4, the inside 5.
        assert!(text.contains("3 ×4, 4 ×16, 5 ×16"), "{text}");
        assert!(
            text.contains("Machine \"mesh-6x6x1\" (36 CPUs, 36 NUMA nodes; distances: synthetic)")
        );
        let s1 = zonal_topology::presets::preset("s1").unwrap();
        let text = render_human(&s1);
        assert!(
            text.contains("  V            34  no    14 (every node)"),
            "{text}"
        );
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
        assert_eq!(bytes(512), "512 B");
    }
}
