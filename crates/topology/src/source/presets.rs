//! The paper's machines as named presets, and generators for larger machines.
//!
//! # The paper's systems
//!
//! Mehta & Kanungo name their machines nodes-CPUs-levels (16-2-6, 16-4-6, 32-2-6) but do not
//! print their distance matrices. We build each from boards of two nodes joined by an
//! interconnect, with SLIT-style distances (relative latency, 10 = local) that grow by 6 per
//! interconnect hop, the step between a 2-socket board's 16 and a neighbour board's 22
//! seen on real 8-node AMD boxes (`64amd64-4p2n4ca2co`: 10 / 16 / 22):
//!
//! | preset | nodes × CPUs | boards and interconnect | distances (levels I–VI) |
//! |---|---|---|---|
//! | `s1` | 16 × 2 | 8 boards of 2 nodes on a ring | 10, 16, 22, 28, 34, 40 |
//! | `s2` | 16 × 4 | as `s1` | 10, 16, 22, 28, 34, 40 |
//! | `s3` | 32 × 2 | 16 boards of 2 nodes on a 4-D hypercube | 10, 16, 22, 28, 34, 40 |
//!
//! `d(i, j)` = 10 on the diagonal, 16 for the other node of the same board, and
//! `16 + 6·h` for nodes whose boards are `h` hops apart (ring distance for `s1`/`s2`,
//! Hamming distance of the board numbers for `s3`). Each has `M = 6` levels, so the zone is
//! levels I–IV (`S = 6/2 + 1 = 4`): for node N0 of `s1`, its board partner and the boards up
//! to two ring hops away (10 of the 16 nodes).
//!
//! # Variants
//!
//! The paper prints no distance matrices, so `s1`'s boards-on-a-ring is an assumption.
//! [`VARIANT_NAMES`] are other assumptions for the same machine, kept apart from the
//! presets (which stay as above): the simulator's Table 2 comparison runs them beside `s1`.
//!
//! | variant | nodes × CPUs | assumption | nodes at levels I–VI from any node |
//! |---|---|---|---|
//! | `s1-alt` | 16 × 2 | 16 nodes on a ring, no 2-node boards; `d = 10 + 6·min(hops, 5)` | 1, 2, 2, 2, 2, 7 |
//!
//! `s1-alt` applies the rule zonal-sim already assumes for Table 1's 8-4-6 machine (8
//! nodes on a line, `d = 10 + 6·min(hops, 5)`) to 16 nodes on a ring: each node links to
//! two neighbours and every node five or more hops away sits at the farthest distance, 40
//! (a firmware table that stops growing at its sixth value). Its levels are `s1`'s (10, 16,
//! 22, 28, 34, 40) and so is its zone depth (levels I–IV: a node and the six within three
//! hops), but level VI holds 7 of the 15 other nodes where `s1` has 2 (the opposite
//! board). It exists for the paper's Table 2 (13.5% of processes ran most at level VI,
//! more than `s1`'s two level-VI nodes give): zonal-sim's `paper --reproduction` runs it
//! beside `s1` and the other assignments it tried (its report's Table 2 section and
//! `reproduction/table2.json`).
//!
//! # Generators
//!
//! [`hierarchical`] builds a fan-out tree (sockets of nodes, boards of sockets, …): the
//! distance between two nodes grows with the height of their lowest common ancestor.
//! [`mesh`] builds a 2-D mesh or torus where the distance grows with the hop count.
//! Both keep every distance inside Linux's 10..=255.

use crate::error::{Result, TopologyError};
use crate::hierarchy::Topology;
use crate::machine::{CpuSpec, Machine, NodeSpec};

/// The preset names, for error messages and CLIs.
pub const PRESET_NAMES: &[&str] = &["s1", "s2", "s3"];

/// Other distance assumptions for the paper's machines (see the module docs), also
/// accepted by [`preset`]: `s1-alt`.
pub const VARIANT_NAMES: &[&str] = &["s1-alt"];

/// One of the paper's machines by name (`s1`, `s2`, `s3`), or a variant
/// ([`VARIANT_NAMES`]: `s1-alt`).
///
/// # Errors
/// [`TopologyError::UnknownPreset`] listing the valid names.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// let s3 = zonal::topology::presets::preset("s3")?;
/// assert_eq!((s3.node_count(), s3.cpu_count(), s3.mal_count()), (32, 64, 6));
/// assert!(zonal::topology::presets::preset("s9").is_err());
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn preset(name: &str) -> Result<Topology> {
    preset_machine(name).map(Topology::new)
}

