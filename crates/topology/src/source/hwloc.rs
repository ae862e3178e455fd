//! hwloc through hwlocality: this machine, and hwloc XML exports of other machines.
//!
//! - NUMA nodes are hwloc's `NUMANode` objects, by OS index. A PU belongs to the node with
//!   the lowest OS id whose cpuset contains it: in hwloc a memory-only node (KNL's MCDRAM,
//!   a GPU's memory) shares the cpuset of the CPUs it is attached to, while Linux's
//!   `node*/cpulist` gives those CPUs to the ordinary node only.
//! - Cores are `Core` ancestors; the cache group is the outermost CPU-cache ancestor
//!   (the last-level cache).
//! - Distances: the `NUMANode` matrix named `NUMALatency` (hwloc's reading of the ACPI SLIT),
//!   else the first latency matrix, else the first one. Objects may be stored in any order
//!   (`16amd64-4distances.xml` keeps `1 0 2 5 4 3 6 7`); every value is placed by OS index.
//! - An XML file describes another machine: it is loaded with
//!   `INCLUDE_DISALLOWED` and never checked against this process's CPUs. This machine is
//!   loaded the same way, then restricted to the CPUs this process may run on (its
//!   affinity mask, and cgroups through hwloc's allowed set); the CPUs left out are
//!   recorded per node (`NodeInfo::withheld_cpus`), so that a node outside the cpuset is
//!   reported as such rather than as memory-only.
//! - This machine is loaded without hwloc's `x86` backend ([`load_this_machine`]): that
//!   backend binds the loading thread to each PU in turn to read CPUID (then restores it):
//!   loaded on a pinned worker, that worker runs on every other worker's CPU meanwhile
//!   (found in a 4-node guest; `zonal_runtime::os` tells the story). On Linux the `linux` backend reads the
//!   same cores, caches and nodes from sysfs without touching any binding. The calling
//!   thread's affinity, not the process's (which hwloc reads as the union over threads), is
//!   the allowed set, as `sched_getaffinity(0)` and std's `available_parallelism` read it.
//! - On Linux the crate's default discovery is `linux.rs` (sysfs and procfs), which gives the
//!   same machine; this one is `zonal_topology::hwloc::this_machine`.
//! - hwloc 2.x refuses exports written by hwloc 3 (`<topology version="3.0">`, which is what
//!   hwloc's own test suite holds); [`from_xml_file`] retries those declared as 2.0.

use std::path::Path;

use hwlocality::cpu::binding::CpuBindingFlags;
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::distance::DistancesKind;
use hwlocality::object::types::ObjectType;
use hwlocality::object::TopologyObject;
use hwlocality::topology::builder::BuildFlags;
use hwlocality::Topology as HwTopology;

use crate::error::{Result, TopologyError};
use crate::machine::{CpuSpec, Machine, NodeSpec};

fn hwloc_err(origin: &str, e: impl std::fmt::Display) -> TopologyError {
    TopologyError::Hwloc {
        origin: origin.to_owned(),
        message: e.to_string(),
    }
}

/// This machine, restricted to the CPUs this process may use (taskset, cgroups).
///
/// # Errors
/// [`TopologyError::Hwloc`] when hwloc cannot discover the machine, and validation errors
/// of [`Machine::from_specs`] (e.g. [`TopologyError::NoCpus`] with an empty affinity mask).
#[doc(alias = "hwloc_topology_load")]
pub fn this_machine() -> Result<Machine> {
    const ORIGIN: &str = "this machine";
    let topo = load_this_machine()?;
    let allowed = allowed_in(&topo).unwrap_or_else(|| ids(topo.allowed_cpuset().iter_set()));
    let machine = with_offline(extract(&topo, "this machine", ORIGIN)?);
    machine.restrict_cpus(|c| allowed.binary_search(&c).is_ok())
}

/// OS indexes from hwloc's bitmap indexes, ascending.
fn ids(set: impl Iterator<Item = hwlocality::bitmap::BitmapIndex>) -> Vec<u32> {
    let mut v: Vec<u32> = set
        .filter_map(|i| u32::try_from(usize::from(i)).ok())
        .collect();
    v.sort_unstable();
    v
}

/// This machine with every CPU hwloc sees, ignoring the process's affinity mask and its
/// cgroup cpuset.
///
/// # Errors
/// As [`this_machine`].
pub fn this_machine_unrestricted() -> Result<Machine> {
    const ORIGIN: &str = "this machine";
    let topo = load_this_machine()?;
    extract(&topo, "this machine", ORIGIN).map(with_offline)
}

/// This machine's offline CPUs, from sysfs (`offline.rs`): hwloc leaves them out, so that a
/// node whose CPUs are all offline would pass for memory-only. Where sysfs cannot say
/// (another OS, no `/sys`, a malformed `cpu/online`), nothing is recorded.
fn with_offline(m: Machine) -> Machine {
    match super::offline::offline_cpus(Path::new("/")) {
        Ok(off) => m.with_offline_cpus(|id| off.get(&id).cloned().unwrap_or_default()),
        // An unreadable or malformed `/sys` says nothing about offline CPUs; hwloc's view
        // of the online ones stands.
        Err(_) => m,
    }
}

