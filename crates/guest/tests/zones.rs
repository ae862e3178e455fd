//! Work stays inside its root's load-balancing zone under `conservative-hard` — the zone of
//! the node its computation was rooted on, which every child inherits as its origin
//! (`origin_mismatch` counts executions whose origin is not their root's) — as the
//! guest kernel sees where it ran (`sched_getcpu` and the kernel's node CPU lists), on the
//! 4-node guest and on the S1-shaped one (16 nodes × 2 CPUs): no execution outside the zone,
//! nothing lost or run twice, stealing within the zone happened, and the `linux` control run
//! does leave the zone (so the check can fail). The real examples (`workload`, `service`)
//! run in the same boot and report no move beyond the zone and no lost task.

mod common;

use serde_json::Value;

fn run_of<'a>(zones: &'a Value, policy: &str) -> &'a Value {
    zones["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["policy"] == policy)
        .unwrap_or_else(|| panic!("no {policy} run: {zones}"))
}

fn sum_from(v: &Value, from: usize) -> u64 {
    v.as_array()
        .expect("array")
        .iter()
        .skip(from)
        .map(|x| x.as_u64().expect("count"))
        .sum()
}

/// Everything ran exactly once, with an origin, on a CPU the kernel maps to a node.
fn assert_complete(run: &Value) {
    for k in run["kinds"].as_array().expect("kinds") {
        assert_eq!(k["executions"], k["expected"], "{k}");
        for field in [
            "lost",
            "duplicated",
            "origin_mismatch",
            "no_origin",
            "unmapped",
        ] {
            assert_eq!(k[field], 0, "{field} in {k}");
        }
    }
}

fn check_zones(boot: &common::Boot, shape: &str) {
    let step = boot.step("zones");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let zones = step.probe();

    let hard = run_of(&zones, "conservative-hard");
    assert_complete(hard);
    let total = &hard["total"];
    assert_eq!(total["outside_zone"], 0, "{shape}: left the zone: {total}");
    let c = &hard["counters"];
    assert_eq!(c["steals_beyond_zone"], 0, "{c}");
    assert_eq!(c["balance_beyond_zone"], 0, "{c}");
    assert_eq!(c["migrations_beyond_zone"], 0, "{c}");
    assert!(c["balance_passes"].as_u64().unwrap_or(0) > 0, "{c}");
    // Stealing happened: some origin's work ran on two or more nodes (all in its zone,
    // since nothing ran outside it).
    let spread = total["origins_spread_over_several_nodes"]
        .as_array()
        .expect("spread");
    assert!(
        !spread.is_empty(),
        "{shape}: no work left its node at all: {total}"
    );

    let linux = run_of(&zones, "linux");
    assert_complete(linux);
    assert!(
        linux["total"]["outside_zone"].as_u64().unwrap_or(0) > 0,
        "{shape}: the linux control run never left the zone, so the conservative-hard result \
         says nothing: {}",
        linux["total"]
    );
    eprintln!(
        "{shape}: conservative-hard {} executions, {} off their node, 0 outside the zone; \
         linux {} outside the zone (steals by level {}); boot {:.1} s (cached: {})",
        total["executions"],
        total["off_origin_node"],
        linux["total"]["outside_zone"],
        linux["counters"]["steals_by_level"],
        boot.elapsed.as_secs_f64(),
        boot.cached
    );
}

fn check_examples(boot: &common::Boot, shape: &str) {
    let w = boot.step("workload");
    assert_eq!(w.rc, Some(0), "workload:\n{}", w.text);
    let w = w.json_lines();
    assert_eq!(w.len(), 1, "one JSON object from workload: {w:?}");
    let w = &w[0];
    assert_eq!(w["policy"], "conservative-hard", "{w}");
    assert_eq!(
        w["virtual"], false,
        "{shape}: workload ran on a virtual pool: {w}"
    );
    let depth = usize::try_from(w["zone_depth"].as_u64().expect("zone_depth")).expect("depth");
    assert_eq!(w["migrations_beyond_zone"], 0, "{w}");
    assert_eq!(sum_from(&w["steals_by_level"], depth), 0, "{w}");
    assert_eq!(w["moves_farther_from_origin"], 0, "{w}");
    let mix = w["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .find(|x| x["workload"] == "mix")
        .unwrap_or_else(|| panic!("no mix workload: {w}"));
    assert_eq!(mix["processes"], 48, "{mix}");

    let s = boot.step("service");
    assert_eq!(s.rc, Some(0), "service:\n{}", s.text);
    let s = s.json_lines();
    assert_eq!(s.len(), 1, "one JSON object from service: {s:?}");
    let s = &s[0];
    assert_eq!(s["policy"], "conservative-hard", "{s}");
    assert_eq!(
        s["virtual"], false,
        "{shape}: service ran on a virtual pool: {s}"
    );
    let depth = usize::try_from(s["zone_levels"].as_u64().expect("zone_levels")).expect("depth");
    assert_eq!(s["tasks_missing"], 0, "{s}");
    assert_eq!(s["tasks_repeated"], 0, "{s}");
    assert_eq!(s["tasks_completed"], s["tasks_spawned"], "{s}");
    assert!(s["tasks_spawned"].as_u64().unwrap_or(0) > 0, "{s}");
    assert_eq!(sum_from(&s["steals_by_level"], depth), 0, "{s}");
    assert_eq!(
        sum_from(&s["control_plane_migrations_by_level"], depth),
        0,
        "{s}"
    );
    eprintln!(
        "{shape}: workload steals by level {}, service {} tasks, steals by level {}, \
         control-plane moves by level {}",
        w["steals_by_level"],
        s["tasks_spawned"],
        s["steals_by_level"],
        s["control_plane_migrations_by_level"]
    );
}

#[test]
fn conservative_hard_keeps_work_in_its_zone_on_four_nodes() {
    let Some(boot) = common::numa4_boot() else {
        return;
    };
    check_zones(&boot, "numa4");
    check_examples(&boot, "numa4");
}

#[test]
fn conservative_hard_keeps_work_in_its_zone_on_s1() {
    let Some(boot) = common::s1_boot() else {
        return;
    };
    check_zones(&boot, "s1");
    check_examples(&boot, "s1");
}