/// The machine model of a preset, before the hierarchy is built.
///
/// # Errors
/// [`TopologyError::UnknownPreset`].
pub fn preset_machine(name: &str) -> Result<Machine> {
    match name.to_ascii_lowercase().as_str() {
        "s1" => boards(name, 8, 2, ring_hops),
        "s2" => boards(name, 8, 4, ring_hops),
        "s3" => boards(name, 16, 2, hypercube_hops),
        "s1-alt" => ring_saturating(name, 16, 2, 5),
        _ => Err(TopologyError::UnknownPreset {
            name: name.to_owned(),
            valid: PRESET_NAMES
                .iter()
                .chain(VARIANT_NAMES)
                .copied()
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// `n` nodes on a ring, `d = 10 + 6·min(hops, cap)` (the `s1-alt` variant).
fn ring_saturating(name: &str, n: usize, cpus_per_node: usize, cap: usize) -> Result<Machine> {
    distance_rule(name, n, cpus_per_node, |i, j| {
        10 + 6 * ring_hops(i, j, n).min(cap) as u64
    })
}

/// `n` nodes of `cpus_per_node` CPUs each, numbered consecutively, node `i` at distance
/// `d(i, j)` from node `j` (10 on the diagonal, whatever `d` says there): the machine a
/// distance rule describes, for assumptions about machines whose matrices were not printed.
///
/// # Errors
/// [`TopologyError::InvalidGenerator`] for no nodes or no CPUs per node,
/// [`TopologyError::TooMany`] past the node or CPU limits (checked before the matrix is
/// built), and what [`Machine::synthetic`] refuses (an asymmetric or out-of-range matrix).
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// use zonal::topology::{presets, Topology};
/// // 8 nodes on a line, 10 + 6 per hop up to 5 hops: six levels.
/// let m = presets::distance_rule("line8", 8, 4, |i, j| 10 + 6 * i.abs_diff(j).min(5) as u64)?;
/// assert_eq!(Topology::new(m).mal_count(), 6);
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn distance_rule(
    name: &str,
    n: usize,
    cpus_per_node: usize,
    d: impl Fn(usize, usize) -> u64,
) -> Result<Machine> {
    check_shape(cpus_per_node, n)?;
    let rows = (0..n)
        .map(|i| (0..n).map(|j| if i == j { 10 } else { d(i, j) }).collect())
        .collect();
    Machine::synthetic(name, uniform_nodes(n, cpus_per_node, 1), rows)
}

fn ring_hops(a: usize, b: usize, boards: usize) -> usize {
    let d = a.abs_diff(b);
    d.min(boards - d)
}

fn hypercube_hops(a: usize, b: usize, _boards: usize) -> usize {
    (a ^ b).count_ones() as usize
}

/// Two nodes per board; boards `h` hops apart are `16 + 6h` away.
fn boards(
    name: &str,
    nboards: usize,
    cpus_per_node: usize,
    hops: fn(usize, usize, usize) -> usize,
) -> Result<Machine> {
    distance_rule(name, nboards * 2, cpus_per_node, |i, j| {
        16 + 6 * hops(i / 2, j / 2, nboards) as u64
    })
}

/// `n` nodes of `cpus_per_node` CPUs numbered consecutively; `smt` CPUs per core; one cache
/// per node.
fn uniform_nodes(n: usize, cpus_per_node: usize, smt: usize) -> Vec<NodeSpec> {
    (0..n)
        .map(|i| {
            let os_id = i as u32;
            NodeSpec {
                os_id,
                cpus: (0..cpus_per_node)
                    .map(|k| {
                        let os_index = (i * cpus_per_node + k) as u32;
                        CpuSpec {
                            os_index,
                            core: (i * cpus_per_node + k / smt.max(1) * smt.max(1)) as u32,
                            cache_group: os_id,
                        }
                    })
                    .collect(),
                memory_bytes: None,
            }
        })
        .collect()
}

fn check_shape(cpus_per_node: usize, nodes: usize) -> Result<()> {
    if cpus_per_node == 0 {
        return Err(TopologyError::InvalidGenerator(
            "cpus_per_node must be at least 1".into(),
        ));
    }
    if nodes == 0 {
        return Err(TopologyError::InvalidGenerator(
            "the machine needs at least one node".into(),
        ));
    }
    // Checked before the generator builds its node × node matrix.
    if nodes > crate::machine::MAX_NODES {
        return Err(TopologyError::TooMany {
            what: "NUMA nodes",
            count: nodes,
            limit: crate::machine::MAX_NODES,
        });
    }
    let cpus = nodes.saturating_mul(cpus_per_node);
    if cpus > crate::machine::MAX_CPUS {
        return Err(TopologyError::TooMany {
            what: "CPUs",
            count: cpus,
            limit: crate::machine::MAX_CPUS,
        });
    }
    Ok(())
}

/// A fan-out tree: `fanout = [4, 4, 2]` is 2 boards of 4 sockets of 4 nodes (32 nodes).
/// Nodes whose lowest common ancestor is `h` levels up are `10 + step·h` apart, with `step`
/// the largest value ≤ 10 that keeps every distance ≤ 255. `M = fanout.len() + 1`.
///
/// # Errors
/// [`TopologyError::InvalidGenerator`] for an empty fan-out, a zero entry, zero CPUs per node,
/// more than 245 levels, or more than 2^20 CPUs.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// let t = zonal::topology::presets::hierarchical(&[4, 4, 4, 4, 4], 1)?;
/// assert_eq!((t.node_count(), t.mal_count()), (1024, 6));
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn hierarchical(fanout: &[usize], cpus_per_node: usize) -> Result<Topology> {
    hierarchical_machine(fanout, cpus_per_node).map(Topology::new)
}

/// The machine model of [`hierarchical`], before the hierarchy is built (for callers that
/// time or restrict it first).
///
/// # Errors
/// As [`hierarchical`].
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// let m = zonal::topology::presets::hierarchical_machine(&[2, 2], 3)?;
/// assert_eq!((m.nodes().len(), m.cpus().len()), (4, 12));
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn hierarchical_machine(fanout: &[usize], cpus_per_node: usize) -> Result<Machine> {
    if fanout.is_empty() || fanout.contains(&0) {
        return Err(TopologyError::InvalidGenerator(format!(
            "fan-out {fanout:?} must be non-empty with no zero"
        )));
    }
    let n = fanout
        .iter()
        .try_fold(1usize, |acc, &f| acc.checked_mul(f))
        .unwrap_or(usize::MAX);
    check_shape(cpus_per_node, n)?;
    let height = fanout.len();
    if height > 245 {
        return Err(TopologyError::InvalidGenerator(format!(
            "{height} tree levels exceed the distance range"
        )));
    }
    let step = (245 / height).min(10) as u64;
    let rows = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    // Height of the lowest common ancestor: strip fan-outs until equal.
                    let (mut a, mut b, mut h) = (i, j, 0u64);
                    for &f in fanout {
                        if a == b {
                            break;
                        }
                        a /= f;
                        b /= f;
                        h += 1;
                    }
                    10 + step * h
                })
                .collect()
        })
        .collect();
    let name = format!(
        "hierarchical-{}x{cpus_per_node}",
        fanout
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("x")
    );
    Machine::synthetic(name, uniform_nodes(n, cpus_per_node, 1), rows)
}