/// The OS indexes of the CPUs this process may run on: its affinity mask intersected with
/// hwloc's allowed set (cgroups).
///
/// # Errors
/// [`TopologyError::Hwloc`] when hwloc cannot load the machine.
#[doc(alias = "hwloc_get_cpubind")]
pub fn allowed_cpus() -> Result<Vec<u32>> {
    let topo = load_this_machine()?;
    Ok(allowed_in(&topo).unwrap_or_else(|| ids(topo.allowed_cpuset().iter_set())))
}

/// This machine as hwloc sees it, loaded with no backend that changes any thread's binding
/// (the module's docs say why `x86` is left out), with the CPUs of every node, allowed to
/// this process or not (`INCLUDE_DISALLOWED`): without it hwloc drops the CPUs outside the
/// cgroup cpuset, and a node whose CPUs are all outside would pass for memory-only. The
/// allowed set is applied afterwards ([`Machine::restrict_cpus`], which records what it
/// withholds).
fn load_this_machine() -> Result<HwTopology> {
    let err = |e: &dyn std::fmt::Display| hwloc_err("this machine", e);
    let builder = HwTopology::builder()
        .with_flags(BuildFlags::INCLUDE_DISALLOWED)
        .map_err(|e| err(&e))?;
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let builder = builder.without_component("x86").map_err(|e| err(&e))?;
    builder.build().map_err(|e| err(&e))
}

fn allowed_in(topo: &HwTopology) -> Option<Vec<u32>> {
    let allowed = topo.allowed_cpuset();
    let bound = topo.cpu_binding(CpuBindingFlags::THREAD).ok()?;
    let mut v: Vec<u32> = bound
        .iter_set()
        .filter(|&i| allowed.is_set(i))
        .filter_map(|i| u32::try_from(usize::from(i)).ok())
        .collect();
    v.sort_unstable();
    Some(v)
}

/// Another machine from an hwloc XML export (`lstopo foo.xml`).
///
/// Exports written by hwloc 3 (`<topology version="3.0">`, as in hwloc's own test suite) are
/// refused by hwloc 2.x, which Debian 12 ships. The parts we read (NUMA nodes, PUs, cores,
/// caches, `<distances2>`) are unchanged in that format, so when hwloc refuses such a file
/// it is loaded once more from memory declaring version 2.0; hwloc then only drops the
/// topology-wide `<info>` attributes that version 3 moved under `<topology>`.
///
/// # Errors
/// [`TopologyError::Io`] when the file cannot be read, [`TopologyError::Hwloc`] when hwloc
/// rejects it, and validation errors of [`Machine::from_specs`].
#[doc(alias = "hwloc_topology_set_xml")]
pub fn from_xml_file(path: impl AsRef<Path>) -> Result<Machine> {
    let path = path.as_ref();
    let origin = path.display().to_string();
    // hwloc's own message for a missing file is vague, a FIFO would block it and a deeply
    // nested file overflow its parser's stack: read and check the file first
    // (`source/input.rs`).
    let bytes = super::input::read_regular(path)?;
    super::input::check_xml_depth(path, &bytes)?;
    // What hwloc would refuse with a bare errno, or misread, named here (`xml_check.rs`).
    super::xml_check::check(path, &bytes)?;
    let name = path
        .file_stem()
        .map_or_else(|| origin.clone(), |s| s.to_string_lossy().into_owned());
    let builder = || {
        HwTopology::builder()
            .with_flags(BuildFlags::INCLUDE_DISALLOWED)
            .map_err(|e| hwloc_err(&origin, e))
    };
    // Our checks passed, so hwloc's own reason is all there is to say.
    let refused = |e: &dyn std::fmt::Display| {
        hwloc_err(
            &origin,
            format!(
                "hwloc refused the document after Zonal's checks passed ({e}); run with \
                 HWLOC_XML_VERBOSE=1 for hwloc's reason"
            ),
        )
    };
    let first = builder()?
        .from_xml_file(path)
        .map_err(|e| refused(&e))
        .and_then(|b| b.build().map_err(|e| refused(&e)));
    let topo = match first {
        Ok(topo) => topo,
        Err(e) => {
            let Some(xml) = declared_as_v2(&bytes) else {
                return Err(e);
            };
            builder()?
                .from_xml(&xml)
                .ok()
                .and_then(|b| b.build().ok())
                .ok_or(e)?
        }
    };
    extract(&topo, &name, &origin).map_err(|e| e.in_file(path))
}

/// The document with a `<topology version="3.x">` root re-declared as version 2.0, or
/// `None` when it is not a UTF-8 hwloc 3 export.
fn declared_as_v2(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let start = text.find("<topology")?;
    let tag_end = start + text[start..].find('>')?;
    let tag = &text[start..tag_end];
    let attr = tag.find("version=\"3.")?;
    let value_start = start + attr + "version=\"".len();
    let value_end = value_start + text[value_start..].find('"')?;
    Some(format!("{}2.0{}", &text[..value_start], &text[value_end..]))
}

