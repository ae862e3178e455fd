//! Hostile input against the example CLIs (`topology`, `paper`, `workload`) and the library
//! loaders: one case for each class of the hostile-input issue. Every case runs the real
//! binary and checks its exit status (2: usage or input error, 1: failure while running,
//! never 101 or a signal) and that the message names what was wrong.
//!
//! The binaries are the `zonal-examples` crate's programs (`target/<profile>/examples/`),
//! which `cargo test` at the root builds (the crate is a default member; `cargo test -p
//! zonal` alone does not: run `cargo build --examples` first, as scripts/test.sh does). Each run has a hang guard: a CLI still running after
//! [`HANG_GUARD`] is killed and the case fails as a hang (a bound on liveness, not a timing).

mod common;

use common::example;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a CLI may run before a case calls it hung.
const HANG_GUARD: Duration = Duration::from_secs(300);

/// What a CLI run gave.
#[derive(Debug)]
struct Outcome {
    /// The exit status; `None` when a signal ended it.
    code: Option<i32>,
    stderr: String,
}

/// Runs example `name` with `args`, under the hang guard.
fn run(name: &str, args: &[&str]) -> Outcome {
    let mut child = Command::new(example(name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the example starts");
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > HANG_GUARD {
            let _ = child.kill();
            panic!("{name} {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Outcome {
        code: status.code(),
        stderr: reader.join().expect("stderr reader"),
    }
}

/// Runs and expects a usage/input error (status 2) whose message holds every `needle`.
#[track_caller]
fn refused(name: &str, args: &[&str], needles: &[&str]) {
    let out = run(name, args);
    assert_eq!(
        out.code,
        Some(2),
        "{name} {args:?}: expected status 2, got {out:?}"
    );
    for n in needles {
        assert!(
            out.stderr.contains(n),
            "{name} {args:?}: the message does not name {n:?}: {}",
            out.stderr
        );
    }
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

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
    let dir = std::env::temp_dir().join(format!("zonal-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    Scratch(dir)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write input");
    p.to_str().expect("UTF-8 path").to_owned()
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

/// A small valid hwloc 2 export: two packages, each with one NUMA node and one PU.
const XML: &str = include_str!("../crates/topology/tests/hostile/two-nodes.xml");

/// [`XML`] with `from` replaced by `to` (which must occur).
fn xml_with(from: &str, to: &str) -> String {
    assert!(XML.contains(from), "{from:?} is not in the sample");
    XML.replacen(from, to, 1)
}

/// The sample with `from` replaced by `to`, written as `name` in a scratch directory, must be
/// refused by the topology CLI with a message naming the file and every needle.
#[track_caller]
fn xml_refused(name: &str, from: &str, to: &str, needles: &[&str]) {
    let dir = scratch(name);
    let p = write(&dir, name, &xml_with(from, to));
    let mut all = vec![name];
    all.extend_from_slice(needles);
    refused("topology", &["--xml", &p], &all);
}

/// A sysfs root of `(id, cpulist, distance)` nodes under `dir`.
fn sysfs_root(dir: &Path, nodes: &[(u32, &str, &str)]) -> String {
    for &(id, cpus, row) in nodes {
        let node = dir.join(format!("sys/devices/system/node/node{id}"));
        std::fs::create_dir_all(&node).expect("sysfs dirs");
        std::fs::write(node.join("cpulist"), cpus).expect("cpulist");
        std::fs::write(node.join("distance"), row).expect("distance");
    }
    dir.to_str().expect("UTF-8").to_owned()
}

// --- Panics: sizes that indexed out of bounds or overflowed -----------------------------

#[test]
fn tiny_and_huge_workload_sizes_are_usage_errors() {
    for (flag, v) in [
        ("--stream-len", "0"),
        ("--stream-len", "1"),
        ("--grid", "2147483648"),
        ("--grid", "4294967296"),
        ("--grid", "18446744073709551615"),
    ] {
        refused("workload", &[flag, v], &[flag, v]);
    }
}

// --- Crashes: inputs that overflowed a stack or allocated without bound ----------------

#[test]
fn deeply_nested_xml_is_refused_before_hwloc() {
    let dir = scratch("deep");
    let xml = write(&dir, "deep.xml", &"<a>".repeat(100_000));
    refused("topology", &["--xml", &xml], &["deep.xml", "100000", "256"]);
    refused("workload", &["--xml", &xml], &["deep.xml", "256"]);
}

#[test]
fn cpu_lists_beyond_the_cpu_limit_are_refused_before_allocating() {
    let dir = scratch("cpulist");
    let nodes = write(
        &dir,
        "wide.json",
        r#"{"nodes": [{"id": 0, "cpus": "0-100000"}]}"#,
    );
    refused(
        "topology",
        &["--nodes", &nodes],
        &["wide.json", "0-100000", "4096"],
    );
}

#[test]
fn generated_machines_beyond_the_limits_are_refused() {
    refused("topology", &["--fanout", "1024,1024"], &["1048576", "4096"]);
    refused("topology", &["--mesh", "1024x1024"], &["1048576", "4096"]);
    refused(
        "topology",
        &["--fanout", "4", "--cpus-per-node", "100000"],
        &["--cpus-per-node", "100000"],
    );
}

#[test]
fn many_nodes_without_a_matrix_are_refused_before_the_fallback_matrix() {
    let dir = scratch("nodes");
    let nodes: Vec<String> = (0..100_000)
        .map(|i| format!(r#"{{"id": {i}, "cpus": [{i}]}}"#))
        .collect();
    let path = write(
        &dir,
        "many.json",
        &format!(r#"{{"nodes": [{}]}}"#, nodes.join(",")),
    );
    refused(
        "topology",
        &["--nodes", &path],
        &["many.json", "100000", "4096"],
    );
}

#[test]
fn dumps_and_generators_whose_spans_grow_as_nodes_squared_times_levels_are_refused() {
    // 1,024 nodes and 246 distinct distances: the per-level spans would list 2.5 × 10⁸ node
    // ids. Refused from the matrix, before the hierarchy or the report is built.
    let n = 1024;
    let rows: Vec<String> = (0..n)
        .map(|i: usize| {
            let row: Vec<String> = (0..n)
                .map(|j: usize| match (i.min(j), i.max(j)) {
                    (a, b) if a == b => "10".to_owned(),
                    (0, b) => (11 + (b - 1) % 245).to_string(),
                    _ => "20".to_owned(),
                })
                .collect();
            format!(
                r#"{{"id": {i}, "cpus": [{i}], "distance": [{}]}}"#,
                row.join(",")
            )
        })
        .collect();
    let dir = scratch("spans");
    let path = write(
        &dir,
        "fan.json",
        &format!(r#"{{"nodes": [{}]}}"#, rows.join(",")),
    );
    for json in [false, true] {
        let mut args = vec!["--nodes", path.as_str()];
        if json {
            args.push("--json");
        }
        refused(
            "topology",
            &args,
            &[
                "fan.json",
                "246 distinct distances",
                "1024 nodes",
                "67108864",
            ],
        );
    }
    refused(
        "topology",
        &["--mesh", "64x64"],
        &["127 distinct distances", "4096 nodes", "67108864"],
    );
}

#[test]
fn node_dumps_and_policy_configs_with_a_repeated_key_are_refused() {
    let dir = scratch("dup-keys");
    let path = write(
        &dir,
        "dup.json",
        r#"{"nodes": [{"id": 0, "cpus": [0], "distance": [10, 20]},
                      {"id": 1, "cpus": [1], "distance": [20, 10], "id": 2}]}"#,
    );
    refused(
        "topology",
        &["--nodes", &path],
        &["dup.json", "\"id\"", "nodes[1]", "line 2"],
    );
    use zonal::policy::{PolicyConfig, PolicyError};
    let err = PolicyConfig::from_json_str(r#"{"name": "linux", "age_limit": 2, "age_limit": 3}"#)
        .unwrap_err();
    assert!(
        matches!(&err, PolicyError::DuplicateKey { key, .. } if key == "age_limit"),
        "{err:?}"
    );
}

#[test]
fn an_unknown_linux_era_is_a_usage_error_naming_it() {
    refused(
        "paper",
        &[
            "--system",
            "s1",
            "--workload",
            "w2",
            "--procs",
            "10",
            "--linux-era",
            "2.4",
        ],
        &["2.4", "linux_era", "modern, 2.6"],
    );
}

#[test]
fn bad_numa_balancing_cost_and_arrival_window_values_are_usage_errors() {
    let one = ["--system", "s1", "--workload", "w2", "--procs", "10"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        one.iter().copied().chain(extra.iter().copied()).collect()
    };
    refused(
        "paper",
        &with(&["--numa-balancing", "maybe"]),
        &["--numa-balancing", "maybe", "on, off"],
    );
    refused(
        "paper",
        &with(&["--numa-balancing", "on", "--linux-era", "2.6"]),
        &["--numa-balancing on", "--linux-era 2.6"],
    );
    refused(
        "paper",
        &with(&["--numa-balancing", "on", "--policy", "conservative-hard"]),
        &["numa_balancing", "conservative-hard"],
    );
    refused(
        "paper",
        &with(&["--numa-scan-delay-ms", "50"]),
        &["--numa-scan-delay-ms", "50", "--numa-balancing on"],
    );
    refused(
        "paper",
        &with(&["--numa-balancing", "on", "--numa-scan-delay-ms", "0"]),
        &["--numa-scan-delay-ms", "0"],
    );
    refused(
        "paper",
        &with(&["--cost", "fast"]),
        &["--cost", "fast", "paper, hardware"],
    );
    for w in ["0", "3600001"] {
        refused(
            "paper",
            &with(&["--arrival-window-ms", w]),
            &["--arrival-window-ms", w],
        );
    }
    refused(
        "paper",
        &["--window-sweep", "--arrival-window-ms", "500"],
        &["--arrival-window-ms", "--window-sweep"],
    );
    refused(
        "paper",
        &with(&["--window-sweep"]),
        &["--window-sweep", "single run"],
    );
}

#[test]
fn huge_process_task_seed_and_thread_counts_are_usage_errors() {
    refused(
        "paper",
        &[
            "--system",
            "s1",
            "--workload",
            "w1",
            "--procs",
            "1000000000",
        ],
        &["--procs", "1000000000"],
    );
    refused("paper", &["--seeds", "1000000000"], &["--seeds"]);
    refused(
        "paper",
        &["--threads", "1000000"],
        &["--threads", "1000000"],
    );
    refused("paper", &["--threads", "0"], &["--threads", "0"]);
    refused(
        "workload",
        &["--tasks", "1000000000"],
        &["--tasks", "1000000000"],
    );
    refused(
        "workload",
        &["--stream-len", "1099511627776"],
        &["--stream-len", "1099511627776"],
    );
}

#[test]
fn service_durations_policies_and_metrics_addresses_are_usage_errors() {
    for v in ["0", "3601", "18446744073709551616"] {
        refused("service", &["--seconds", v], &["--seconds", v]);
    }
    refused(
        "service",
        &["--policy", "nope"],
        &["nope", "valid policies"],
    );
    refused("service", &["--preset", "s9"], &["s9"]);
    refused(
        "service",
        &["--metrics-addr", "nowhere"],
        &["--metrics-addr", "nowhere"],
    );
    // The endpoint has no authentication: a non-loopback address needs the explicit flag,
    // and the flag alone is no address.
    refused(
        "service",
        &["--policy", "linux", "--metrics-addr", "0.0.0.0:0"],
        &[
            "--metrics-addr",
            "0.0.0.0:0",
            "only loopback addresses",
            "--metrics-allow-remote",
        ],
    );
    refused("service", &["--metrics-allow-remote"], &["--metrics-addr"]);
    // An address in use is refused, naming it.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = taken.local_addr().expect("bound").to_string();
    refused(
        "service",
        &["--policy", "linux", "--metrics-addr", &addr],
        &["--metrics-addr", &addr, "cannot bind"],
    );
}

#[test]
fn thousands_of_virtual_workers_start_run_every_task_once_and_stop() {
    // 3,000 virtual CPUs: 3,000 worker threads, each with its victim order (built on first
    // use) and its walker; every task runs exactly once.
    let dir = scratch("workers");
    let path = write(
        &dir,
        "wide.json",
        r#"{"nodes": [{"id": 0, "cpus": "0-1499", "distance": [10, 20]},
                      {"id": 1, "cpus": "1500-2999", "distance": [20, 10]}]}"#,
    );
    let pool = zonal::runtime::ThreadPoolBuilder::new()
        .nodes_file(&path)
        .build()
        .expect("a 3,000-worker virtual pool");
    assert_eq!(pool.num_workers(), 3_000);
    let runs: Vec<std::sync::atomic::AtomicU32> = (0..20_000)
        .map(|_| std::sync::atomic::AtomicU32::new(0))
        .collect();
    pool.scope(|s| {
        for r in &runs {
            s.spawn(move |_| {
                r.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            });
        }
    });
    assert!(runs
        .iter()
        .all(|r| r.load(std::sync::atomic::Ordering::Relaxed) == 1));
    pool.shutdown_and_wait(); // its 3,000 threads are gone before the next test
}

// --- Hangs: FIFOs given as input files --------------------------------------------------

#[test]
fn fifos_are_refused_not_read() {
    let dir = scratch("fifo");
    let fifo = dir.join("in.fifo");
    mkfifo(&fifo);
    let f = fifo.to_str().expect("UTF-8");
    refused("topology", &["--xml", f], &["in.fifo", "FIFO"]);
    refused("topology", &["--nodes", f], &["in.fifo", "FIFO"]);
    refused("workload", &["--xml", f], &["in.fifo", "FIFO"]);
    // A sysfs root whose distance file is a FIFO.
    let root = dir.join("root");
    let root_arg = sysfs_root(&root, &[]);
    let node = root.join("sys/devices/system/node/node0");
    std::fs::create_dir_all(&node).expect("sysfs dirs");
    std::fs::write(node.join("cpulist"), "0-1\n").expect("cpulist");
    mkfifo(&node.join("distance"));
    refused("topology", &["--sysfs", &root_arg], &["distance", "FIFO"]);
}

// --- Accepted but invalid ----------------------------------------------------------------

#[test]
fn xml_distance_matrices_with_extra_values_are_refused() {
    xml_refused("extra.xml", "10 20 20 10 ", "10 20 20 10 30 ", &["5", "4"]);
}

#[test]
fn garbage_cpusets_are_refused() {
    xml_refused(
        "garbage.xml",
        r#"<object type="PU" os_index="0" cpuset="0x00000001""#,
        r#"<object type="PU" os_index="0" cpuset="0xzz""#,
        &["cpuset", "0xzz"],
    );
}

#[test]
fn a_matrix_naming_a_missing_node_is_refused() {
    xml_refused(
        "missing.xml",
        r#"<indexes length="4">0 1 </indexes>"#,
        r#"<indexes length="4">0 7 </indexes>"#,
        &["7", "no NUMA node"],
    );
}

#[test]
fn a_node_os_index_of_u32_max_is_refused_not_dropped() {
    xml_refused(
        "osindex.xml",
        r#"<object type="NUMANode" os_index="1""#,
        r#"<object type="NUMANode" os_index="4294967295""#,
        &["4294967295"],
    );
}

#[test]
fn an_unreadable_sysfs_cpulist_is_refused_not_memory_only() {
    let dir = scratch("sysfs-cpulist");
    let node = dir.join("sys/devices/system/node/node0");
    // A directory where the file should be: unreadable as a file, even for root.
    std::fs::create_dir_all(node.join("cpulist")).expect("dirs");
    std::fs::write(node.join("distance"), "10\n").expect("distance");
    refused(
        "topology",
        &["--sysfs", dir.to_str().expect("UTF-8")],
        &["cpulist", "directory"],
    );
}

#[test]
fn non_finite_negative_and_huge_cost_scales_are_usage_errors() {
    for (flag, v) in [
        ("--remote-scale", "NaN"),
        ("--remote-scale", "inf"),
        ("--remote-scale", "-1"),
        ("--remote-scale", "1e6"),
        ("--migration-scale", "NaN"),
        ("--migration-scale", "-inf"),
    ] {
        let arg = format!("{flag}={v}");
        refused("paper", &[&arg], &[flag]);
    }
}

#[test]
fn flags_a_mode_does_not_take_are_refused_not_ignored() {
    refused(
        "paper",
        &["--sweep", "--system", "s1"],
        &["--sweep", "--system"],
    );
    refused("paper", &["--sweep", "--procs", "10"], &["--procs"]);
    refused(
        "paper",
        &["--sweep", "--policies", "linux"],
        &["--policies"],
    );
    refused("paper", &["--json"], &["--json"]);
    refused(
        "paper",
        &["--reproduction", "--linux-era", "2.6"],
        &["--linux-era", "--reproduction"],
    );
    refused(
        "paper",
        &["--reproduction", "--cost", "hardware"],
        &["--cost", "--reproduction"],
    );
    refused(
        "paper",
        &[
            "--system",
            "s1",
            "--workload",
            "w1",
            "--procs",
            "10",
            "--reproduction",
        ],
        &["--reproduction", "single run"],
    );
    refused("paper", &["--seed", "4"], &["--seed", "grid"]);
    refused(
        "paper",
        &["--sweep", "--remote-scale", "2"],
        &["--remote-scale", "--sweep"],
    );
    refused(
        "paper",
        &[
            "--system",
            "s1",
            "--workload",
            "w1",
            "--procs",
            "10",
            "--seeds",
            "3",
        ],
        &["--seeds", "single run"],
    );
    refused(
        "workload",
        &["--workload", "stream", "--tasks", "5"],
        &["--tasks", "mix"],
    );
    refused(
        "workload",
        &["--workload", "mix", "--grid", "64"],
        &["--grid", "stencil"],
    );
    refused(
        "paper",
        &[
            "--system",
            "s1",
            "--workload",
            "w1",
            "--procs",
            "10",
            "--policies",
            "linux",
        ],
        &["--policies"],
    );
}

#[test]
fn policy_documents_that_are_not_objects_are_refused() {
    use zonal::policy::PolicyConfig;
    for text in [r#"["linux"]"#, r#""linux""#, "7", "null"] {
        let err = PolicyConfig::from_json_str(text).expect_err(text);
        assert!(!err.to_string().is_empty());
    }
    assert!(PolicyConfig::from_json_str(r#"{"name": "linux"}"#).is_ok());
}

#[test]
fn node_memory_sizes_that_would_wrap_are_refused() {
    let dir = scratch("memory");
    let p = write(
        &dir,
        "mem.json",
        r#"{"nodes": [{"id": 0, "cpus": [0], "memory_bytes": 18446744073709551615},
                      {"id": 1, "cpus": [1], "memory_bytes": 18446744073709551615}]}"#,
    );
    refused(
        "topology",
        &["--nodes", &p],
        &["mem.json", "memory", "2^64"],
    );
}

// --- Unclear messages ---------------------------------------------------------------------

#[test]
fn negative_distances_are_shown_as_written() {
    let dir = scratch("negative");
    xml_refused(
        "neg.xml",
        "10 20 20 10 ",
        "10 -5 -5 10 ",
        &["-5", "negative"],
    );
    let json = write(
        &dir,
        "neg.json",
        r#"{"nodes": [{"id": 0, "cpus": [0], "distance": [10, -5]},
                      {"id": 1, "cpus": [1], "distance": [-5, 10]}]}"#,
    );
    refused("topology", &["--nodes", &json], &["neg.json", "-5"]);
}

#[test]
fn broken_xml_files_say_what_is_wrong() {
    let dir = scratch("broken-xml");
    let cases: [(&str, String, &str); 4] = [
        ("not-xml", "this is not XML".to_owned(), "not-xml.xml"),
        ("unclosed", XML.replace("</topology>", ""), "unclosed.xml"),
        (
            "wrong-root",
            "<?xml version=\"1.0\"?><machine/>".to_owned(),
            "machine",
        ),
        (
            "bad-type",
            xml_with(
                r#"type="Package" os_index="0""#,
                r#"type="Pakage" os_index="0""#,
            ),
            "Pakage",
        ),
    ];
    for (name, text, needle) in cases {
        let p = write(&dir, &format!("{name}.xml"), &text);
        let out = run("topology", &["--xml", &p]);
        assert_eq!(out.code, Some(2), "{name}: {out:?}");
        assert!(out.stderr.contains(needle), "{name}: {}", out.stderr);
        assert!(!out.stderr.contains("errno"), "{name}: {}", out.stderr);
    }
}

#[test]
fn broken_sysfs_dumps_name_the_file() {
    let dir = scratch("sysfs-row");
    let root = sysfs_root(&dir, &[(0, "0", "10 20"), (1, "1", "20 10 30")]);
    refused(
        "topology",
        &["--sysfs", &root],
        &["node1", "distance", "expected 2"],
    );
}

#[test]
fn cpus_as_a_cpulist_string_are_accepted() {
    let dir = scratch("cpus-string");
    let p = write(
        &dir,
        "dump.json",
        r#"{"nodes": [{"id": 0, "cpus": "0-1", "distance": [10]}]}"#,
    );
    let out = run("topology", &["--nodes", &p]);
    assert_eq!(out.code, Some(0), "{out:?}");
}

// --- One error path: failures while running, and a closed stdout -----------------------

#[test]
fn an_output_directory_that_cannot_be_written_is_a_failure() {
    let out = run("paper", &["--out", "/dev/null/tables"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(out.stderr.contains("/dev/null/tables"), "{}", out.stderr);
}

#[test]
fn a_reader_that_closes_stdout_is_not_a_panic() {
    let mut child = Command::new(example("topology"))
        .args(["--fanout", "4,4,4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("waits");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn vs_rayon_refuses_bad_counts_without_a_panic() {
    refused("vs_rayon", &["xyz"], &["ROUNDS", "\"xyz\""]);
    refused("vs_rayon", &["0"], &["ROUNDS", "\"0\""]);
    refused("vs_rayon", &["1", "-3"], &["THREADS", "\"-3\""]);
    refused(
        "vs_rayon",
        &["1", "1", "fib", "extra"],
        &["unexpected argument", "\"extra\""],
    );
}
