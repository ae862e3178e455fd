//! `NodeBuffer::page_nodes()` locates every page while automatic NUMA balancing hides
//! pages from `move_pages`: in the 4-node guest and the S1-shaped one, both booted with
//! NUMA balancing on and its scanner aggressive (`common::AGGRESSIVE_SCANNER`), on every
//! node a first-touch buffer and a bound one, written on the node and then left idle while
//! the scanner runs. The scanner must have hidden pages of the first-touch buffers (the
//! kernel's own `move_pages` answers `ENOENT` for them: what made the placement tests flaky
//! on a busy host), and `page_nodes()` must still name the node of every page of every
//! buffer: its own node, since nothing touched the buffers after their fill.

mod common;

fn assert_every_page_located(boot: &common::Boot) {
    common::assert_aggressive_scanner(boot);
    let step = boot.step("hidden-pages");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
    assert_eq!(r["numa_balancing"]["Ok"], "1", "{r}");
    let buffers = r["buffers"].as_array().expect("buffers");
    let nodes: std::collections::BTreeSet<u64> =
        buffers.iter().filter_map(|b| b["node"].as_u64()).collect();
    assert!(nodes.len() >= 4, "every node of a NUMA guest: {r}");
    let mut hidden = 0;
    for b in buffers {
        let pages = &b["page_nodes"]["Ok"];
        let count = pages["pages"].as_u64().expect("pages");
        assert_eq!(
            count,
            b["bytes"].as_u64().expect("bytes").div_ceil(4096),
            "{b}"
        );
        assert_eq!(
            pages["errors"],
            serde_json::json!({}),
            "pages not located: {b}"
        );
        assert_eq!(b["all_pages_on_node"], true, "pages off their node: {b}");
        let raw = b["raw_enoent"].as_u64().expect("raw_enoent");
        match b["policy"].as_str() {
            Some("first-touch") => {
                assert!(raw > 0, "the scanner hid no page of this buffer: {b}\n{r}");
                hidden += raw;
            }
            // Bound memory is never scanned (its policy does not migrate on fault).
            Some("bind") => assert_eq!(raw, 0, "{b}"),
            other => panic!("policy {other:?}: {b}"),
        }
    }
    let updates = |k: &str| r[k]["numa_pte_updates"].as_u64().unwrap_or(0);
    assert!(
        updates("vmstat_after") > updates("vmstat_before"),
        "the scanner made no page PROT_NONE: {r}"
    );
    eprintln!("hidden from move_pages, located anyway: {hidden} pages");
}

#[test]
fn every_page_is_located_under_an_aggressive_numa_balancing_scanner_numa4() {
    let Some(boot) = common::numa4_boot() else {
        return;
    };
    assert_every_page_located(&boot);
}

#[test]
fn every_page_is_located_under_an_aggressive_numa_balancing_scanner_s1() {
    let Some(boot) = common::s1_boot() else {
        return;
    };
    assert_every_page_located(&boot);
}
