//! Faults and restricted cpusets in real NUMA guests, with the kernel as the witness: the
//! in-guest probe (`crates/guest-probe`, `zonal-probe faults|cpuset`) reports what the pool
//! and `/proc` say, and these tests judge it.
//!
//! - a CPU with a worker goes offline while the pool runs and comes back: nothing lost or
//!   run twice, the worker reported displaced while its CPU is away and pinned again after;
//! - a pool under `taskset -c 0-3` (and, where the guest's cgroup v2 has the cpuset
//!   controller, under a cgroup whose `cpuset.cpus` is `0-3`) uses only those CPUs; nodes 2
//!   and 3 are "CPUs not allowed", not memory-only; the memory-only node has no worker and
//!   holds a `NodeBuffer` whose pages the kernel puts on it;
//! - a node whose CPUs are all offline when the pool starts (kept offline by `maxcpus=`, or
//!   taken offline by the job) is treated like a memory-only node.
//!
//! The probe is a binary of this workspace: build it first with
//! `cargo build -p zonal-guest-probe` (the tests name the command when it is missing).

mod common;

use serde_json::Value;
use zonal_guest::{find_busybox, Guest, GuestNode, GuestRun, GuestSpec, Initramfs};

/// `nodes` nodes of `cpus` vCPUs each (64 MiB), plus `memory_only` nodes without CPUs;
/// distance 12 within a pair of nodes (0-1, 2-3, …), 20 otherwise.
fn guest(nodes: u32, cpus: u32, memory_only: u32) -> GuestSpec {
    let all = nodes + memory_only;
    let spec: Vec<GuestNode> = (0..all)
        .map(|os_id| GuestNode {
            os_id,
            cpus: if os_id < nodes { cpus } else { 0 },
            memory_mib: 64,
        })
        .collect();
    let rows = (0..all)
        .map(|i| {
            (0..all)
                .map(|j| match (i, j) {
                    _ if i == j => 10,
                    _ if i / 2 == j / 2 => 12,
                    _ => 20,
                })
                .collect()
        })
        .collect();
    GuestSpec::new(format!("{nodes}x{cpus}+{memory_only}"), spec, rows).unwrap()
}

/// Boots `spec` with the probe at `/bin/zonal-probe`, runs `job`, with `kernel_args`.
fn run(spec: GuestSpec, job: &str, kernel_args: &str) -> GuestRun {
    let initramfs = Initramfs::new(&find_busybox().unwrap())
        .unwrap()
        .binary(common::probe_binary(), "/bin/zonal-probe")
        .unwrap()
        .job(job);
    let run = common::limited(Guest::new(spec, initramfs))
        .kernel_args(kernel_args)
        .run()
        .unwrap();
    println!(
        "guest ran {:.1} s; job output:\n{}",
        run.elapsed.as_secs_f64(),
        run.job_output
    );
    run
}

