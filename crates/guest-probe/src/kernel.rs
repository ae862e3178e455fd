//! The kernel's view of this process, read from `/proc` and `/sys`: each thread's name,
//! allowed CPUs and the CPU it last ran on; which node each CPU belongs to; the memory
//! policy of each mapping (`numa_maps`).

use std::collections::BTreeMap;
use std::fs;

/// One thread of this process as `/proc/self/task/TID` describes it.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct ThreadView {
    pub(crate) tid: u32,
    /// `comm` (at most 15 bytes).
    pub(crate) name: String,
    /// `Cpus_allowed_list`, expanded.
    pub(crate) allowed: Vec<u32>,
    /// Field 39 of `stat`: the CPU it last ran on.
    pub(crate) last_cpu: Option<u32>,
}

/// Every thread of this process.
pub(crate) fn threads() -> Result<Vec<ThreadView>, String> {
    let dir = fs::read_dir("/proc/self/task").map_err(|e| format!("/proc/self/task: {e}"))?;
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let base = entry.path();
        // A thread may exit while we read: skip it rather than fail.
        let Ok(name) = fs::read_to_string(base.join("comm")) else {
            continue;
        };
        let Ok(status) = fs::read_to_string(base.join("status")) else {
            continue;
        };
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .ok_or_else(|| format!("{}: no Cpus_allowed_list", base.display()))?;
        let stat = fs::read_to_string(base.join("stat")).unwrap_or_default();
        out.push(ThreadView {
            tid,
            name: name.trim().to_owned(),
            allowed: parse_list(list.trim())?,
            last_cpu: last_cpu(&stat),
        });
    }
    out.sort_by_key(|t| t.tid);
    Ok(out)
}

/// The threads named `{prefix}{i}`, by `i`.
pub(crate) fn workers(prefix: &str) -> Result<Vec<(usize, ThreadView)>, String> {
    let mut v: Vec<(usize, ThreadView)> = threads()?
        .into_iter()
        .filter_map(|t| Some((t.name.strip_prefix(prefix)?.parse().ok()?, t)))
        .collect();
    v.sort_by_key(|(i, _)| *i);
    Ok(v)
}

/// Linux's list syntax (`0-3,8,10-11`).
pub(crate) fn parse_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| {
            t.parse::<u32>()
                .map_err(|e| format!("cpu list {s:?}: {t:?}: {e}"))
        };
        match part.split_once('-') {
            Some((a, b)) => out.extend(num(a)?..=num(b)?),
            None => out.push(num(part)?),
        }
    }
    Ok(out)
}

/// Field 39 (`processor`) of a `stat` line; the command name (field 2) may hold spaces, so
/// count from the closing parenthesis.
fn last_cpu(stat: &str) -> Option<u32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// A sysfs file's trimmed text.
pub(crate) fn read(path: &str) -> Result<String, String> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| format!("{path}: {e}"))
}

/// Writes a sysfs file.
pub(crate) fn write(path: &str, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("writing {value:?} to {path}: {e}"))
}

/// The kernel's CPU → node map (OS ids), from `/sys/devices/system/node/node*/cpulist`.
#[derive(Clone, Debug, Default)]
pub(crate) struct CpuNodes {
    node_of: BTreeMap<u32, u32>,
}

impl CpuNodes {
    /// Reads the map from sysfs.
    pub(crate) fn read() -> Result<Self, String> {
        Self::read_from("/sys/devices/system/node")
    }

    fn read_from(root: &str) -> Result<Self, String> {
        let dir = fs::read_dir(root).map_err(|e| format!("{root}: {e}"))?;
        let mut node_of = BTreeMap::new();
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("node"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let path = format!("{root}/node{id}/cpulist");
            for cpu in parse_list(&read(&path)?)? {
                node_of.insert(cpu, id);
            }
        }
        if node_of.is_empty() {
            return Err(format!("{root}: no node lists a CPU"));
        }
        Ok(Self { node_of })
    }

    /// The node (OS id) of CPU `cpu` (OS index), if the kernel lists it.
    pub(crate) fn node_of(&self, cpu: u32) -> Option<u32> {
        self.node_of.get(&cpu).copied()
    }

    /// The node (OS id) of the CPU the calling thread runs on now (`sched_getcpu`), with that
    /// CPU.
    pub(crate) fn here(&self) -> (Option<u32>, Option<u32>) {
        let cpu = zonal_runtime::os::current_cpu();
        (cpu, cpu.and_then(|c| self.node_of(c)))
    }
}

/// One mapping of this process: its address range (`/proc/self/maps`) and its memory
/// policy as `/proc/self/numa_maps` prints it (`default`, `bind:1`, `prefer:2`, …).
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct Mapping {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) policy: String,
    /// The rest of the `numa_maps` line (file, `anon=`, `N<node>=` page counts, …).
    pub(crate) detail: String,
}

/// Every mapping of this process with its memory policy. `maps` and `numa_maps` are read one
/// after the other, so a mapping made or removed in between (by another thread) is left out.
pub(crate) fn mappings() -> Result<Vec<Mapping>, String> {
    let maps = read("/proc/self/maps")?;
    let numa = read("/proc/self/numa_maps")?;
    let mut ends = BTreeMap::new();
    for line in maps.lines() {
        let Some((range, _)) = line.split_once(' ') else {
            continue;
        };
        let Some((a, b)) = range.split_once('-') else {
            continue;
        };
        if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
            ends.insert(a, b);
        }
    }
    let mut out = Vec::new();
    for line in numa.lines() {
        let mut fields = line.splitn(3, ' ');
        let (Some(start), Some(policy)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(start) = u64::from_str_radix(start, 16) else {
            continue;
        };
        let Some(&end) = ends.get(&start) else {
            continue;
        };
        out.push(Mapping {
            start,
            end,
            policy: policy.to_owned(),
            detail: fields.next().unwrap_or("").to_owned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn lists_and_stat_lines_parse() {
        assert_eq!(parse_list("0-2,5,7-8").unwrap(), vec![0, 1, 2, 5, 7, 8]);
        assert!(parse_list("0-x").is_err());
        let stat = "12 (zw 1) S 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1 1 1 1 1 1 1 \
                    0 0 0 0 0 0 0 17 3 0 0 0 0 0";
        assert_eq!(last_cpu(stat), Some(3));
    }

    #[test]
    fn this_process_has_mappings_and_cpus_on_nodes() {
        let maps = mappings().unwrap();
        assert!(maps.iter().all(|m| m.start < m.end && !m.policy.is_empty()));
        assert!(!maps.is_empty());
        // Machines without NUMA support in the kernel have no node directory.
        if let Ok(nodes) = CpuNodes::read() {
            let here = nodes.here();
            assert!(here.0.is_none() || here.1.is_some());
        }
    }

    #[test]
    fn this_process_has_a_main_thread() {
        let t = threads().unwrap();
        assert!(t.iter().any(|t| !t.allowed.is_empty()));
    }
}
