//! A sysfs root: `ROOT/sys/devices/system/node/node*/{cpulist,distance}`.
//!
//! `distance` lists the node's row in ascending node-id order (as the kernel prints it):
//! one unsigned value per node directory; either every node has the file or none has (then
//! Linux's 10/20 fallback). `cpulist` uses Linux's list syntax; a node whose `cpulist` is
//! missing or empty has no CPU in the model: memory-only, or [`CpusOffline`] when its
//! `cpuM` links name CPUs that `cpu/online` does not list (`offline.rs`). `meminfo`'s
//! `MemTotal` is read when the file exists.
//!
//! [`CpusOffline`]: crate::NodeKind::CpusOffline
//! Every error names the file, and the value where one is at fault.

use std::path::{Path, PathBuf};

use crate::error::{Result, TopologyError};
use crate::machine::{CpuSpec, Machine, NodeSpec, MAX_NODES};
use crate::source::cpulist::parse_cpulist;

/// Reads a machine from a sysfs root (`/` for this machine).
///
/// # Errors
/// [`TopologyError::Io`] when the node directory cannot be listed or a file read,
/// [`TopologyError::Sysfs`] naming the file for every malformed, missing or misshapen
/// one, and, wrapped in [`TopologyError::InFile`] naming the root, every validation error
/// of [`Machine::from_specs`].
pub fn from_sysfs_root(root: impl AsRef<Path>) -> Result<Machine> {
    let root = root.as_ref();
    read_root(root).map_err(|e| e.in_file(root))
}

fn read_root(root: &Path) -> Result<Machine> {
    let (specs, matrix) = node_specs(root)?;
    let offline = super::offline::offline_cpus(root)?;
    Ok(
        Machine::from_specs(root.display().to_string(), specs, matrix)?
            .with_offline_cpus(|id| offline.get(&id).cloned().unwrap_or_default()),
    )
}

/// Distance rows, one per node in the nodes' order.
pub(crate) type Rows = Vec<Vec<u64>>;

/// The nodes of a sysfs root (ascending OS id, each CPU [`CpuSpec::alone`]) and their
/// distance rows (`None` when no node has a `distance` file), unvalidated: what
/// [`from_sysfs_root`] and this machine's discovery (`linux.rs`) build on.
///
/// # Errors
/// As [`from_sysfs_root`], without the validation of [`Machine::from_specs`] and unwrapped.
pub(crate) fn node_specs(root: &Path) -> Result<(Vec<NodeSpec>, Option<Rows>)> {
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
        return Err(TopologyError::Sysfs {
            path: dir,
            message: "no node<N> directory: no NUMA node".into(),
        });
    }
    if ids.len() > MAX_NODES {
        return Err(TopologyError::TooMany {
            what: "NUMA nodes",
            count: ids.len(),
            limit: MAX_NODES,
        });
    }
    let n = ids.len();
    let mut specs = Vec::with_capacity(n);
    let mut rows: Vec<(PathBuf, Option<Vec<u64>>)> = Vec::with_capacity(n);
    for &id in &ids {
        let node_dir = dir.join(format!("node{id}"));
        let cpulist_path = node_dir.join("cpulist");
        let cpus = match optional_text(&cpulist_path)? {
            Some(text) => parse_cpulist(&text).map_err(|e| malformed(&cpulist_path, e))?,
            None => Vec::new(),
        };
        let dist_path = node_dir.join("distance");
        let row = optional_text(&dist_path)?
            .map(|text| distance_row(&dist_path, &text, n))
            .transpose()?;
        rows.push((dist_path, row));
        let mem_path = node_dir.join("meminfo");
        let memory_bytes = optional_text(&mem_path)?
            .map(|t| mem_total(&t).map_err(|message| malformed(&mem_path, message)))
            .transpose()?;
        specs.push(NodeSpec {
            os_id: id,
            cpus: cpus.into_iter().map(|c| CpuSpec::alone(c, id)).collect(),
            memory_bytes,
        });
    }
    // Every node has its row, or none has (Linux's 10/20 fallback then): a missing file
    // among present ones is named, not reported as a misshapen matrix.
    let matrix = match rows.iter().position(|(_, r)| r.is_some()) {
        None => None,
        Some(with) => {
            if let Some((missing, _)) = rows.iter().find(|(_, r)| r.is_none()) {
                return Err(TopologyError::Sysfs {
                    path: missing.clone(),
                    message: format!(
                        "missing, while {} exists: every node needs its distance row",
                        rows[with].0.display()
                    ),
                });
            }
            Some(rows.into_iter().filter_map(|(_, r)| r).collect())
        }
    };
    Ok((specs, matrix))
}

