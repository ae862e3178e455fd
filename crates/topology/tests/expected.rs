//! Behaviour: our hierarchy matches what Linux's `sched_init_numa` derives from real machines.
//!
//! Every machine in `tests/data/` (real machines from hwloc's test suite; `SOURCE.md`
//! there says where each comes from and carries hwloc's licence; `ZONAL_TOPOLOGIES_DIR`
//! overrides the folder) is loaded the way the CLI loads it — `.xml` through hwloc, `.json`
//! through the `--nodes` reader — and summarised by the same [`TopologyReport`] the CLI
//! prints. `levels`, `spans` and `cpuless_nodes` must equal `expected.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use zonal_topology::{from_nodes_file, CpuId, Machine, Topology, TopologyError, TopologyReport};

const ENV_DIR: &str = "ZONAL_TOPOLOGIES_DIR";

/// The evidence directory: `tests/data/`, or `ZONAL_TOPOLOGIES_DIR`. It must hold
/// `expected.json`: a missing folder fails the tests, it never skips them.
fn topologies_dir() -> Option<PathBuf> {
    let dir = std::env::var_os(ENV_DIR).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        PathBuf::from,
    );
    assert!(
        dir.join("expected.json").is_file(),
        "the topology evidence is missing: no expected.json in {}",
        dir.display()
    );
    Some(dir)
}

/// Loads a machine as the CLI would; `None` for an XML file when hwloc is compiled out.
fn load(path: &Path) -> Option<Result<Machine, TopologyError>> {
    match path.extension().and_then(|e| e.to_str()) {
        #[cfg(feature = "hwloc")]
        Some("xml") => Some(zonal_topology::from_xml_file(path)),
        #[cfg(not(feature = "hwloc"))]
        Some("xml") => {
            eprintln!(
                "{}: skipped, built without the hwloc feature",
                path.display()
            );
            None
        }
        Some("json") => Some(from_nodes_file(path)),
        _ => panic!("{}: unknown machine format", path.display()),
    }
}

fn expected_entries(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("read expected.json");
    let v: Value = serde_json::from_str(&text).expect("expected.json parses");
    v.as_array().expect("expected.json is a list").clone()
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| u32::try_from(x.as_u64().expect("a number")).expect("fits u32"))
        .collect()
}

fn spans(v: &Value) -> BTreeMap<String, Vec<Vec<u32>>> {
    v.as_object()
        .expect("spans is an object")
        .iter()
        .map(|(k, rows)| {
            (
                k.clone(),
                rows.as_array().expect("rows").iter().map(u32s).collect(),
            )
        })
        .collect()
}

/// Loads every machine of `expected.json` and calls `check` on it.
fn for_each_machine(mut check: impl FnMut(&str, &Value, &Topology)) {
    let Some(dir) = topologies_dir() else { return };
    let entries = expected_entries(&dir);
    assert!(!entries.is_empty(), "expected.json lists no machine");
    for entry in &entries {
        let file = entry["file"].as_str().expect("file name");
        let Some(machine) = load(&dir.join(file)) else {
            continue;
        };
        let machine = machine.unwrap_or_else(|e| panic!("{file}: {e}"));
        check(file, entry, &Topology::new(machine));
    }
}

#[test]
fn every_machine_file_is_listed() {
    let Some(dir) = topologies_dir() else { return };
    let listed: Vec<String> = expected_entries(&dir)
        .iter()
        .map(|e| e["file"].as_str().expect("file").to_owned())
        .collect();
    for entry in std::fs::read_dir(&dir).expect("list the evidence directory") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let is_machine = name.ends_with(".xml") || name.ends_with(".json");
        if is_machine && name != "expected.json" {
            assert!(listed.contains(&name), "{name} has no expected.json entry");
        }
    }
}

#[test]
fn levels_and_spans_match_linux() {
    let mut seen = 0;
    for_each_machine(|file, entry, t| {
        let report = TopologyReport::new(t);
        assert_eq!(
            report.node_ids,
            u32s(&entry["node_ids"]),
            "{file}: node_ids"
        );
        assert_eq!(report.levels, u32s(&entry["levels"]), "{file}: levels");
        assert_eq!(report.spans, spans(&entry["spans"]), "{file}: spans");
        assert_eq!(report.mal_count, report.levels.len(), "{file}: M");
        let cpuless = entry.get("cpuless_nodes").map_or_else(Vec::new, u32s);
        assert_eq!(report.cpuless_nodes, cpuless, "{file}: cpuless nodes");
        if let Some(n) = entry.get("nodes").and_then(Value::as_u64) {
            assert_eq!(report.node_ids.len() as u64, n, "{file}: node count");
        }
        seen += 1;
    });
    if seen > 0 {
        eprintln!("checked levels and spans of {seen} real machines");
    }
}

