//! Cores and last-level caches of this machine's CPUs from sysfs
//! (`ROOT/sys/devices/system/cpu/cpuN/{topology,cache}`), numbered as hwloc numbers them,
//! so that discovery through sysfs (`linux.rs`) gives the [`CpuSpec`]s hwloc's does
//! (`hwloc.rs`).
//!
//! - A CPU's core is `topology/core_cpus_list` (`thread_siblings_list` on kernels before
//!   5.7); its id is hwloc's logical index of the `Core`: the rank of the core in hwloc's
//!   tree order, where every object's children are sorted by their first CPU. That order
//!   sorts cores by the first CPUs of their enclosing sets, outermost first: package
//!   (`package_cpus_list`, formerly `core_siblings_list`), die, cluster, the data and
//!   unified caches (`cache/indexK/shared_cpu_list`; instruction caches are not in hwloc's
//!   tree), then the core itself.
//! - The cache group is the outermost data or unified cache (the highest `level`):
//!   `level << 24 | rank`, the rank being hwloc's logical index among the caches of that
//!   level, in the same tree order. A CPU without any cache gets `1 << 31 | node`, as from
//!   hwloc.
//! - A CPU without a `topology` directory is its own core. Files that are absent are
//!   skipped; a malformed one is a [`TopologyError::Sysfs`] naming it and its value.
//!
//! Within one kind (packages, caches of a level, cores) the sets partition the CPUs, so a
//! set is known by its first CPU and its size; nothing larger than that is kept per CPU.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::Result;
use crate::machine::NodeSpec;
use crate::source::cpulist::parse_cpulist;
use crate::source::sysfs::{malformed, optional_text};

/// A set of CPUs as hwloc orders it: its size and first CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    len: usize,
    first: u32,
}

/// What sysfs says about one CPU.
struct Cpu {
    /// Every enclosing set but the core: package, die, cluster, data and unified caches.
    outer: Vec<Span>,
    core: Span,
    /// The outermost data or unified cache: its level and span.
    llc: Option<(u32, Span)>,
    /// Every data or unified cache: `(level, span)`.
    caches: Vec<(u32, Span)>,
}

/// Replaces the cores and cache groups of `specs` (as [`CpuSpec::alone`](crate::CpuSpec::alone)
/// left them) with hwloc's numbering, read from the sysfs `root`.
///
/// # Errors
/// [`TopologyError::Sysfs`](crate::TopologyError::Sysfs) naming a malformed file,
/// [`TopologyError::Io`](crate::TopologyError::Io) naming one that exists but cannot be read.
pub(crate) fn number_cores_and_caches(root: &Path, specs: &mut [NodeSpec]) -> Result<()> {
    let base = root.join("sys/devices/system/cpu");
    let mut cpus: BTreeMap<u32, Cpu> = BTreeMap::new();
    for cpu in specs.iter().flat_map(|n| n.cpus.iter().map(|c| c.os_index)) {
        cpus.insert(cpu, read_cpu(&base, cpu)?);
    }
    // Tree-order keys: the first CPUs of the enclosing sets, outermost first.
    let key = |c: &Cpu, inner: Span| -> Vec<u32> {
        let mut outer: Vec<Span> = c
            .outer
            .iter()
            .copied()
            .filter(|s| s.len >= inner.len)
            .collect();
        outer.sort_by(|a, b| b.len.cmp(&a.len).then(a.first.cmp(&b.first)));
        outer
            .iter()
            .map(|s| s.first)
            .chain(std::iter::once(inner.first))
            .collect()
    };
    // Ranks in tree order (a BTreeSet iterates its keys sorted).
    let ranked = |set: BTreeSet<Vec<u32>>| -> BTreeMap<Vec<u32>, u32> {
        set.into_iter().zip(0u32..).collect()
    };
    let cores = ranked(cpus.values().map(|c| key(c, c.core)).collect());
    let mut by_level: BTreeMap<u32, BTreeSet<Vec<u32>>> = BTreeMap::new();
    for c in cpus.values() {
        for &(level, span) in &c.caches {
            by_level.entry(level).or_default().insert(key(c, span));
        }
    }
    let caches: BTreeMap<u32, BTreeMap<Vec<u32>, u32>> = by_level
        .into_iter()
        .map(|(level, set)| (level, ranked(set)))
        .collect();
    let rank =
        |set: &BTreeMap<Vec<u32>, u32>, k: &Vec<u32>| set.get(k).copied().unwrap_or(u32::MAX);
    for node in specs.iter_mut() {
        for spec in &mut node.cpus {
            let Some(c) = cpus.get(&spec.os_index) else {
                continue;
            };
            spec.core = rank(&cores, &key(c, c.core));
            spec.cache_group = match c.llc {
                Some((level, span)) => {
                    let r = caches.get(&level).map_or(0, |set| rank(set, &key(c, span)));
                    level << 24 | r
                }
                None => 1 << 31 | node.os_id,
            };
        }
    }
    Ok(())
}