/// A node's `distance` row: `nodes` unsigned decimals.
fn distance_row(path: &Path, text: &str, nodes: usize) -> Result<Vec<u64>> {
    let mut row = Vec::with_capacity(nodes);
    for (k, v) in text.split_whitespace().enumerate() {
        if k >= nodes {
            break;
        }
        let d = v.parse::<u64>().map_err(|e| {
            let why = if v.starts_with('-') {
                "is negative".to_owned()
            } else {
                format!("is not an unsigned integer ({e})")
            };
            malformed(path, format!("value {} of the row, {v:?}, {why}", k + 1))
        })?;
        row.push(d);
    }
    let found = text.split_whitespace().count();
    if found != nodes {
        return Err(malformed(
            path,
            format!("{found} distances, expected {nodes} (one per node directory)"),
        ));
    }
    Ok(row)
}

pub(crate) fn malformed(path: &Path, message: impl std::fmt::Display) -> TopologyError {
    TopologyError::Sysfs {
        path: path.into(),
        message: message.to_string(),
    }
}

/// A node file that may be absent (a memory-only node has no `cpulist`): `None` when it does
/// not exist; any other failure (unreadable, not a regular file, too large) is an error
/// naming the file, never a silent default.
pub(crate) fn optional_text(path: &Path) -> Result<Option<String>> {
    match super::input::read_text(path) {
        Ok(text) => Ok(Some(text)),
        Err(TopologyError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// `Node 0 MemTotal:       32768 kB` → bytes; a meminfo without a readable `MemTotal` line is
/// an error, not an unknown size.
fn mem_total(meminfo: &str) -> std::result::Result<u64, String> {
    let line = meminfo
        .lines()
        .find(|l| l.contains("MemTotal:"))
        .ok_or_else(|| "no MemTotal line".to_owned())?;
    let value = line.split("MemTotal:").nth(1).unwrap_or("").trim();
    let kb = value
        .strip_suffix("kB")
        .map(str::trim)
        .and_then(|v| v.parse::<u64>().ok())
        .ok_or_else(|| format!("MemTotal {value:?} is not a number of kB"))?;
    kb.checked_mul(1024)
        .ok_or_else(|| format!("MemTotal {value:?} is more than 2^64 bytes"))
}

#[cfg(test)]
mod test {
    use super::*;

    /// A fake root with `(id, cpulist, distance)` nodes (`None`: no such file).
    fn root(name: &str, nodes: &[(u32, &str, Option<&str>)]) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("zonal-sysfs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for &(id, cpus, row) in nodes {
            let d = root.join(format!("sys/devices/system/node/node{id}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cpulist"), cpus).unwrap();
            if let Some(row) = row {
                std::fs::write(d.join("distance"), row).unwrap();
            }
        }
        root
    }

    /// The error's message names every needle.
    #[track_caller]
    fn refused(root: &Path, needles: &[&str]) {
        let e = from_sysfs_root(root).expect_err("refused");
        let msg = e.to_string();
        for n in needles {
            assert!(msg.contains(n), "{msg:?} does not name {n:?}");
        }
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn broken_dumps_name_the_file_and_the_value() {
        let r = root(
            "len",
            &[(0, "0", Some("10 20")), (1, "1", Some("20 10 30"))],
        );
        refused(&r, &["node1/distance", "3 distances, expected 2"]);
        let r = root("missing", &[(0, "0", Some("10 20")), (1, "1", None)]);
        refused(&r, &["node1/distance", "missing", "node0/distance"]);
        let r = root(
            "negative",
            &[(0, "0", Some("10 -5")), (1, "1", Some("-5 10"))],
        );
        refused(&r, &["node0/distance", "\"-5\"", "negative"]);
        let r = root("word", &[(0, "0", Some("10 far")), (1, "1", Some("20 10"))]);
        refused(&r, &["node0/distance", "\"far\""]);
        let r = root("cpulist", &[(0, "0-x", Some("10"))]);
        refused(&r, &["node0/cpulist", "0-x"]);
        let r = root(
            "range",
            &[(0, "0", Some("10 300")), (1, "1", Some("300 10"))],
        );
        refused(&r, &["zonal-sysfs", "300"]);
        let r = root("mem", &[(0, "0", Some("10"))]);
        let meminfo = r.join("sys/devices/system/node/node0/meminfo");
        std::fs::write(&meminfo, "Node 0 MemTotal:       lots kB\n").unwrap();
        refused(&r, &["node0/meminfo", "lots"]);
        let r = root("none", &[]);
        std::fs::create_dir_all(r.join("sys/devices/system/node/power")).unwrap();
        refused(&r, &["sys/devices/system/node", "no node"]);
    }

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
