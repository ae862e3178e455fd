//! A sysfs root: `ROOT/sys/devices/system/node/node*/{cpulist,distance}`.
//!
//! `distance` lists the node's row in ascending node-id order (as the kernel prints it);
//! `cpulist` uses Linux's list syntax. A node whose `cpulist` is missing or empty is
//! memory-only. `meminfo`'s `MemTotal` is read when present.

use std::path::Path;

use crate::error::{Result, TopologyError};
use crate::machine::{CpuSpec, Machine, NodeSpec};
use crate::source::cpulist::parse_cpulist;

/// Reads a machine from a sysfs root (`/` for this machine).
///
/// # Errors
/// [`TopologyError::Io`] when the node directory cannot be listed,
/// [`TopologyError::Sysfs`] for unparsable files, [`TopologyError::CpuList`], and every
/// validation error of [`Machine::from_specs`].
pub fn from_sysfs_root(root: impl AsRef<Path>) -> Result<Machine> {
    let root = root.as_ref();
    let dir = root.join("sys/devices/system/node");
    let entries = std::fs::read_dir(&dir).map_err(|source| TopologyError::Io {
        path: dir.clone(),
        source,
    })?;
    let mut ids: Vec<u32> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .collect();
    ids.sort_unstable();
    if ids.is_empty() {
        return Err(TopologyError::NoNodes);
    }
    let mut specs = Vec::new();
    let mut rows = Vec::new();
    for id in ids {
        let node_dir = dir.join(format!("node{id}"));
        let cpus = match optional_text(&node_dir.join("cpulist"))? {
            Some(text) => parse_cpulist(&text)?,
            None => Vec::new(),
        };
        let dist_path = node_dir.join("distance");
        if let Some(text) = optional_text(&dist_path)? {
            let row = text
                .split_whitespace()
                .map(|v| {
                    v.parse::<u64>().map_err(|e| TopologyError::Sysfs {
                        path: dist_path.clone(),
                        message: format!("{v:?}: {e}"),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            rows.push(row);
        }
        let memory_bytes = optional_text(&node_dir.join("meminfo"))?.and_then(|t| mem_total(&t));
        specs.push(NodeSpec {
            os_id: id,
            cpus: cpus.into_iter().map(|c| CpuSpec::alone(c, id)).collect(),
            memory_bytes,
        });
    }
    let matrix = if rows.is_empty() { None } else { Some(rows) };
    Machine::from_specs(root.display().to_string(), specs, matrix)
}

/// A node file that may be absent (a memory-only node has no `cpulist`): `None` when it does
/// not exist; any other failure (unreadable, not a regular file, too large) is an error
/// naming the file, never a silent default.
fn optional_text(path: &Path) -> Result<Option<String>> {
    match super::input::read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(TopologyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// `Node 0 MemTotal:       32768 kB` → bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.contains("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().rev().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn reads_a_fake_root() {
        let root = std::env::temp_dir().join(format!("zonal-sysfs-{}", std::process::id()));
        let base = root.join("sys/devices/system/node");
        for (id, cpus, row) in [
            (0, "0-1", "10 21 31"),
            (1, "2-3\n", "21 10 31"),
            (2, "\n", "31 31 10"),
        ] {
            let d = base.join(format!("node{id}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cpulist"), cpus).unwrap();
            std::fs::write(d.join("distance"), format!("{row}\n")).unwrap();
        }
        std::fs::write(
            base.join("node0/meminfo"),
            "Node 0 MemTotal:       1024 kB\n",
        )
        .unwrap();
        std::fs::create_dir_all(base.join("power")).unwrap();
        let m = from_sysfs_root(&root).unwrap();
        assert_eq!(m.nodes().len(), 3);
        assert_eq!(m.cpus().len(), 4);
        assert!(!m.nodes()[2].has_cpus());
        assert_eq!(m.nodes()[0].memory_bytes, Some(1024 * 1024));
        std::fs::write(base.join("node2/distance"), "31 x 10").unwrap();
        assert!(matches!(
            from_sysfs_root(&root),
            Err(TopologyError::Sysfs { .. })
        ));
        std::fs::remove_dir_all(&root).unwrap();
        assert!(matches!(
            from_sysfs_root(&root),
            Err(TopologyError::Io { .. })
        ));
    }
}
