//! In the 4-node guest, every page of every `NodeBuffer` (bind and preferred, 1 MiB and an
//! odd size, on each node) lies on its node as `move_pages` reports, the kernel's policy
//! (`get_mempolicy`, `numa_maps`) is the placement Zonal reports, and no other mapping of the
//! process carries a policy.

mod common;

#[test]
fn buffers_live_on_their_nodes_under_the_reported_policy() {
    let Some(boot) = common::numa4_boot() else {
        return;
    };
    let step = boot.step("memory");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
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