/// A `width × height` 2-D mesh (or torus, with wrap-around links) of nodes; nodes `h` hops
/// apart are `10 + step·h` away, `step` the largest value ≤ 10 keeping distances ≤ 255.
///
/// # Errors
/// [`TopologyError::InvalidGenerator`] for a zero dimension, zero CPUs per node, or more than
/// 2^20 CPUs.
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// let t = zonal::topology::presets::mesh(4, 4, true, 2)?;
/// assert_eq!((t.node_count(), t.cpu_count(), t.mal_count()), (16, 32, 5));
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn mesh(width: usize, height: usize, torus: bool, cpus_per_node: usize) -> Result<Topology> {
    mesh_machine(width, height, torus, cpus_per_node).map(Topology::new)
}

/// The machine model of [`mesh`], before the hierarchy is built.
///
/// # Errors
/// As [`mesh`].
///
/// ```
/// # use zonal_topology::doc_facade as zonal;
/// let m = zonal::topology::presets::mesh_machine(8, 8, false, 1)?;
/// assert_eq!(m.nodes().len(), 64);
/// # Ok::<(), zonal::topology::TopologyError>(())
/// ```
pub fn mesh_machine(
    width: usize,
    height: usize,
    torus: bool,
    cpus_per_node: usize,
) -> Result<Machine> {
    if width == 0 || height == 0 {
        return Err(TopologyError::InvalidGenerator(format!(
            "mesh {width}×{height} has a zero side"
        )));
    }
    let n = width.saturating_mul(height);
    check_shape(cpus_per_node, n)?;
    let axis = |a: usize, b: usize, len: usize| {
        let d = a.abs_diff(b);
        if torus {
            d.min(len - d)
        } else {
            d
        }
    };
    let max_hops = if torus {
        width / 2 + height / 2
    } else {
        width + height - 2
    }
    .max(1);
    let step = ((245 / max_hops) as u64).clamp(1, 10);
    let rows = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let hops =
                        axis(i % width, j % width, width) + axis(i / width, j / width, height);
                    10 + step * hops as u64
                })
                .collect()
        })
        .collect();
    let kind = if torus { "torus" } else { "mesh" };
    Machine::synthetic(
        format!("{kind}-{width}x{height}x{cpus_per_node}"),
        uniform_nodes(n, cpus_per_node, 1),
        rows,
    )
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ids::NodeId;

    #[test]
    fn paper_systems_have_six_levels() {
        for (name, nodes, cpus) in [("s1", 16, 32), ("s2", 16, 64), ("s3", 32, 64)] {
            let t = preset(name).unwrap();
            assert_eq!(t.node_count(), nodes, "{name}");
            assert_eq!(t.cpu_count(), cpus, "{name}");
            assert_eq!(t.levels(), &[10, 16, 22, 28, 34, 40], "{name}");
            assert_eq!(t.zone_depth(), 4, "{name}");
            assert!(t.machine().require_symmetric().is_ok());
        }
    }

    #[test]
    fn s1_zone_of_n0() {
        let t = preset("s1").unwrap();
        let zone: Vec<u32> = (0..16)
            .filter(|&j| t.node_in_zone(NodeId(0), NodeId(j)))
            .collect();
        // Own node, board partner, boards 1 and 7 (one hop), boards 2 and 6 (two hops).
        assert_eq!(zone, vec![0, 1, 2, 3, 4, 5, 12, 13, 14, 15]);
    }

    #[test]
    fn s1_alt_is_a_valid_symmetric_s1_sized_machine_with_levels_as_documented() {
        let t = preset("s1-alt").unwrap();
        let s1 = preset("s1").unwrap();
        assert!(t.machine().require_symmetric().is_ok());
        assert_eq!((t.node_count(), t.cpu_count()), (16, 32));
        assert_eq!(t.levels(), s1.levels());
        assert_eq!(t.zone_depth(), 4);
        for a in 0..16u32 {
            let mut per_level = [0usize; 6];
            for b in 0..16u32 {
                let l = t.node_level(NodeId(a), NodeId(b)).unwrap().index();
                per_level[l] += 1;
                let hops = a.abs_diff(b).min(16 - a.abs_diff(b)) as usize;
                assert_eq!(l, hops.min(5), "{a} -> {b}");
            }
            assert_eq!(per_level, [1, 2, 2, 2, 2, 7], "from node {a}");
        }
        // Not s1: node 0's board partner is one ring hop away, its far nodes differ.
        assert_ne!(t.machine().distance_rows(), s1.machine().distance_rows());
        assert_eq!(t.node_level(NodeId(0), NodeId(1)).unwrap().index(), 1);
        assert_eq!(t.node_level(NodeId(0), NodeId(5)).unwrap().index(), 5);
        assert_eq!(s1.node_level(NodeId(0), NodeId(5)).unwrap().index(), 3);
    }

    #[test]
    fn an_unknown_name_lists_presets_and_variants() {
        let e = preset("s9").unwrap_err().to_string();
        assert!(e.contains("s1, s2, s3, s1-alt"), "{e}");
    }

    #[test]
    fn generators_reject_bad_shapes() {
        assert!(hierarchical(&[], 1).is_err());
        assert!(hierarchical(&[2, 0], 1).is_err());
        assert!(hierarchical(&[2], 0).is_err());
        assert!(mesh(0, 3, false, 1).is_err());
        assert!(mesh(1 << 11, 1 << 11, false, 1).is_err());
    }

    #[test]
    fn generators_stay_in_range() {
        let t = mesh(32, 32, false, 1).unwrap();
        assert!(t.levels().iter().all(|&d| (10..=255).contains(&d)));
        assert_eq!(t.mal_count(), 63);
        let t = mesh(8, 8, true, 1).unwrap();
        assert_eq!(t.mal_count(), 9);
        let t = hierarchical(&[2, 2, 2], 2).unwrap();
        assert_eq!(t.levels(), &[10, 20, 30, 40]);
    }
}
