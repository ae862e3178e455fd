//! In the 4-node guest, every worker's kernel affinity (`Cpus_allowed_list`) is exactly its
//! CPU in every phase of `zonal-probe pinning`, and the workers cover distinct CPUs.

mod common;

#[test]
fn workers_stay_pinned_in_every_phase_on_four_nodes() {
    let Some(boot) = common::numa4_boot() else {
        return;
    };
    let step = boot.step("pinning");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
    eprintln!(
        "numa4 boot: {:.1} s (cached: {})",
        boot.elapsed.as_secs_f64(),
        boot.cached
    );
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
    for want in [
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
        "after-hwloc-discovery",
        "final",
    ] {
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
    assert_eq!(r["rediscovered_cpus"], r["rediscovered_cpus_hwloc"], "{r}");
    assert!(
        r["balance_passes"].as_u64().unwrap_or(0) > 0,
        "the control plane never balanced: {r}"
    );
    for b in r["buffers"].as_array().expect("buffers") {
        assert_eq!(b["placement"], "bound", "{b}");
    }
}
