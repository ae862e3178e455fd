//! The kernel as oracle: Zonal's NUMA spans against the guest kernel's sched domains.
//!
//! # What the kernel builds (Linux 6.1, `kernel/sched/topology.c`)
//!
//! Per CPU, one domain per topology level, innermost first: SMT, CLS, MC (all inside the
//! CPU's node: x86's `topology_sane` refuses siblings across nodes, and the DIE level is
//! dropped when a package holds several nodes), then NODE (`sched_domains_numa_masks[0]`:
//! the node's CPUs) and one NUMA level per further distinct distance `levels[k]` — the CPUs
//! of the CPU nodes `j` with `d(node, j) ≤ levels[k]` (row `d(node, ·)`, only nodes with CPUs;
//! exactly Zonal's span of level `k`). Building stops at the first level whose span is every
//! CPU.
//!
//! Then `cpu_attach_domain` removes degenerate domains:
//! - `sd_parent_degenerate` removes a parent whose span equals its child's. Such a parent has
//!   a single group (groups are the children's spans, starting with this CPU's own, which is
//!   already the whole span), so only `SD_WAKE_AFFINE` could keep it, and a child always has
//!   it when its parent does (the flag is cleared above `node_reclaim_distance`, and the child
//!   is nearer). The walk repeats on the new parent: every run of equal spans collapses to one.
//! - `sd_degenerate` removes the bottom domain when it spans one CPU.
//!
//! So the kernel's list is the distinct spans, innermost first, without one-CPU spans. Of
//! those, the ones inside the CPU's node (SMT, CLS, MC, NODE) are the node's business, not
//! the NUMA hierarchy's: the comparison drops kernel spans that are a subset of the node's
//! CPUs, except the node's whole CPU set (when it has more than one CPU), which Zonal's level
//! I also spans. Zonal's side: for each level, the union of the CPUs of the nodes in the
//! CPU's node's span; one-CPU spans and consecutive duplicates dropped.

use std::collections::BTreeMap;

use serde::Deserialize;
use zonal_topology::TopologyReport;

use crate::error::GuestError;
use crate::schedstat::CpuDomains;

/// The part of a [`TopologyReport`] the oracle reads (it also reads the report's JSON, as
/// `topology --json` prints it).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct NumaSpans {
    /// OS node ids, ascending.
    pub node_ids: Vec<u32>,
    /// Distinct distances over nodes with CPUs, ascending.
    pub levels: Vec<u32>,
    /// Per level (the distance as a string), per node in `node_ids` order: node OS ids.
    pub spans: BTreeMap<String, Vec<Vec<u32>>>,
    /// Per node in `node_ids` order: its CPUs' OS indexes.
    pub node_cpus: Vec<Vec<u32>>,
}

impl From<&TopologyReport> for NumaSpans {
    fn from(r: &TopologyReport) -> Self {
        Self {
            node_ids: r.node_ids.clone(),
            levels: r.levels.clone(),
            spans: r.spans.clone(),
            node_cpus: r.node_cpus.clone(),
        }
    }
}

impl NumaSpans {
    /// Reads the fields from a report's JSON (`topology --json`).
    ///
    /// # Errors
    /// [`GuestError::Report`] with the parser's message.
    pub fn from_json(text: &str) -> Result<Self, GuestError> {
        serde_json::from_str(text).map_err(|e| GuestError::Report {
            message: format!("malformed report JSON: {e}"),
        })
    }

