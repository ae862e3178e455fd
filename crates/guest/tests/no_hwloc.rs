//! `cargo add zonal` on Linux needs no libhwloc: a probe built without libhwloc
//! (`--no-default-features`, see [`common::NOHWLOC_PROBE_BUILD`]) links none, its initramfs holds
//! none, and in the 4-node guest, where no libhwloc exists, its workers stay pinned (each worker's
//! kernel affinity exactly its CPU, distinct CPUs) and every page of every `NodeBuffer` lies on its
//! node (`move_pages`): what `pinning.rs` and `memory.rs` assert of the default build.

mod common;

use std::process::Command;

/// What `ldd` prints for `binary` (its shared libraries, one a line).
fn ldd(binary: &std::path::Path) -> String {
    let out = Command::new("ldd")
        .arg(binary)
        .output()
        .unwrap_or_else(|e| panic!("ldd {}: {e}", binary.display()));
    assert!(out.status.success(), "ldd {}: {out:?}", binary.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_probe_links_no_libhwloc() {
    let probe = common::nohwloc_probe_binary();
    let libs = ldd(&probe);
    // Dynamically linked (glibc), so ldd's list is the real one.
    assert!(libs.contains("libc.so"), "{}:\n{libs}", probe.display());
    assert!(!libs.contains("libhwloc"), "{}:\n{libs}", probe.display());
}

#[test]
fn its_initramfs_holds_no_libhwloc() {
    let probe = common::nohwloc_probe_binary();
    if !common::host_can_boot() {
        return;
    }
    let initramfs = common::initramfs(&[(probe, "/bin/zonal-probe")]);
    let paths: Vec<&str> = initramfs.paths().collect();
    assert!(paths.contains(&"/bin/zonal-probe"), "{paths:?}");
    assert!(
        paths.iter().any(|p| p.contains("/libc.so")),
        "the probe's libraries are missing: {paths:?}"
    );
    assert!(
        !paths.iter().any(|p| p.contains("hwloc")),
        "libhwloc in the initramfs: {paths:?}"
    );
}

#[test]
fn workers_stay_pinned_and_memory_stays_local_without_hwloc() {
    let Some(boot) = common::numa4_nohwloc_boot() else {
        return;
    };
    eprintln!(
        "numa4 boot without hwloc: {:.1} s (cached: {})",
        boot.elapsed.as_secs_f64(),
        boot.cached
    );
    let libs = boot.step("shared-libraries");
    assert_eq!(libs.rc, Some(0), "{}", libs.text);
    assert!(libs.text.contains("/libc.so"), "{}", libs.text);
    assert!(
        !libs.text.contains("hwloc"),
        "libhwloc in the guest:\n{}",
        libs.text
    );

    let step = boot.step("pinning");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    let r = step.probe();
    assert_eq!(r["hwloc"], false, "the probe was built with hwloc: {r}");
    assert!(r.get("rediscovered_cpus_hwloc").is_none(), "{r}");
    let phases: Vec<&str> = r["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| p["phase"].as_str().unwrap_or(""))
        .collect();
    assert!(!phases.contains(&"after-hwloc-discovery"), "{phases:?}");
    // The default discovery (sysfs) finds the guest's 8 CPUs with no libhwloc present.
    assert_eq!(
        r["rediscovered_cpus"],
        serde_json::json!({ "Ok": 8 }),
        "{r}"
    );
    common::assertions::assert_workers_pinned(&r);

    let step = boot.step("memory");
    assert_eq!(step.rc, Some(0), "{}", step.text);
    common::assertions::assert_buffers_on_their_nodes(&step.probe());
}
