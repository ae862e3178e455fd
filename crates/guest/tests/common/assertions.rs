//! What the pinning and memory probes must find in the 4-node guest, whichever probe build
//! (with hwloc or without) ran: shared by `pinning.rs`, `memory.rs` and `no_hwloc.rs`.

use serde_json::Value;

/// The phases every build of `zonal-probe pinning` reads (one built with hwloc adds
/// `after-hwloc-discovery`).
pub const PINNING_PHASES: [&str; 11] = [
    "after-build",
    "during-parallel-iterator",
    "after-nodebuffer-node3",
    "during-async-tasks",
    "during-control-plane",
    "after-balance-now",
    "while-second-pool",
    "second-pool-itself",
    "after-second-pool-dropped",
    "after-default-discovery",
    "final",
];

/// Asserts what `zonal-probe pinning` found in the 4-node guest (`r`, its result): one
/// worker on each of the 8 CPUs, the [`PINNING_PHASES`] read, in every phase each worker's
/// kernel affinity exactly its CPU, a control plane that balanced, buffers bound.
pub fn assert_workers_pinned(r: &Value) {
    let expected: Vec<u64> = r["expected_cpus"]
        .as_array()
        .expect("expected_cpus")
        .iter()
        .map(|c| c.as_u64().expect("cpu"))
        .collect();
    let mut distinct = expected.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        expected.len(),
        "workers share CPUs: {expected:?}"
    );
    assert_eq!(
        distinct,
        (0..8).collect::<Vec<u64>>(),
        "one worker per guest CPU"
    );

    let phases = r["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["phase"].as_str().unwrap_or(""))
        .collect();
    for want in PINNING_PHASES {
        assert!(names.contains(&want), "phase {want} missing: {names:?}");
    }
    for p in phases {
        let workers = p["workers"].as_array().expect("workers");
        assert_eq!(workers.len(), 8, "{p}");
        for w in workers {
            let cpu = w["expected"].as_u64().expect("expected");
            assert_eq!(
                w["allowed"],
                serde_json::json!([cpu]),
                "phase {}: worker {} allowed {} instead of [{cpu}]",
                p["phase"],
                w["worker"],
                w["allowed"]
            );
        }
        assert_eq!(p["mismatched"], 0, "{p}");
    }
    assert_eq!(r["mismatched_total"], 0);
    assert!(
        r["balance_passes"].as_u64().unwrap_or(0) > 0,
        "the control plane never balanced: {r}"
    );
    for b in r["buffers"].as_array().expect("buffers") {
        assert_eq!(b["binding"], "bound", "{b}");
    }
}

/// Asserts what `zonal-probe memory` found in the 4-node guest (`r`, its result): each of
/// the 16 buffers (bind and preferred, two sizes, four nodes) has every page on its node
/// (`move_pages`) under the policy Zonal reports (`get_mempolicy`, `numa_maps`), and no
/// other mapping carries a policy.
pub fn assert_buffers_on_their_nodes(r: &Value) {
    let buffers = r["buffers"].as_array().expect("buffers");
    assert_eq!(buffers.len(), 4 * 4, "2 policies × 2 sizes on 4 nodes");
    for b in buffers {
        let (binding, mode, tag) = match b["policy"].as_str() {
            Some("bind") => ("bound", "bind", "bind"),
            Some("preferred") => ("preferred", "preferred", "prefer"),
            other => panic!("policy {other:?}"),
        };
        let os = b["node_os_id"].as_u64().expect("node");
        assert_eq!(b["binding"], binding, "{b}");
        assert_eq!(
            b["kernel_policy"]["Ok"],
            serde_json::json!({ "mode": mode, "nodes": [os] }),
            "{b}"
        );
        assert_eq!(b["all_pages_on_node"], true, "{b}");
        let pages = b["page_nodes"]["Ok"]["pages"].as_u64().expect("pages");
        let bytes = b["bytes"].as_u64().expect("bytes");
        assert_eq!(pages, bytes.div_ceil(4096), "{b}");
        assert_eq!(b["pages_on_node"], pages, "{b}");
        assert_eq!(b["numa_maps"]["policy"], format!("{tag}:{os}"), "{b}");
    }
    assert!(r["other_mappings_checked"].as_u64().unwrap_or(0) > 0, "{r}");
    assert_eq!(
        r["other_mappings_with_policy"],
        serde_json::json!([]),
        "a policy leaked onto another mapping"
    );
}

/// The `first-touch` check (`zonal-probe first-touch`): on every node of the guest, the
/// `NodeBuffer` placed by first touch (`MemoryPolicy::FirstTouch`, no policy) was written
/// by every worker of that node and no other, on the node's CPUs; it reports that node as
/// its first-touch node, the kernel applies no policy to it, and every page of it lies on
/// that node (`move_pages`). A bound buffer reports the same first-touch node. Empty and
/// zero-sized buffers have no page.
pub fn assert_first_touch_on_every_node(r: &Value) {
    let nodes = r["nodes"].as_array().expect("nodes");
    assert!(nodes.len() >= 2, "a NUMA guest: {r}");
    for n in nodes {
        let node = &n["node"];
        let os = n["node_os_id"].as_u64().expect("node_os_id");
        let ft = &n["first_touch"];
        assert_eq!(
            ft["binding"]["first-touch"], "first touch asked (MemoryPolicy::FirstTouch)",
            "{n}"
        );
        assert_eq!(ft["first_touch_nodes"], serde_json::json!([node]), "{n}");
        assert_eq!(
            ft["kernel_policy"]["Ok"],
            serde_json::json!({ "mode": "default", "nodes": [] }),
            "{n}"
        );
        assert_eq!(
            ft["all_pages_on_node"], true,
            "the pages are not where first touch was reported: {n}"
        );
        let pages = ft["page_nodes"]["Ok"]["pages"].as_u64().expect("pages");
        assert_eq!(
            pages,
            ft["bytes"].as_u64().expect("bytes").div_ceil(4096),
            "{n}"
        );
        assert_eq!(
            ft["page_nodes"]["Ok"]["nodes"][os.to_string()],
            pages,
            "{n}"
        );
        // Split over every worker of the node (1 MiB: more pages than workers), each on
        // its own CPU of the node.
        let workers = n["workers"].as_array().expect("workers");
        assert!(!workers.is_empty(), "{n}");
        assert_eq!(ft["writer_workers"], n["workers"], "{n}");
        let cpus: Vec<Value> = n["worker_cpus"].as_array().expect("cpus").clone();
        for c in ft["writer_cpus"].as_array().expect("writer cpus") {
            assert!(
                cpus.contains(c),
                "written on CPU {c}, not one of the node's {cpus:?}: {n}"
            );
        }
        let bound = &n["bind"];
        assert_eq!(bound["binding"], "bound", "{n}");
        assert_eq!(bound["first_touch_nodes"], serde_json::json!([node]), "{n}");
        assert_eq!(bound["all_pages_on_node"], true, "{n}");
    }
    assert_eq!(r["empty"]["page_nodes"]["Ok"], serde_json::json!([]), "{r}");
    assert_eq!(
        r["empty"]["first_touch_nodes"],
        serde_json::json!([]),
        "{r}"
    );
    assert_eq!(
        r["zero_sized"]["page_nodes"]["Ok"],
        serde_json::json!([]),
        "{r}"
    );
    assert_eq!(r["zero_sized"]["aligned"], true, "{r}");
    assert_eq!(r["zero_sized"]["len"], 1000, "{r}");
}
