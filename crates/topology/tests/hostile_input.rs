//! Hostile inputs to the machine readers (issue: no panic, crash or hang; a typed error that
//! names the input). One case per class this crate owns:
//! - not a regular file: a FIFO (which would block a reader forever), a directory, a device;
//! - too large: a file past `MAX_INPUT_BYTES` (sparse: nothing is written);
//! - XML nested deeper than `MAX_XML_DEPTH` (which overflowed hwloc's parser's stack);
//! - a sysfs node file that exists but cannot be read as a file (no silent memory-only node).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[cfg(feature = "hwloc")]
use zonal_topology::MAX_XML_DEPTH;
use zonal_topology::{from_nodes_file, from_sysfs_root, TopologyError, MAX_INPUT_BYTES};

/// A fresh scratch directory for one test, removed again when dropped (a run leaves nothing
/// in the temporary directory).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("zonal-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    Scratch(dir)
}

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

fn not_a_file(r: Result<zonal_topology::Machine, TopologyError>, path: &Path, kind: &str) {
    match r {
        Err(TopologyError::NotAFile { path: p, kind: k }) => {
            assert_eq!(p, path);
            assert_eq!(k, kind);
        }
        other => panic!("{}: {other:?}", path.display()),
    }
}

#[test]
fn fifos_directories_and_devices_are_refused_without_blocking() {
    let dir = scratch("kinds");
    let fifo = dir.join("machine.json");
    mkfifo(&fifo);
    not_a_file(from_nodes_file(&fifo), &fifo, "a FIFO");
    not_a_file(from_nodes_file(&dir), &dir, "a directory");
    not_a_file(
        from_nodes_file("/dev/zero"),
        Path::new("/dev/zero"),
        "a character device",
    );
    #[cfg(feature = "hwloc")]
    {
        let xml = dir.join("machine.xml");
        mkfifo(&xml);
        not_a_file(zonal_topology::from_xml_file(&xml), &xml, "a FIFO");
    }
    let msg = from_nodes_file(&fifo).unwrap_err().to_string();
    assert!(
        msg.contains("machine.json") && msg.contains("FIFO"),
        "{msg}"
    );
}

#[test]
fn files_past_the_size_limit_are_refused_before_reading() {
    let dir = scratch("large");
    let big = dir.join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(MAX_INPUT_BYTES + 1).unwrap();
    match from_nodes_file(&big) {
        Err(TopologyError::TooLarge { bytes, limit, .. }) => {
            assert_eq!((bytes, limit), (MAX_INPUT_BYTES + 1, MAX_INPUT_BYTES));
        }
        other => panic!("{other:?}"),
    }
}

