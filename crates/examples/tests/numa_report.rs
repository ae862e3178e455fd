//! `numa-report --quick` end to end on this machine: the built example
//! (`target/<profile>/examples/numa-report`, which `cargo test` builds beside this test)
//! runs into a scratch directory with small data (`ZONAL_NUMA_BYTES=1M`), and its JSON is
//! checked: a figure and a kernel-read locality for every workload and runtime (except the
//! one pair that cannot be expressed, which says why), the wrong-node control on every
//! runtime, the confounders and the schema version; on a one-node machine, that it says so
//! and gives no verdict. Bad input exits 2 naming the input. Nothing asserts on time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// `target/<profile>/examples/numa-report`, from this test's path (`…/deps/name-hash`).
fn report_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let p = dir.join("examples/numa-report");
    assert!(
        p.is_file(),
        "{} is missing: build it with `cargo build -p zonal-examples --example numa-report`",
        p.display()
    );
    p
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("zonal-numa-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Self(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str], bytes: &str) -> Output {
    Command::new(report_binary())
        .args(args)
        .env("ZONAL_NUMA_BYTES", bytes)
        .stdin(Stdio::null())
        .output()
        .expect("numa-report runs")
}

#[test]
fn the_quick_report_has_every_workload_runtime_and_the_control() {
    let dir = Scratch::new("quick");
    let out_dir = dir.0.to_string_lossy().into_owned();
    let out = run(&["--quick", "--out", &out_dir], "1M");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "numa-report --quick: {stderr}");
    let text = std::fs::read_to_string(dir.0.join("report.json")).expect("report.json");
    let report: Value = serde_json::from_str(&text).expect("report.json parses");
    assert_eq!(report["schema_version"], 1);
    let names = |key: &str| -> Vec<String> {
        report[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} is an array"))
            .iter()
            .map(|v| v.as_str().expect("a name").to_owned())
            .collect()
    };
    let (workloads, runtimes) = (names("workloads"), names("runtimes"));
    assert_eq!(
        runtimes,
        [
            "zonal-conservative-hard",
            "zonal-conservative-soft",
            "zonal-linux",
            "rayon",
            "tokio"
        ]
    );
    for w in [
        "triad-all",
        "triad-node",
        "triad-wrong-node",
        "stencil",
        "chase",
        "service",
    ] {
        assert!(
            workloads.iter().any(|x| x == w),
            "{w} missing: {workloads:?}"
        );
    }
    let results = report["results"].as_array().expect("results");
    for w in &workloads {
        for r in &runtimes {
            let row = results
                .iter()
                .find(|x| x["workload"] == w.as_str() && x["runtime"] == r.as_str())
                .unwrap_or_else(|| panic!("no row for {w} on {r}"));
            if (w.as_str(), r.as_str()) == ("service", "rayon") {
                assert!(
                    row["not_expressible"]
                        .as_str()
                        .is_some_and(|s| !s.is_empty()),
                    "{row}"
                );
                continue;
            }
            assert!(row["not_expressible"].is_null(), "{w} on {r}: {row}");
            let samples = row["samples"].as_array().expect("samples");
            assert!(samples.len() >= 2, "{w} on {r}: {samples:?}");
            assert!(row["median"].as_f64().is_some_and(|m| m > 0.0), "{row}");
            // The locality the kernel gave: slices whose CPU and pages were both read.
            let slices = &row["slices"];
            let n = slices["slices"].as_u64().expect("slices");
            assert!(n > 0, "{w} on {r}: no slice recorded");
            assert!(
                slices["unknown"].as_u64().expect("unknown") < n,
                "{w} on {r}: no slice's nodes could be read: {slices}"
            );
            let share = slices["share_on_data_node"].as_f64().expect("share");
            // The kernel's view of the pages.
            let kernel = &row["kernel"];
            assert!(kernel["unavailable"].is_null(), "{w} on {r}: {kernel}");
            // The setting that hides pages from move_pages, recorded beside the reading.
            assert_eq!(
                kernel["numa_balancing"], report["confounders"]["numa_balancing"],
                "{w} on {r}: {kernel}"
            );
            let by_node = kernel["by_node"].as_object().expect("by_node");
            assert!(!by_node.is_empty(), "{w} on {r}: no page placed: {kernel}");
            if report["one_node"] == true {
                // One node: every slice runs where its data is, and every page is there.
                assert_eq!(share, 1.0, "{w} on {r}: {slices}");
                assert_eq!(by_node.len(), 1, "{w} on {r}: {kernel}");
            }
        }
    }
    // The results agree across runtimes (the report fails otherwise, but say it here too).
    for w in workloads.iter().filter(|w| *w != "service") {
        let sums: Vec<&Value> = results
            .iter()
            .filter(|x| x["workload"] == w.as_str())
            .map(|x| &x["checksum"])
            .collect();
        assert!(sums.windows(2).all(|p| p[0] == p[1]), "{w}: {sums:?}");
    }
    // The control against its twin, on every runtime.
    let control = report["control"].as_array().expect("control");
    for r in &runtimes {
        assert!(
            control
                .iter()
                .any(|c| c["runtime"] == r.as_str() && c["penalty"].is_f64()),
            "no control for {r}: {control:?}"
        );
    }
    for key in [
        "numa_balancing",
        "transparent_hugepages",
        "smt_active",
        "cpu_governor",
        "kernel",
        "zonal_commit",
    ] {
        assert!(
            report["confounders"][key]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{key}"
        );
    }
    let md = std::fs::read_to_string(dir.0.join("report.md")).expect("report.md");
    for f in [
        "topology.json",
        "locality.svg",
        "triad-wrong-node.svg",
        "service.svg",
    ] {
        assert!(dir.0.join(f).is_file(), "{f} missing");
    }
    if report["one_node"] == true {
        assert!(
            md.contains("One node: this machine shows no NUMA effect"),
            "{md}"
        );
        assert_eq!(report["verdict_allowed"], false);
        assert!(md.contains("No verdict"), "{md}");
    }
    assert!(!text.contains(&hostname()), "the host name is in the JSON");
}

/// This machine's host name (to check that the report leaves it out).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_owned())
        .ok()
        .filter(|s| s.len() >= 4)
        .unwrap_or_else(|| "\u{0}no host name\u{0}".to_owned())
}

#[test]
fn bad_input_exits_2_naming_it() {
    let dir = Scratch::new("bad");
    let out_dir = dir.0.to_string_lossy().into_owned();
    for (args, bytes, needle) in [
        (vec!["--reps", "1"], "1M", "--reps 1"),
        (vec!["--budget", "5"], "1M", "--budget 5"),
        (vec!["--quick"], "lots", "ZONAL_NUMA_BYTES=\"lots\""),
        (vec!["--quick"], "1K", "ZONAL_NUMA_BYTES=\"1K\""),
        (vec!["--no-such-flag"], "1M", "--no-such-flag"),
    ] {
        let mut a = args.clone();
        a.extend(["--out", &out_dir]);
        let out = run(&a, bytes);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {bytes}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn an_output_directory_that_cannot_be_made_is_a_failure() {
    let out = run(&["--quick", "--out", "/proc/no/such/dir"], "1M");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("/proc/no/such/dir"), "{stderr}");
}
