//! The `service` example end to end: the built binary runs the service load on the paper's
//! 16-node machine S1 (a virtual pool) for one second of arrivals under conservative-hard
//! and under linux, with the control plane balancing, and its JSON lines are checked:
//! every task completed exactly once, no aged task moved, conservative-hard's balance
//! moves stayed inside the zone, and linux moved tasks between nodes on the skewed load.
//!
//! The binary is the example `cargo test` builds next to this test
//! (`target/<profile>/examples/service`). Nothing here asserts on time: turnarounds are
//! only checked to be recorded.

mod common;

use common::example;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Runs `service --preset s1 --seconds 1 --json --policy POLICY` and parses its one line.
fn run_s1(policy: &str) -> Value {
    let out = Command::new(example("service"))
        .args([
            "--preset",
            "s1",
            "--seconds",
            "1",
            "--json",
            "--policy",
            policy,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "service --policy {policy}: {stderr}\n{stdout}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one JSON line per policy: {stdout}");
    serde_json::from_str(lines[0]).expect("a JSON object")
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a count: {v}"))
}

fn levels(v: &Value, key: &str) -> Vec<u64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is not a list: {v}"))
        .iter()
        .map(|x| x.as_u64().expect("a count"))
        .collect()
}

/// What every run must show, whatever the policy.
fn check_common(v: &Value, policy: &str) {
    assert_eq!(v["policy"], policy);
    assert_eq!((u(v, "nodes"), u(v, "workers")), (16, 32), "S1: {v}");
    assert_eq!(u(v, "seconds"), 1);
    assert_eq!(v["emulate_remote"], false);
    let spawned = u(v, "tasks_spawned");
    assert!(spawned > 0, "{v}");
    assert_eq!(u(v, "tasks_completed"), spawned, "{v}");
    assert_eq!((u(v, "tasks_missing"), u(v, "tasks_repeated")), (0, 0));
    let levels_n = u(v, "levels") as usize;
    assert_eq!(levels(v, "steals_by_level").len(), levels_n);
    assert_eq!(
        levels(v, "control_plane_migrations_by_level").len(),
        levels_n
    );
    assert!(u(v, "control_plane_passes") > 0, "{v}");
    for q in ["mean", "p50", "p99"] {
        assert!(
            v["turnaround_ms"][q].as_f64().is_some_and(|x| x > 0.0),
            "{v}"
        );
    }
}

#[test]
fn conservative_hard_completes_every_task_and_balances_inside_the_zone() {
    let v = run_s1("conservative-hard");
    check_common(&v, "conservative-hard");
    assert_eq!(v["age_limit"], 3, "{v}");
    assert_eq!(u(&v, "moves_after_aged"), 0, "{v}");
    assert_eq!(u(&v, "worker_moves_after_aged"), 0, "{v}");
    let zone = u(&v, "zone_levels") as usize;
    assert!(
        zone < u(&v, "levels") as usize,
        "S1's zone is not every level: {v}"
    );
    for key in ["control_plane_migrations_by_level", "steals_by_level"] {
        let by_level = levels(&v, key);
        assert!(
            by_level[zone..].iter().all(|&n| n == 0),
            "{key} beyond the zone (levels {zone}..): {by_level:?}"
        );
    }
}

#[test]
fn linux_moves_tasks_between_nodes_on_the_skewed_load() {
    let v = run_s1("linux");
    check_common(&v, "linux");
    assert_eq!(v["age_limit"], Value::Null, "{v}");
    assert_eq!(u(&v, "aged_tasks"), 0, "linux never ages tasks: {v}");
    let beyond = |key: &str| levels(&v, key).iter().skip(1).sum::<u64>();
    let moved = beyond("control_plane_migrations_by_level") + beyond("steals_by_level");
    assert!(moved > 0, "no migration beyond level I: {v}");
    assert_eq!(u(&v, "migrations_beyond_node"), moved);
}
