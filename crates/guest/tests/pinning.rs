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
    common::assertions::assert_workers_pinned(&r);
    // This probe has hwloc: its phase, and its discovery agrees with the default one.
    assert!(
        r["phases"]
            .as_array()
            .expect("phases")
            .iter()
            .any(|p| p["phase"] == "after-hwloc-discovery"),
        "{r}"
    );
    assert_eq!(r["rediscovered_cpus"], r["rediscovered_cpus_hwloc"], "{r}");
}