    /// Zonal's distinct NUMA spans of each CPU's node in CPUs, innermost first (one-CPU spans
    /// and consecutive duplicates dropped): CPU → spans.
    ///
    /// # Errors
    /// [`GuestError::Report`] for an inconsistent report: a level without spans, a span row
    /// count other than the node count, a node id that is not in `node_ids`.
    pub fn cpu_spans(&self) -> Result<BTreeMap<u32, Vec<Vec<u32>>>, GuestError> {
        let bad = |message: String| GuestError::Report { message };
        let n = self.node_ids.len();
        if self.node_cpus.len() != n {
            return Err(bad(format!(
                "{} node_cpus rows for {n} nodes",
                self.node_cpus.len()
            )));
        }
        let mut per_node: Vec<Vec<Vec<u32>>> = vec![Vec::new(); n];
        for level in &self.levels {
            let rows = self
                .spans
                .get(&level.to_string())
                .ok_or_else(|| bad(format!("level {level} has no spans")))?;
            if rows.len() != n {
                return Err(bad(format!(
                    "level {level}: {} span rows for {n} nodes",
                    rows.len()
                )));
            }
            for (i, row) in rows.iter().enumerate() {
                let mut cpus = Vec::new();
                for id in row {
                    let k = self
                        .node_ids
                        .binary_search(id)
                        .map_err(|_| bad(format!("level {level}: unknown node {id}")))?;
                    cpus.extend_from_slice(&self.node_cpus[k]);
                }
                cpus.sort_unstable();
                cpus.dedup();
                let spans = &mut per_node[i];
                if cpus.len() > 1 && spans.last() != Some(&cpus) {
                    spans.push(cpus);
                }
            }
        }
        let mut out = BTreeMap::new();
        for (i, cpus) in self.node_cpus.iter().enumerate() {
            for &c in cpus {
                out.insert(c, per_node[i].clone());
            }
        }
        Ok(out)
    }
}

/// One way the kernel and Zonal disagree.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OracleMismatch {
    /// A CPU's NUMA spans differ.
    #[error("cpu {cpu} (node {node}): kernel spans {kernel:?}, Zonal spans {zonal:?}")]
    Spans {
        /// The CPU.
        cpu: u32,
        /// Its node (OS id).
        node: u32,
        /// The kernel's domain spans of the CPU (the node-internal ones dropped).
        kernel: Vec<Vec<u32>>,
        /// Zonal's spans of the CPU's node, in CPUs.
        zonal: Vec<Vec<u32>>,
    },
    /// A CPU Zonal knows is not in the kernel's schedstat.
    #[error("cpu {cpu}: in Zonal's model, not in the kernel's schedstat")]
    MissingInKernel {
        /// The CPU.
        cpu: u32,
    },
    /// A CPU of the kernel's schedstat is not in Zonal's model.
    #[error("cpu {cpu}: in the kernel's schedstat, not in Zonal's model")]
    MissingInZonal {
        /// The CPU.
        cpu: u32,
    },
}