/// The numbers between `open` and the next `</`, for each occurrence of `open` in `block`.
fn numbers_in(block: &str, open: &str) -> Vec<u64> {
    block
        .match_indices(open)
        .flat_map(|(at, _)| {
            let body = &block[at..];
            let body = &body[body.find('>').expect("tag end") + 1..];
            let body = &body[..body.find("</").expect("closing tag")];
            body.split_whitespace()
                .map(|x| x.parse::<u64>().expect("a number"))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The `NUMALatency` matrix of an hwloc XML export, read naively: the OS ids in stored
/// order, and `(os_i, os_j) -> d`.
fn raw_xml_matrix(xml: &str) -> (Vec<u32>, BTreeMap<(u32, u32), u32>) {
    let start = xml
        .find("<distances2 type=\"NUMANode\"")
        .expect("a NUMANode matrix");
    let block = &xml[start..];
    let block = &block[..block.find("</distances2>").expect("end of matrix")];
    assert!(
        block.contains("name=\"NUMALatency\""),
        "first matrix is NUMALatency"
    );
    let ids: Vec<u32> = numbers_in(block, "<indexes")
        .into_iter()
        .map(|x| u32::try_from(x).expect("os id"))
        .collect();
    let values = numbers_in(block, "<u64values");
    assert_eq!(values.len(), ids.len() * ids.len(), "matrix size");
    let mut out = BTreeMap::new();
    for (k, &v) in values.iter().enumerate() {
        let key = (ids[k / ids.len()], ids[k % ids.len()]);
        out.insert(key, u32::try_from(v).expect("distance"));
    }
    (ids, out)
}

#[test]
fn xml_matrices_are_placed_by_os_index() {
    // 16amd64-4distances.xml stores its matrix in the order 1 0 2 5 4 3 6 7; hwloc's
    // loader must place every value by OS index, whatever the stored order.
    let Some(dir) = topologies_dir() else { return };
    let mut out_of_order = 0;
    for_each_machine(|file, _, t| {
        if !file.ends_with(".xml") {
            return;
        }
        let xml = std::fs::read_to_string(dir.join(file)).expect("read xml");
        let (stored, raw) = raw_xml_matrix(&xml);
        if !stored.windows(2).all(|w| w[0] < w[1]) {
            out_of_order += 1;
        }
        let r = TopologyReport::new(t);
        for (a, &i) in r.node_ids.iter().enumerate() {
            for (b, &j) in r.node_ids.iter().enumerate() {
                assert_eq!(r.distances[a][b], raw[&(i, j)], "{file}: d({i}, {j})");
            }
        }
    });
    assert!(
        out_of_order > 0 || cfg!(not(feature = "hwloc")),
        "no XML stores its matrix out of order: the check proves nothing"
    );
}

#[test]
fn gpu_memory_nodes_take_no_part() {
    for_each_machine(|file, entry, t| {
        if entry.get("cpuless_nodes").is_none() {
            return;
        }
        let r = TopologyReport::new(t);
        for (k, &id) in r.node_ids.iter().enumerate() {
            if r.cpuless_nodes.contains(&id) {
                assert!(r.node_cpus[k].is_empty(), "{file}: node {id} has CPUs");
                for rows in r.spans.values() {
                    assert!(rows[k].is_empty(), "{file}: cpuless node {id} has a span");
                }
                assert!(
                    r.zones[k].is_empty(),
                    "{file}: cpuless node {id} has a zone"
                );
            }
        }
        // No victim ever sits on a memory-only node.
        for c in 0..t.cpu_count() {
            for v in t.victims(CpuId::new(c)) {
                assert!(t.machine().node(t.node_of(v.cpu)).has_cpus(), "{file}");
            }
        }
    });
}

#[test]
fn zones_and_victim_orders_are_sane() {
    for_each_machine(|file, _, t| {
        let m = t.mal_count();
        let s = t.zone_depth();
        let want = if m >= 4 { m / 2 + 1 } else { m };
        assert_eq!(s, want, "{file}: zone depth for M = {m}");
        for c in 0..t.cpu_count() {
            let cpu = CpuId::new(c);
            let home = t.node_of(cpu);
            let all = t.victims(cpu);
            assert_eq!(all.len(), t.cpu_count() - 1, "{file}: cpu {c}");
            let mut seen = vec![false; t.cpu_count()];
            seen[c] = true;
            for v in all {
                assert!(
                    !seen[v.cpu.index()],
                    "{file}: cpu {c} lists {} twice",
                    v.cpu
                );
                seen[v.cpu.index()] = true;
                assert_eq!(v.level, t.level_between(cpu, v.cpu), "{file}: cpu {c}");
            }
            assert!(
                all.windows(2).all(|w| w[0].level <= w[1].level),
                "{file}: cpu {c}: victims not nearest first"
            );
            let zone = t.zone_victims(cpu);
            assert!(zone.iter().all(|v| t.in_zone(cpu, t.node_of(v.cpu))));
            assert!(all[zone.len()..]
                .iter()
                .all(|v| !t.in_zone(cpu, t.node_of(v.cpu))));
            // The own node is always in the zone, with every CPU of it.
            assert!(t.in_zone(cpu, home), "{file}: cpu {c}");
            let own = t.cpus_of(home).len() - 1;
            assert!(zone.len() >= own, "{file}: cpu {c}");
        }
    });
}