/// Every `CASE name` line of the job's output and the `PROBE-RESULT` that follows it.
fn results(run: &GuestRun) -> Vec<(String, Value)> {
    let mut case = String::new();
    let mut out = Vec::new();
    for line in run.job_output.lines() {
        if let Some(c) = line.strip_prefix("CASE ") {
            case = c.trim().to_owned();
        } else if let Some(j) = line.strip_prefix("PROBE-RESULT ") {
            let v: Value = serde_json::from_str(j)
                .unwrap_or_else(|e| panic!("bad probe JSON ({e}): {j}\n{}", run.console));
            out.push((case.clone(), v));
        }
    }
    out
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// The `/proc` affinity of worker `w` in an `affinity` list of the probe.
fn affinity_of(list: &Value, w: u64) -> Vec<u32> {
    let entry = list
        .as_array()
        .unwrap_or_else(|| panic!("no affinity list: {list}"))
        .iter()
        .find(|e| e["worker"] == w)
        .unwrap_or_else(|| panic!("worker {w} not in {list}"));
    u32s(&entry["allowed"])
}

/// Checks one `cpuset` result: workers only on `allowed`, each pinned to its CPU by the
/// kernel; `kinds[os_id]` is each node's expected kind; `buffers_on` the nodes that must
/// hold a bound buffer with every page on them.
fn check_cpuset(case: &str, r: &Value, allowed: &[u32], kinds: &[&str], buffers_on: &[u32]) {
    let cpus = u32s(&r["worker_cpus"]);
    assert_eq!(cpus, allowed, "{case}: worker CPUs\n{r:#}");
    for (w, &cpu) in cpus.iter().enumerate() {
        assert_eq!(
            affinity_of(&r["affinity"], w as u64),
            [cpu],
            "{case}: the kernel's affinity of worker {w}"
        );
    }
    let nodes = r["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), kinds.len(), "{case}: nodes\n{r:#}");
    for (n, &kind) in nodes.iter().zip(kinds) {
        assert_eq!(
            n["kind"], kind,
            "{case}: kind of node {}\n{r:#}",
            n["os_id"]
        );
        let has_workers = n["workers"]["kind"] == "workers";
        assert_eq!(has_workers, kind == "cpus", "{case}: workers of {n}");
        if kind != "cpus" {
            assert_eq!(n["workers"]["kind"], kind, "{case}: why no workers: {n}");
        }
    }
    let buffers = r["buffers"].as_array().unwrap();
    for &node in buffers_on {
        let b = buffers
            .iter()
            .find(|b| b["node"] == node)
            .unwrap_or_else(|| panic!("{case}: no buffer on node {node}\n{r:#}"));
        assert_eq!(b["binding"], "bound", "{case}: {b}");
        assert_eq!(b["kernel_policy"]["Ok"]["mode"], "bind", "{case}: {b}");
        assert_eq!(
            u32s(&b["kernel_policy"]["Ok"]["nodes"]),
            [node],
            "{case}: {b}"
        );
        assert_eq!(b["pages_on_node"], 64, "{case}: pages per the kernel: {b}");
        assert_eq!(b["contents_ok"], true, "{case}: {b}");
    }
}

/// (a) A CPU with a worker goes offline under load, and comes back while the pool idles.
#[test]
fn a_cpu_going_offline_loses_nothing_and_its_worker_repins() {
    if !common::host_can_boot() {
        return;
    }
    let run = run(
        guest(4, 2, 0),
        "echo CASE faults\n/bin/zonal-probe faults",
        "",
    );
    assert_eq!(run.exit_code, 0, "console:\n{}", run.console);
    let results = results(&run);
    let (_, r) = results.first().expect("a PROBE-RESULT line");
    assert_eq!(r["failures"], serde_json::json!([]), "{r:#}");
    assert_eq!(r["lost"], 0, "{r:#}");
    assert_eq!(r["duplicated"], 0, "{r:#}");
    assert!(r["tasks"].as_u64().unwrap() >= 6_000, "{r:#}");
    let w = r["target"]["worker"].as_u64().unwrap();
    let cpu = r["target"]["cpu"].as_u64().unwrap() as u32;
    assert_ne!(cpu, 0);
    // Before: pinned to its CPU. During: the kernel widened its mask to its cpuset's
    // CPUs (the root cpuset still lists the offline CPU) and runs it elsewhere.
    assert_eq!(affinity_of(&r["affinity"]["before"], w), [cpu]);
    let during = affinity_of(&r["affinity"]["during"], w);
    assert!(during.len() > 1, "during: {during:?}");
    let entry = r["affinity"]["during"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["worker"] == w)
        .unwrap();
    assert_ne!(entry["last_cpu"], cpu, "ran on its offline CPU: {entry}");
    let online = r["cpus_online_while_offline"].as_str().unwrap();
    let online = zonal_topology::parse_cpulist(online).unwrap();
    assert!(!online.contains(&cpu), "CPU {cpu} still online: {online:?}");
    let m = &r["metrics"];
    assert_eq!(m["displaced"]["displaced"], true, "{m:#}");
    assert_eq!(m["displaced"]["pinned"], false, "{m:#}");
    assert!(m["displaced"]["displaced_workers"].as_u64().unwrap() >= 1);
    assert_eq!(
        m["during"]["repins"], 0,
        "no re-pin while the CPU is away: {m:#}"
    );
    // The pool kept completing tasks while the CPU was away.
    assert!(r["tasks_while_offline"].as_u64().unwrap() >= 2_000, "{r:#}");
    // After: pinned again (while the pool idled), and the kernel agrees.
    assert_eq!(m["after"]["pinned"], true, "{m:#}");
    assert_eq!(m["after"]["displaced"], false, "{m:#}");
    assert_eq!(m["after"]["displacements"], 1, "{m:#}");
    assert_eq!(m["after"]["repins"], 1, "{m:#}");
    assert_eq!(m["after"]["displaced_workers"], 0, "{m:#}");
    assert_eq!(affinity_of(&r["affinity"]["after"], w), [cpu]);
    // Every other worker stayed where it was.
    let before = r["affinity"]["before"].as_array().unwrap();
    for e in before {
        let i = e["worker"].as_u64().unwrap();
        assert_eq!(affinity_of(&r["affinity"]["after"], i), u32s(&e["allowed"]));
    }
    assert_eq!(r["burst_after"], 1000);
}

/// (b) `taskset -c 0-3`, and a cgroup v2 cpuset of 0-3 where the guest has one.
#[test]
fn a_restricted_cpuset_uses_its_cpus_and_names_the_other_nodes() {
    if !common::host_can_boot() {
        return;
    }
    let job = "\
echo CASE taskset
taskset -c 0-3 /bin/zonal-probe cpuset
if grep -qw cpuset /sys/fs/cgroup/cgroup.controllers 2>/dev/null \\
   && echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control \\
   && mkdir -p /sys/fs/cgroup/zonal \\
   && echo 0-3 > /sys/fs/cgroup/zonal/cpuset.cpus \\
   && echo $$ > /sys/fs/cgroup/zonal/cgroup.procs; then
  echo CASE cgroup
  cat /sys/fs/cgroup/zonal/cpuset.cpus.effective
  /bin/zonal-probe cpuset
else
  echo NO-CGROUP-CPUSET
fi
";
    let run = run(guest(4, 2, 1), job, "");
    assert_eq!(run.exit_code, 0, "console:\n{}", run.console);
    let results = results(&run);
    let kinds = [
        "cpus",
        "cpus",
        "cpus-not-allowed",
        "cpus-not-allowed",
        "memory-only",
    ];
    let taskset = results
        .iter()
        .find(|(c, _)| c == "taskset")
        .map(|(_, r)| r)
        .expect("the taskset case ran");
    check_cpuset("taskset", taskset, &[0, 1, 2, 3], &kinds, &[4]);
    assert_eq!(u32s(&taskset["nodes_with_workers"]), [0, 1]);
    assert_eq!(u32s(&taskset["cpus_not_allowed_nodes"]), [2, 3]);
    assert_eq!(u32s(&taskset["cpuless_nodes"]), [4]);
    match results.iter().find(|(c, _)| c == "cgroup") {
        Some((_, r)) => {
            check_cpuset("cgroup", r, &[0, 1, 2, 3], &kinds, &[4]);
            assert!(
                r["cgroup"].as_str().unwrap_or("").contains("/zonal"),
                "{r:#}"
            );
        }
        None => {
            assert!(
                run.job_output.contains("NO-CGROUP-CPUSET"),
                "{}",
                run.job_output
            );
            println!("this guest's cgroup v2 has no cpuset controller: cgroup case skipped");
        }
    }
}

/// (c) Node 3's CPUs never came online (`maxcpus=6`); node 2's were taken offline before
/// the pool started: both are treated like memory-only nodes, and hold bound buffers.
#[test]
fn a_node_whose_cpus_are_offline_at_start_is_treated_as_memory_only() {
    if !common::host_can_boot() {
        return;
    }
    let job = "\
echo 0 > /sys/devices/system/cpu/cpu4/online
echo 0 > /sys/devices/system/cpu/cpu5/online
echo CASE offline
cat /sys/devices/system/cpu/online
/bin/zonal-probe cpuset
";
    let run = run(guest(4, 2, 0), job, "maxcpus=6");
    assert_eq!(run.exit_code, 0, "console:\n{}", run.console);
    let results = results(&run);
    let (_, r) = results
        .iter()
        .find(|(c, _)| c == "offline")
        .expect("the offline case ran");
    check_cpuset(
        "offline",
        r,
        &[0, 1, 2, 3],
        &["cpus", "cpus", "cpus-offline", "cpus-offline"],
        &[2, 3],
    );
    assert_eq!(u32s(&r["cpuless_nodes"]), [2, 3], "{r:#}");
    assert_eq!(u32s(&r["cpus_not_allowed_nodes"]), Vec::<u32>::new());
    assert_eq!(u32s(&r["nodes"][2]["offline_cpus"]), [4, 5], "{r:#}");
    assert_eq!(u32s(&r["nodes"][3]["offline_cpus"]), [6, 7], "{r:#}");
}