/// Compares Zonal's spans with the kernel's for every CPU; returns every mismatch (none: the
/// kernel agrees).
///
/// # Errors
/// [`GuestError::Report`] for an inconsistent report (see [`NumaSpans::cpu_spans`]).
pub fn compare_with_kernel(
    zonal: &NumaSpans,
    kernel: &[CpuDomains],
) -> Result<Vec<OracleMismatch>, GuestError> {
    let ours = zonal.cpu_spans()?;
    let mut node_of: BTreeMap<u32, (u32, &[u32])> = BTreeMap::new();
    for (id, cpus) in zonal.node_ids.iter().zip(&zonal.node_cpus) {
        for &c in cpus {
            node_of.insert(c, (*id, cpus.as_slice()));
        }
    }
    let mut out = Vec::new();
    for (cpu, domains) in kernel {
        let (Some(zonal_spans), Some(&(node, node_cpus))) = (ours.get(cpu), node_of.get(cpu))
        else {
            out.push(OracleMismatch::MissingInZonal { cpu: *cpu });
            continue;
        };
        let mut node_cpus = node_cpus.to_vec();
        node_cpus.sort_unstable();
        let kernel_spans: Vec<Vec<u32>> = domains
            .iter()
            .filter(|span| {
                let inside = span.iter().all(|c| node_cpus.binary_search(c).is_ok());
                !inside || (span.len() > 1 && span.len() == node_cpus.len())
            })
            .cloned()
            .collect();
        if &kernel_spans != zonal_spans {
            out.push(OracleMismatch::Spans {
                cpu: *cpu,
                node,
                kernel: kernel_spans,
                zonal: zonal_spans.clone(),
            });
        }
    }
    for cpu in ours.keys() {
        if !kernel.iter().any(|(c, _)| c == cpu) {
            out.push(OracleMismatch::MissingInKernel { cpu: *cpu });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::schedstat::parse_schedstat;
    use zonal_topology::{CpuSpec, Machine, NodeSpec, Topology};

    const D4: [[u64; 4]; 4] = [
        [10, 12, 20, 22],
        [12, 10, 22, 20],
        [20, 22, 10, 12],
        [22, 20, 12, 10],
    ];

    fn machine(cpus_per_node: u32, d: &[&[u64]]) -> NumaSpans {
        let specs = (0..d.len() as u32)
            .map(|i| NodeSpec {
                os_id: i,
                cpus: (0..cpus_per_node)
                    .map(|c| CpuSpec::alone(i * cpus_per_node + c, i))
                    .collect(),
                memory_bytes: None,
            })
            .collect();
        let m =
            Machine::from_specs("t", specs, Some(d.iter().map(|r| r.to_vec()).collect())).unwrap();
        NumaSpans::from(&TopologyReport::new(&Topology::new(m)))
    }

    fn four() -> NumaSpans {
        let rows: Vec<&[u64]> = D4.iter().map(|r| r.as_slice()).collect();
        machine(2, &rows)
    }

    /// The real guest's output (4 nodes × 2 CPUs, the matrix above).
    const REAL: &str = "version 15\ntimestamp 4294937000\n\
        cpu0 0 0 0 0 0 0 1 2 3\ndomain0 03 0 0\ndomain1 0f 0 0\ndomain2 3f 0 0\ndomain3 ff 0 0\n\
        cpu1 0 0 0 0 0 0 1 2 3\ndomain0 03 0 0\ndomain1 0f 0 0\ndomain2 3f 0 0\ndomain3 ff 0 0\n\
        cpu2 0 0 0 0 0 0 1 2 3\ndomain0 0c 0 0\ndomain1 0f 0 0\ndomain2 cf 0 0\ndomain3 ff 0 0\n\
        cpu3 0 0 0 0 0 0 1 2 3\ndomain0 0c 0 0\ndomain1 0f 0 0\ndomain2 cf 0 0\ndomain3 ff 0 0\n\
        cpu4 0 0 0 0 0 0 1 2 3\ndomain0 30 0 0\ndomain1 f0 0 0\ndomain2 f3 0 0\ndomain3 ff 0 0\n\
        cpu5 0 0 0 0 0 0 1 2 3\ndomain0 30 0 0\ndomain1 f0 0 0\ndomain2 f3 0 0\ndomain3 ff 0 0\n\
        cpu6 0 0 0 0 0 0 1 2 3\ndomain0 c0 0 0\ndomain1 f0 0 0\ndomain2 fc 0 0\ndomain3 ff 0 0\n\
        cpu7 0 0 0 0 0 0 1 2 3\ndomain0 c0 0 0\ndomain1 f0 0 0\ndomain2 fc 0 0\ndomain3 ff 0 0\n";

    #[test]
    fn four_node_guest_agrees() {
        let z = four();
        let spans = z.cpu_spans().unwrap();
        assert_eq!(
            spans[&2],
            vec![
                vec![2, 3],
                vec![0, 1, 2, 3],
                vec![0, 1, 2, 3, 6, 7],
                (0..8).collect()
            ]
        );
        let kernel = parse_schedstat(REAL).unwrap();
        assert_eq!(compare_with_kernel(&z, &kernel).unwrap(), vec![]);
    }

    #[test]
    fn a_wrong_span_is_reported_with_both_sides() {
        let bad = REAL.replace(
            "cpu4 0 0 0 0 0 0 1 2 3\ndomain0 30 0 0\ndomain1 f0 0 0\ndomain2 f3",
            "cpu4 0 0 0 0 0 0 1 2 3\ndomain0 30 0 0\ndomain1 f0 0 0\ndomain2 fc",
        );
        let m = compare_with_kernel(&four(), &parse_schedstat(&bad).unwrap()).unwrap();
        assert_eq!(m.len(), 1);
        let OracleMismatch::Spans {
            cpu,
            node,
            kernel,
            zonal,
        } = &m[0]
        else {
            panic!("{m:?}")
        };
        assert_eq!((*cpu, *node), (4, 2));
        assert_eq!(kernel[1], vec![4, 5, 6, 7]);
        assert_eq!(kernel[2], vec![2, 3, 4, 5, 6, 7]);
        assert_eq!(zonal[2], vec![0, 1, 4, 5, 6, 7]);
        assert!(m[0].to_string().contains("cpu 4 (node 2)"));
    }

    #[test]
    fn one_cpu_nodes_and_smt_levels() {
        // One CPU per node: the kernel's NODE domain degenerates (one CPU), so its first
        // domain is the first NUMA level.
        let rows: Vec<&[u64]> = D4.iter().map(|r| r.as_slice()).collect();
        let z = machine(1, &rows);
        let text = "version 15\ntimestamp 1\n\
            cpu0 0\ndomain0 3 0\ndomain1 7 0\ndomain2 f 0\n\
            cpu1 0\ndomain0 3 0\ndomain1 b 0\ndomain2 f 0\n\
            cpu2 0\ndomain0 c 0\ndomain1 d 0\ndomain2 f 0\n\
            cpu3 0\ndomain0 c 0\ndomain1 e 0\ndomain2 f 0\n";
        assert_eq!(
            compare_with_kernel(&z, &parse_schedstat(text).unwrap()).unwrap(),
            vec![]
        );
        // SMT and MC spans inside a 4-CPU node are the node's business, the node span is not.
        let z = machine(4, &[&[10, 20], &[20, 10]]);
        let mut text = String::from("version 15\ntimestamp 1\n");
        for c in 0..8u32 {
            let smt = 0x3u32 << (c & !1);
            let node = if c < 4 { "0f" } else { "f0" };
            text.push_str(&format!(
                "cpu{c} 0\ndomain0 {smt:x} 0\ndomain1 {node} 0\ndomain2 ff 0\n"
            ));
        }
        let kernel = parse_schedstat(&text).unwrap();
        assert_eq!(compare_with_kernel(&z, &kernel).unwrap(), vec![]);
        // A missing NUMA level is a mismatch.
        let short = text.replace(
            "cpu7 0\ndomain0 c0 0\ndomain1 f0 0\ndomain2 ff 0\n",
            "cpu7 0\ndomain0 c0 0\ndomain1 f0 0\n",
        );
        let m = compare_with_kernel(&z, &parse_schedstat(&short).unwrap()).unwrap();
        assert!(
            matches!(m[..], [OracleMismatch::Spans { cpu: 7, .. }]),
            "{m:?}"
        );
    }

    #[test]
    fn missing_cpus_and_memory_only_nodes() {
        let specs = vec![
            NodeSpec {
                os_id: 0,
                cpus: vec![CpuSpec::alone(0, 0)],
                memory_bytes: None,
            },
            NodeSpec {
                os_id: 1,
                cpus: vec![CpuSpec::alone(1, 1)],
                memory_bytes: None,
            },
            NodeSpec {
                os_id: 2,
                cpus: vec![],
                memory_bytes: None,
            },
        ];
        let d = vec![vec![10, 40, 80], vec![40, 10, 80], vec![80, 80, 10]];
        let m = Machine::from_specs("gpu", specs, Some(d)).unwrap();
        let z = NumaSpans::from(&TopologyReport::new(&Topology::new(m)));
        let text = "version 15\ntimestamp 1\ncpu0 0\ndomain0 3 0\ncpu1 0\ndomain0 3 0\n";
        assert_eq!(
            compare_with_kernel(&z, &parse_schedstat(text).unwrap()).unwrap(),
            vec![]
        );
        let text = "version 15\ntimestamp 1\ncpu0 0\ndomain0 3 0\ncpu5 0\n";
        let m = compare_with_kernel(&z, &parse_schedstat(text).unwrap()).unwrap();
        assert_eq!(
            m,
            vec![
                OracleMismatch::MissingInZonal { cpu: 5 },
                OracleMismatch::MissingInKernel { cpu: 1 }
            ]
        );
    }

    #[test]
    fn report_json_round_trip_and_errors() {
        let t = zonal_topology::presets::preset("s1").unwrap();
        let r = TopologyReport::new(&t);
        let z = NumaSpans::from_json(&r.to_json_pretty()).unwrap();
        assert_eq!(z, NumaSpans::from(&r));
        assert!(matches!(
            NumaSpans::from_json("{"),
            Err(GuestError::Report { .. })
        ));
        let mut broken = z.clone();
        broken.spans.remove("16");
        assert!(broken.cpu_spans().unwrap_err().to_string().contains("16"));
    }
}
