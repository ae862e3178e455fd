//! The locality figure on the S1-shaped guest (16 nodes × 2 CPUs, QEMU TCG): per policy, a
//! service-like load of async tasks with node-bound state; the share of slices that ran on
//! their data's node and within its zone, as the guest kernel reports both. Placement and
//! correctness only: TCG models no memory latency, so nothing here is a speed.

mod common;

use serde_json::Value;

fn table(rows: &[Value]) -> String {
    let mut out = format!(
        "{:<18} {:>6} {:>9} {:>8} {:>7}  {:<28} {}\n",
        "policy",
        "slices",
        "on-node",
        "in-zone",
        "passes",
        "steals by level",
        "balancer moves by level"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<18} {:>6} {:>9.3} {:>8.3} {:>7}  {:<28} {}\n",
            r["policy"].as_str().unwrap_or("?"),
            r["slices"],
            r["on_data_node_share"].as_f64().unwrap_or(f64::NAN),
            r["in_data_zone_share"].as_f64().unwrap_or(f64::NAN),
            r["balance_passes"],
            r["steals_by_level"].to_string(),
            r["balance_migrations_by_level"]
        ));
    }
    out
}

#[test]
fn locality_figure_on_s1() {
    let Some(boot) = common::s1_boot() else {
        return;
    };
    let step = boot.step("locality");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
    let rows = r["policies"].as_array().expect("policies");
    eprintln!(
        "S1-shaped QEMU TCG guest (placement, not speed; boot {:.1} s, cached: {}):\n{}",
        boot.elapsed.as_secs_f64(),
        boot.cached,
        table(rows)
    );
    for name in ["linux", "conservative-hard", "conservative-soft"] {
        assert!(rows.iter().any(|p| p["policy"] == name), "{name} missing");
    }
    for p in rows {
        assert_eq!(p["slices"], p["slices_expected"], "{p}");
        assert_eq!(p["unmapped"], 0, "{p}");
        assert_eq!(
            p["data_on_home"], p["tasks"],
            "state not on its home node: {p}"
        );
        assert_eq!(p["data_moved"], 0, "{p}");
        let on = p["on_data_node_share"].as_f64().expect("share");
        let zone = p["in_data_zone_share"].as_f64().expect("share");
        assert!(
            (0.0..=1.0).contains(&on) && (0.0..=1.0).contains(&zone),
            "{p}"
        );
        assert!(on <= zone, "on the node implies in the zone: {p}");
    }
    let hard = rows
        .iter()
        .find(|p| p["policy"] == "conservative-hard")
        .expect("hard");
    assert_eq!(hard["in_data_zone"], hard["slices"], "{hard}");
    assert_eq!(hard["migrations_beyond_zone"], 0, "{hard}");
}