#[cfg(feature = "hwloc")]
#[test]
fn deeply_nested_xml_is_refused_before_hwloc_sees_it() {
    let dir = scratch("deep");
    let deep = dir.join("deep.xml");
    let depth = 100_000;
    std::fs::write(
        &deep,
        format!(
            "<?xml version=\"1.0\"?>{}{}",
            "<object>".repeat(depth),
            "</object>".repeat(depth)
        ),
    )
    .unwrap();
    match zonal_topology::from_xml_file(&deep) {
        Err(TopologyError::XmlTooDeep {
            depth: d,
            limit,
            path,
        }) => {
            assert_eq!((d, limit, path), (depth, MAX_XML_DEPTH, deep));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unreadable_sysfs_cpulist_is_an_error_not_a_memory_only_node() {
    let root = scratch("sysfs");
    let node = root.join("sys/devices/system/node/node0");
    std::fs::create_dir_all(&node).unwrap();
    std::fs::write(node.join("distance"), "10\n").unwrap();
    // A cpulist that exists but is no file.
    std::fs::create_dir_all(node.join("cpulist")).unwrap();
    not_a_file(from_sysfs_root(&root), &node.join("cpulist"), "a directory");
    // A FIFO as the distance file does not block.
    std::fs::remove_dir(node.join("cpulist")).unwrap();
    std::fs::write(node.join("cpulist"), "0-1\n").unwrap();
    std::fs::remove_file(node.join("distance")).unwrap();
    mkfifo(&node.join("distance"));
    not_a_file(from_sysfs_root(&root), &node.join("distance"), "a FIFO");
    // A missing cpulist is a memory-only node (as Linux shows one), not an error.
    std::fs::remove_file(node.join("distance")).unwrap();
    std::fs::write(node.join("distance"), "10\n").unwrap();
    let n1 = root.join("sys/devices/system/node/node1");
    std::fs::create_dir_all(&n1).unwrap();
    std::fs::write(node.join("distance"), "10 20\n").unwrap();
    std::fs::write(n1.join("distance"), "20 10\n").unwrap();
    let m = from_sysfs_root(&root).unwrap();
    assert_eq!(m.nodes().len(), 2);
}

#[test]
fn machines_past_the_cpu_and_node_limits_are_refused_before_allocating() {
    use zonal_topology::{parse_nodes_json, presets, MAX_CPUS, MAX_NODES};
    // A cpulist of 100,001 CPUs: refused while parsing, not after building victim tables.
    let huge = r#"{"nodes": [{"id": 0, "cpulist": "0-100000", "distance": [10]}]}"#;
    match parse_nodes_json(huge, "huge", "huge") {
        Err(TopologyError::CpuList { message, .. }) => {
            assert!(message.contains(&MAX_CPUS.to_string()), "{message}")
        }
        other => panic!("{other:?}"),
    }
    // Generators of 2^20 nodes: refused before their node × node matrix.
    for r in [
        presets::hierarchical_machine(&[1 << 10, 1 << 10], 1),
        presets::mesh_machine(1 << 10, 1 << 10, false, 1),
    ] {
        match r {
            Err(TopologyError::TooMany { what, count, limit }) => {
                assert_eq!((what, count, limit), ("NUMA nodes", 1 << 20, MAX_NODES));
            }
            other => panic!("{other:?}"),
        }
    }
    // 100,000 nodes without a matrix: refused before the fallback matrix.
    let nodes: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"id": {i}, "cpus": []}}"#))
        .collect();
    let doc = format!(r#"{{"nodes": [{}]}}"#, nodes.join(","));
    match parse_nodes_json(&doc, "many", "many") {
        Err(TopologyError::TooMany { what, count, .. }) => {
            assert_eq!((what, count), ("NUMA nodes", 100_000));
        }
        other => panic!("{other:?}"),
    }
    // Just inside the limits still builds.
    assert!(presets::hierarchical_machine(&[16, 16], 16).is_ok());
}

#[test]
fn node_dump_cpus_take_the_documented_cpulist_form_and_must_agree() {
    use zonal_topology::parse_nodes_json;
    let m = parse_nodes_json(
        r#"{"nodes": [{"id": 0, "cpus": "0-1", "distance": [10]}]}"#,
        "s",
        "s",
    )
    .unwrap();
    assert_eq!(m.cpus().len(), 2);
    match parse_nodes_json(
        r#"{"nodes": [{"id": 0, "cpus": [0], "cpulist": "0-1", "distance": [10]}]}"#,
        "d",
        "d",
    ) {
        Err(TopologyError::CpuList { message, .. }) => assert!(message.contains("node 0")),
        other => panic!("{other:?}"),
    }
}

/// A node dump of `n` nodes with one CPU each: node 0 is `11 + (j − 1) % 245` from node
/// `j` (every distance of 11..=255 once `n` > 245), every other pair `far` apart.
fn fan_dump(n: usize, far: u32) -> String {
    let mut out = String::with_capacity(n * n * 3 + n * 40);
    out.push_str("{\"nodes\": [");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\n{{\"id\": {i}, \"cpus\": [{i}], \"distance\": [");
        for j in 0..n {
            let d = match (i.min(j), i.max(j)) {
                (a, b) if a == b => 10,
                (0, b) => 11 + ((b - 1) % 245) as u32,
                _ => far,
            };
            if j > 0 {
                out.push(',');
            }
            let _ = write!(out, "{d}");
        }
        out.push_str("]}");
    }
    out.push_str("]}");
    out
}

#[test]
fn dumps_whose_spans_grow_as_nodes_squared_times_levels_are_refused_before_the_hierarchy() {
    use zonal_topology::{parse_nodes_json, MAX_NODES, MAX_SPAN_ENTRIES};
    // 4,096 nodes (the limit) and 246 distinct distances: their spans would list 3.96 × 10⁹
    // node ids (16 GiB as u32). Refused from the matrix; the hierarchy is never built.
    match parse_nodes_json(&fan_dump(MAX_NODES, 20), "fan.json", "fan") {
        Err(TopologyError::TooManySpanEntries {
            nodes,
            levels,
            first,
            last,
            entries,
            limit,
        }) => {
            assert_eq!((nodes, levels, first, last), (MAX_NODES, 246, 10, 255));
            assert_eq!(limit, MAX_SPAN_ENTRIES);
            assert!(entries > 3_900_000_000, "{entries}");
        }
        other => panic!("{other:?}"),
    }
    // From a file, the message names it and the counts.
    let dir = scratch("spans");
    let path = dir.join("fan.json");
    std::fs::write(&path, fan_dump(1024, 20)).unwrap();
    let err = from_nodes_file(&path).unwrap_err();
    assert!(matches!(
        err.cause(),
        TopologyError::TooManySpanEntries {
            nodes: 1024,
            levels: 246,
            ..
        }
    ));
    let msg = err.to_string();
    for needle in [
        "fan.json",
        "246 distinct distances",
        "10..=255",
        "1024 nodes",
        "67108864",
    ] {
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
    // Big but legal: 1,024 nodes at two distances (10 and 20) list 1.05 × 10⁶ span entries,
    // 300 nodes at all 246 distances 2.1 × 10⁷; both read and build.
    let wide = (0..1024)
        .map(|i| {
            let row: Vec<&str> = (0..1024)
                .map(|j| if i == j { "10" } else { "20" })
                .collect();
            format!(
                "{{\"id\": {i}, \"cpus\": [{i}], \"distance\": [{}]}}",
                row.join(",")
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    let m = parse_nodes_json(&format!("{{\"nodes\": [{wide}]}}"), "wide", "wide").unwrap();
    assert_eq!(zonal_topology::Topology::new(m).mal_count(), 2);
    let m = parse_nodes_json(&fan_dump(300, 20), "fan300", "fan300").unwrap();
    assert_eq!(zonal_topology::Topology::new(m).mal_count(), 246);
}

#[test]
fn sysfs_roots_and_generators_whose_spans_grow_past_the_limit_are_refused() {
    use zonal_topology::{presets, MAX_SPAN_ENTRIES};
    // A sysfs root of 1,024 nodes, 246 distinct distances.
    let root = scratch("sysfs-spans");
    let n = 1024;
    for i in 0..n {
        let node = root.join(format!("sys/devices/system/node/node{i}"));
        std::fs::create_dir_all(&node).unwrap();
        std::fs::write(node.join("cpulist"), format!("{i}\n")).unwrap();
        let row: Vec<String> = (0..n)
            .map(|j| match (i.min(j), i.max(j)) {
                (a, b) if a == b => "10".to_owned(),
                (0, b) => (11 + (b - 1) % 245).to_string(),
                _ => "20".to_owned(),
            })
            .collect();
        std::fs::write(node.join("distance"), row.join(" ") + "\n").unwrap();
    }
    let err = from_sysfs_root(&root).unwrap_err();
    assert!(
        matches!(
            err.cause(),
            TopologyError::TooManySpanEntries { nodes: 1024, levels: 246, limit, .. }
                if *limit == MAX_SPAN_ENTRIES
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains(root.to_str().unwrap()), "{err}");
    // A 64 × 64 mesh: 127 levels over 4,096 nodes (1.4 × 10⁹ span entries).
    match presets::mesh_machine(64, 64, false, 1) {
        Err(TopologyError::TooManySpanEntries {
            nodes: 4096,
            levels: 127,
            entries,
            ..
        }) => assert!(entries > MAX_SPAN_ENTRIES),
        other => panic!("{other:?}"),
    }
    // Big but legal: the largest shapes in use still build, a 32 × 32 mesh of 63 levels
    // (4.4 × 10⁷ span entries) and a 4,096-node tree of 13 levels (3.4 × 10⁷).
    assert_eq!(presets::mesh(32, 32, false, 1).unwrap().mal_count(), 63);
    assert_eq!(
        presets::hierarchical(&[2; 12], 1).unwrap().node_count(),
        4096
    );
}

#[test]
fn node_dumps_with_a_repeated_key_are_refused_naming_it() {
    use zonal_topology::parse_nodes_json;
    let cases = [
        // Top level, a known field.
        (
            r#"{"nodes": [{"id": 0, "cpus": [0]}], "nodes": []}"#,
            "",
            "nodes",
        ),
        // Inside a node: serde_json would keep id 1 silently... or the derived struct refuse
        // it; the message is the same either way.
        (
            "{\"nodes\": [{\"id\": 0, \"cpus\": [0]},\n{\"id\": 1, \"cpus\": [1], \"id\": 2}]}",
            "nodes[1]",
            "id",
        ),
        // An ignored field, repeated.
        (
            r#"{"nodes": [{"id": 0, "cpus": [0], "note": "a", "note": "b"}]}"#,
            "nodes[0]",
            "note",
        ),
        // Deeper, inside an ignored field.
        (
            r#"{"nodes": [{"id": 0, "cpus": [0], "x": {"y": [{"z": 1, "z": 2}]}}]}"#,
            "nodes[0].x.y[0]",
            "z",
        ),
    ];
    for (doc, want_path, want_key) in cases {
        match parse_nodes_json(doc, "dup.json", "dup") {
            Err(TopologyError::DuplicateKey {
                origin, path, key, ..
            }) => {
                assert_eq!(
                    (origin.as_str(), path.as_str(), key.as_str()),
                    ("dup.json", want_path, want_key)
                );
            }
            other => panic!("{doc}: {other:?}"),
        }
    }
    let dir = scratch("dup");
    let path = dir.join("dup.json");
    std::fs::write(&path, cases[1].0).unwrap();
    let msg = from_nodes_file(&path).unwrap_err().to_string();
    for needle in ["dup.json", "\"id\"", "nodes[1]", "line 2"] {
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
    // The same documents without the repetition read.
    assert!(parse_nodes_json(
        r#"{"nodes": [{"id": 0, "cpus": [0], "note": "a", "x": {"y": [{"z": 1}]}}]}"#,
        "ok",
        "ok"
    )
    .is_ok());
}
