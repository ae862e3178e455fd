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
        assert_eq!(b["placement"], "bound", "{b}");
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
        let (placement, mode, tag) = match b["policy"].as_str() {
            Some("bind") => ("bound", "bind", "bind"),
            Some("preferred") => ("preferred", "preferred", "prefer"),
            other => panic!("policy {other:?}"),
        };
        let os = b["node_os_id"].as_u64().expect("node");
        assert_eq!(b["placement"], placement, "{b}");
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
