//! `ZONAL_NUM_THREADS` and the lazily built global pool: a count sizes it; a value that is
//! not a count falls back to the default count (as rayon's `RAYON_NUM_THREADS` does) rather
//! than panicking at the first parallel call. The checks run in child processes (this test
//! binary again), since the global pool is process-wide.

use std::process::Command;

const CHILD: &str = "ZONAL_TEST_GLOBAL_ENV_CHILD";

/// In the child: uses the global pool, prints its worker count.
#[test]
fn child_uses_the_global_pool() {
    if std::env::var_os(CHILD).is_none() {
        return; // only meaningful in the child, which the tests below run
    }
    let (a, b) = zonal_runtime::join(|| 1, || 2);
    println!(
        "global pool: {} workers, {}",
        zonal_runtime::current_num_threads(),
        a + b
    );
}

/// The child's line with `value` in the variable.
fn child_with(value: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_uses_the_global_pool", "--nocapture"])
        .env(CHILD, "1")
        .env(zonal_runtime::NUM_THREADS_VAR, value)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    stdout
        .lines()
        .find(|l| l.starts_with("global pool: "))
        .unwrap_or_else(|| panic!("the child printed no worker count: {stdout}\n{stderr}"))
        .to_owned()
}

#[test]
fn a_count_sizes_the_lazy_global_pool() {
    assert_eq!(child_with("3"), "global pool: 3 workers, 3");
}

#[test]
fn an_invalid_value_falls_back_to_the_default_count() {
    let default = zonal_runtime::ThreadPoolBuilder::new()
        .no_policy()
        .build()
        .unwrap()
        .num_workers();
    for garbage in ["lots", "-1", "2.5", ""] {
        assert_eq!(
            child_with(garbage),
            format!("global pool: {default} workers, 3"),
            "{garbage:?}"
        );
    }
}
