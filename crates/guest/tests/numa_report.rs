//! `numa-report --quick` inside the 4-node guest: the report program (the debug example,
//! stripped, in the initramfs) runs with small data, its timings labelled meaningless (the
//! guest models no memory latency), and its JSON is checked for placement only: the
//! machine it found is the guest's (4 nodes, the distances given to QEMU), every workload
//! has a figure and a kernel-read locality on every runtime that can express it, and the
//! kernel's page counts and the slices' CPUs say what each placement promises:
//! - `triad-all` on Zonal: parts bound to their home nodes, so pages on all four nodes;
//! - `triad-node` on rayon and tokio (threads confined to node 0, data first touched by
//!   them): at least 95% of the pages on node 0 (a `Vec` from malloc may share its edge
//!   pages with older allocations, first touched elsewhere: one page of 268 was on node 2
//!   in one run), and at least 3 slices in 4 on their data's node;
//! - `triad-wrong-node` (the control): every page on node 3 (the farthest from node 0)
//!   for every runtime, and no slice of rayon, tokio or Zonal's conservative-hard (tasks
//!   spawned on node 0, never stolen that far) on its data's node.
//!
//! The guest runs NUMA balancing with an aggressive scanner (`common::AGGRESSIVE_SCANNER`):
//! every page of every workload is located all the same, and the report records
//! `numa_balancing` beside each reading. It gives no verdict. The binary is built by `cargo build --workspace --examples`
//! (scripts/test.sh).

mod common;

use serde_json::Value;

/// The job: the report, then its JSON between markers.
const COMMAND: &str = "ZONAL_NUMA_BYTES=1M numa-report --quick --reps 2 --out /tmp/nr \
    --timings-meaningless 'QEMU guest: no memory latency modelled'; rc=$?; \
    echo NUMA-JSON-BEGIN; cat /tmp/nr/report.json; echo; echo NUMA-JSON-END; \
    head -c 1 /tmp/nr/report.md >/dev/null && echo NUMA-MD-OK; (exit $rc)";

/// The pages of a row, by node.
fn pages(row: &Value) -> Vec<(String, u64)> {
    row["kernel"]["by_node"]
        .as_object()
        .unwrap_or_else(|| panic!("by_node: {row}"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .collect()
}

#[test]
fn the_report_runs_in_the_4_node_guest_and_its_placements_hold() {
    let binaries = [(common::example("numa-report"), "/bin/numa-report")];
    let steps = [common::Step {
        name: "numa-report",
        command: COMMAND.to_owned(),
    }];
    let Some(boot) = common::boot(&common::numa4(), &binaries, &steps) else {
        return;
    };
    common::assert_aggressive_scanner(&boot);
    let step = boot.step("numa-report");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    assert!(step.text.contains("NUMA-MD-OK"), "{}", step.text);
    let json = step
        .text
        .split_once("NUMA-JSON-BEGIN")
        .and_then(|(_, rest)| rest.split_once("NUMA-JSON-END"))
        .map(|(json, _)| json.trim())
        .unwrap_or_else(|| panic!("no JSON:\n{}", step.text));
    let r: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["one_node"], false);
    let nodes = r["machine"]["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 4, "{}", r["machine"]);
    let distances: Vec<Vec<u32>> =
        serde_json::from_value(r["machine"]["distances"].clone()).expect("distances");
    let expected: Vec<Vec<u32>> = common::NUMA4_DISTANCES.iter().map(|d| d.to_vec()).collect();
    assert_eq!(distances, expected);
    assert_eq!(r["node_a"]["os_id"], 0);
    assert_eq!(r["node_b"]["os_id"], 3, "the farthest node from node 0");
    assert!(r["timings_meaningless"].is_string());
    assert_eq!(r["verdict_allowed"], false);
    assert!(
        r["confounders"]["zonal_commit"]
            .as_str()
            .is_some_and(|c| c.starts_with("unknown")),
        "no git in the guest: {}",
        r["confounders"]
    );
    let results = r["results"].as_array().expect("results");
    let row = |w: &str, rt: &str| -> &Value {
        results
            .iter()
            .find(|x| x["workload"] == w && x["runtime"] == rt)
            .unwrap_or_else(|| panic!("no row {w} on {rt}"))
    };
    let share = |w: &str, rt: &str| row(w, rt)["slices"]["share_on_data_node"].as_f64();
    for w in r["workloads"].as_array().expect("workloads") {
        for rt in r["runtimes"].as_array().expect("runtimes") {
            let (w, rt) = (w.as_str().expect("name"), rt.as_str().expect("name"));
            let x = row(w, rt);
            if (w, rt) == ("service", "rayon") {
                assert!(x["not_expressible"].is_string(), "{x}");
                continue;
            }
            assert!(
                x["median"].as_f64().is_some_and(|m| m > 0.0),
                "{w} {rt}: {x}"
            );
            assert!(x["slices"]["slices"].as_u64() > Some(0), "{w} {rt}: {x}");
            assert!(
                share(w, rt).is_some(),
                "{w} {rt}: no slice's nodes read: {x}"
            );
            assert!(!pages(x).is_empty(), "{w} {rt}: no page read: {x}");
            // Under the aggressive scanner, pages hidden from move_pages are located all
            // the same (pagemap: the guest's job runs as root), and the setting is recorded
            // beside the reading.
            assert_eq!(x["kernel"]["errors"], 0, "{w} {rt}: pages not located: {x}");
            assert_eq!(x["kernel"]["numa_balancing"], "1", "{w} {rt}: {x}");
        }
    }
    for rt in [
        "zonal-conservative-hard",
        "zonal-conservative-soft",
        "zonal-linux",
    ] {
        let p = pages(row("triad-all", rt));
        assert_eq!(p.len(), 4, "triad-all on {rt}: pages on every node: {p:?}");
    }
    for rt in ["rayon", "tokio"] {
        let p = pages(row("triad-node", rt));
        let total: u64 = p.iter().map(|x| x.1).sum();
        let on0 = p.iter().find(|x| x.0 == "0").map_or(0, |x| x.1);
        assert!(on0 * 100 >= total * 95, "triad-node on {rt}: {p:?}");
        let s = share("triad-node", rt).expect("a share");
        assert!(s >= 0.75, "triad-node on {rt}: {s} of the slices on node 0");
    }
    for rt in r["runtimes"].as_array().expect("runtimes") {
        let rt = rt.as_str().expect("name");
        let p = pages(row("triad-wrong-node", rt));
        assert_eq!(p.len(), 1, "triad-wrong-node on {rt}: {p:?}");
        assert_eq!(p[0].0, "3", "triad-wrong-node on {rt}: {p:?}");
    }
    for rt in ["zonal-conservative-hard", "rayon", "tokio"] {
        assert_eq!(
            share("triad-wrong-node", rt),
            Some(0.0),
            "triad-wrong-node on {rt}: threads on node 0, data on node 3"
        );
    }
}