fn os_index(obj: &TopologyObject) -> Option<u32> {
    obj.os_index().and_then(|i| u32::try_from(i).ok())
}

fn extract(topo: &HwTopology, name: &str, origin: &str) -> Result<Machine> {
    // Nodes by OS id.
    let mut nodes: Vec<(&TopologyObject, u32)> = Vec::new();
    for o in topo.objects_with_type(ObjectType::NUMANode) {
        // A node without a usable OS index would be dropped with its CPUs: refuse it.
        let Some(id) = os_index(o) else {
            return Err(hwloc_err(
                origin,
                format!(
                    "NUMA node (logical index {}) has no usable OS index ({:?})",
                    o.logical_index(),
                    o.os_index()
                ),
            ));
        };
        nodes.push((o, id));
    }
    nodes.sort_by_key(|&(_, id)| id);
    let mut specs: Vec<NodeSpec> = nodes
        .iter()
        .map(|&(obj, os_id)| NodeSpec {
            os_id,
            cpus: Vec::new(),
            memory_bytes: match obj.attributes() {
                Some(ObjectAttributes::NUMANode(a)) => a.local_memory().map(u64::from),
                _ => None,
            },
        })
        .collect();

    for pu in topo.objects_with_type(ObjectType::PU) {
        let Some(pu_os) = os_index(pu) else { continue };
        // Lowest OS id whose cpuset holds the PU (nodes are sorted).
        let Some(k) = nodes
            .iter()
            .position(|(obj, _)| obj.cpuset().is_some_and(|s| s.is_set(pu_os as usize)))
        else {
            continue;
        };
        let core = pu
            .first_ancestor_with_type(ObjectType::Core)
            .map_or(pu_os, |c| {
                u32::try_from(c.logical_index()).unwrap_or(u32::MAX)
            });
        let llc = pu
            .ancestors()
            .filter(|a| a.object_type().is_cpu_cache())
            .last();
        let cache_group = llc.map_or(1 << 31 | specs[k].os_id, |c| {
            let depth = match c.attributes() {
                Some(ObjectAttributes::Cache(a)) => a.depth() as u32,
                _ => 0,
            };
            depth << 24 | u32::try_from(c.logical_index()).unwrap_or(0)
        });
        specs[k].cpus.push(CpuSpec {
            os_index: pu_os,
            core,
            cache_group,
        });
    }

    let matrices = topo
        .distances_with_type(None, ObjectType::NUMANode)
        .map_err(|e| hwloc_err(origin, e))?;
    let chosen = matrices
        .iter()
        .find(|d| d.name().is_some_and(|n| n.to_bytes() == b"NUMALatency"))
        .or_else(|| {
            matrices
                .iter()
                .find(|d| d.kind().contains(DistancesKind::MEANS_LATENCY))
        })
        .or_else(|| matrices.first());
    let rows = match chosen {
        None => None,
        Some(d) => {
            // Every object of the matrix must be one of the nodes: a matrix naming a node
            // that does not exist is an error, not a row silently dropped.
            let pos: Vec<usize> = d
                .objects()
                .enumerate()
                .map(|(i, o)| {
                    o.and_then(os_index)
                        .and_then(|id| specs.iter().position(|s| s.os_id == id))
                        .ok_or_else(|| {
                            hwloc_err(
                                origin,
                                format!(
                                    "entry {i} of the NUMA distance matrix names no NUMA node \
                                     of the topology"
                                ),
                            )
                        })
                })
                .collect::<Result<_>>()?;
            let n = specs.len();
            let mut rows = vec![vec![0u64; n]; n];
            let mut seen = vec![false; n];
            for ((i, j), v) in d.enumerate_distances() {
                let (a, b) = (pos[i], pos[j]);
                rows[a][b] = v;
                seen[a] = true;
            }
            if let Some(k) = seen.iter().position(|s| !s) {
                return Err(hwloc_err(
                    origin,
                    format!(
                        "the NUMA distance matrix does not cover node {}",
                        specs[k].os_id
                    ),
                ));
            }
            Some(rows)
        }
    };
    Machine::from_specs(name, specs, rows)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn v3_exports_are_redeclared() {
        let doc = "<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n<object/></topology>";
        assert_eq!(
            declared_as_v2(doc.as_bytes()).as_deref(),
            Some("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object/></topology>")
        );
        assert_eq!(declared_as_v2(b"<topology version=\"2.0\">"), None);
        assert_eq!(declared_as_v2(b"<topology><x version=\"3.0\"/>"), None);
        assert_eq!(declared_as_v2(&[0xff, 0xfe]), None);
    }

    #[test]
    fn missing_and_malformed_files_are_typed_errors() {
        let missing = std::env::temp_dir().join("zonal-no-such-file.xml");
        assert!(matches!(
            from_xml_file(&missing),
            Err(TopologyError::Io { .. })
        ));
    }
}