fn read_cpu(base: &Path, cpu: u32) -> Result<Cpu> {
    let dir = base.join(format!("cpu{cpu}"));
    let topo = dir.join("topology");
    let list = |names: &[&str]| -> Result<Option<Span>> {
        for name in names {
            let path = topo.join(name);
            if let Some(text) = optional_text(&path)? {
                return span(&path, &text).map(Some);
            }
        }
        Ok(None)
    };
    let alone = Span { len: 1, first: cpu };
    let core = list(&["core_cpus_list", "thread_siblings_list"])?.unwrap_or(alone);
    let mut outer = Vec::new();
    for names in [
        &["package_cpus_list", "core_siblings_list"][..],
        &["die_cpus_list"],
        &["cluster_cpus_list"],
    ] {
        outer.extend(list(names)?);
    }
    let mut caches = Vec::new();
    let cache_dir = dir.join("cache");
    if let Ok(entries) = std::fs::read_dir(&cache_dir) {
        let mut indexes: Vec<u32> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("index")?.parse().ok())
            .collect();
        indexes.sort_unstable();
        for k in indexes {
            let index = cache_dir.join(format!("index{k}"));
            let type_path = index.join("type");
            let Some(kind) = optional_text(&type_path)? else {
                continue;
            };
            match kind.trim() {
                "Data" | "Unified" => {}
                "Instruction" => continue,
                other => {
                    return Err(malformed(
                        &type_path,
                        format!("cache type {other:?} is not Data, Instruction or Unified"),
                    ))
                }
            }
            let level_path = index.join("level");
            let shared_path = index.join("shared_cpu_list");
            let (Some(level_text), Some(shared)) =
                (optional_text(&level_path)?, optional_text(&shared_path)?)
            else {
                continue;
            };
            let Some(level) = level_text
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|l| (1..=255).contains(l))
            else {
                return Err(malformed(
                    &level_path,
                    format!(
                        "cache level {:?} is not a number in 1..=255",
                        level_text.trim()
                    ),
                ));
            };
            let mut s = span(&shared_path, &shared)?;
            if s.len == 0 {
                // An empty share list is this CPU's own cache.
                s = alone;
            }
            caches.push((level, s));
        }
    }
    let llc = caches.iter().copied().max_by_key(|&(level, _)| level);
    outer.extend(caches.iter().map(|&(_, s)| s));
    Ok(Cpu {
        outer,
        core,
        llc,
        caches,
    })
}

fn span(path: &Path, text: &str) -> Result<Span> {
    let cpus = parse_cpulist(text).map_err(|e| malformed(path, e))?;
    Ok(Span {
        len: cpus.len(),
        first: cpus.first().copied().unwrap_or(u32::MAX),
    })
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::machine::CpuSpec;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// Two packages interleaved (0,2 | 1,3), two SMT threads per core, an L3 per package:
    /// hwloc's tree order puts package 0's core (CPUs 0, 2) before package 1's (1, 3).
    #[test]
    fn cores_and_caches_take_hwlocs_tree_order() {
        let root = std::env::temp_dir().join(format!("zonal-cputopo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let base = root.join("sys/devices/system/cpu");
        for cpu in 0..4u32 {
            let (pkg, core) = if cpu % 2 == 0 {
                ("0,2", "0,2")
            } else {
                ("1,3", "1,3")
            };
            let d = base.join(format!("cpu{cpu}"));
            write(&d.join("topology/package_cpus_list"), pkg);
            write(&d.join("topology/core_cpus_list"), core);
            for (k, level, kind, shared) in [
                (0, "1", "Data", core),
                (1, "1", "Instruction", core),
                (2, "3", "Unified", pkg),
            ] {
                let i = d.join(format!("cache/index{k}"));
                write(&i.join("level"), level);
                write(&i.join("type"), kind);
                write(&i.join("shared_cpu_list"), shared);
            }
        }
        let mut specs = vec![NodeSpec {
            os_id: 0,
            cpus: (0..4).map(|c| CpuSpec::alone(c, 0)).collect(),
            memory_bytes: None,
        }];
        number_cores_and_caches(&root, &mut specs).unwrap();
        let got: Vec<(u32, u32)> = specs[0]
            .cpus
            .iter()
            .map(|c| (c.core, c.cache_group))
            .collect();
        assert_eq!(
            got,
            [
                (0, 3 << 24),
                (1, 3 << 24 | 1),
                (0, 3 << 24),
                (1, 3 << 24 | 1)
            ]
        );

        write(&base.join("cpu1/cache/index2/level"), "three");
        let e = number_cores_and_caches(&root, &mut specs)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cpu1/cache/index2/level") && e.contains("three"),
            "{e}"
        );
        write(&base.join("cpu1/cache/index2/level"), "3");
        write(&base.join("cpu3/topology/core_cpus_list"), "1-x");
        let e = number_cores_and_caches(&root, &mut specs)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cpu3/topology/core_cpus_list") && e.contains("1-x"),
            "{e}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
