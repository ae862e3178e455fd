//! Offline CPUs per node, from a sysfs root: `ROOT/sys/devices/system/cpu/online` (Linux's
//! list syntax) and the `cpuM` links of each `ROOT/sys/devices/system/node/nodeN`.
//!
//! Why the links: a node's `cpulist` (and hwloc, which reads it) lists its *online* CPUs
//! only (x86 removes a CPU from its node's mask when it goes offline, and a CPU kept offline
//! by `maxcpus=` never enters it), so a node whose CPUs are all offline looks memory-only
//! there. The `nodeN/cpuM` links are made for every *present* CPU, online or not
//! (`register_cpu_under_node`), so `links − online` are the node's offline CPUs.
//!
//! A root without `cpu/online` (an old dump, a node-only fake root) has no offline CPUs as
//! far as this reader knows: the result is empty, not an error. A malformed `online` is an
//! error naming the file.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Result, TopologyError};
use crate::source::cpulist::parse_cpulist;

/// Per node OS id, its present-but-offline CPUs (OS indexes, ascending); nodes without any
/// are left out.
///
/// # Errors
/// [`TopologyError::Sysfs`] naming `cpu/online` when it is malformed, [`TopologyError::Io`]
/// when it exists but cannot be read.
pub(crate) fn offline_cpus(root: &Path) -> Result<BTreeMap<u32, Vec<u32>>> {
    let online_path = root.join("sys/devices/system/cpu/online");
    let online = match super::input::read_text(&online_path) {
        Ok(text) => parse_cpulist(&text).map_err(|e| TopologyError::Sysfs {
            path: online_path.clone(),
            message: e.to_string(),
        })?,
        Err(TopologyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(BTreeMap::new())
        }
        Err(e) => return Err(e),
    };
    let nodes = root.join("sys/devices/system/node");
    let Ok(entries) = std::fs::read_dir(&nodes) else {
        return Ok(BTreeMap::new());
    };
    let mut out = BTreeMap::new();
    for e in entries.flatten() {
        let Some(id) = number_after(&e.file_name(), "node") else {
            continue;
        };
        let Ok(links) = std::fs::read_dir(e.path()) else {
            continue;
        };
        let mut off: Vec<u32> = links
            .flatten()
            .filter_map(|l| number_after(&l.file_name(), "cpu"))
            .filter(|c| online.binary_search(c).is_err())
            .collect();
        if !off.is_empty() {
            off.sort_unstable();
            out.insert(id, off);
        }
    }
    Ok(out)
}

/// `cpu12` → 12 for prefix `cpu` (not `cpulist`, `cpumap`).
fn number_after(name: &std::ffi::OsStr, prefix: &str) -> Option<u32> {
    name.to_str()?.strip_prefix(prefix)?.parse().ok()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn offline_cpus_are_the_links_that_are_not_online() {
        let root = std::env::temp_dir().join(format!("zonal-offline-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let cpu = root.join("sys/devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        for (node, cpus) in [(0, [0, 1]), (1, [2, 3]), (2, [4, 5])] {
            let d = root.join(format!("sys/devices/system/node/node{node}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cpulist"), "").unwrap();
            for c in cpus {
                std::fs::create_dir_all(d.join(format!("cpu{c}"))).unwrap();
            }
        }
        assert!(
            offline_cpus(&root).unwrap().is_empty(),
            "no cpu/online file"
        );
        std::fs::write(cpu.join("online"), "0-2,5\n").unwrap();
        let off = offline_cpus(&root).unwrap();
        assert_eq!(off, BTreeMap::from([(1, vec![3]), (2, vec![4])]));
        std::fs::write(cpu.join("online"), "0-x\n").unwrap();
        let e = offline_cpus(&root).unwrap_err().to_string();
        assert!(e.contains("cpu/online"), "{e}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
