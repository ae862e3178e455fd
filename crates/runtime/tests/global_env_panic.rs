//! An invalid `ZONAL_NUM_THREADS` makes the lazily built global pool panic with a message
//! naming the variable and the value (no silent default). The check runs in a child process
//! (this test binary again), since the global pool is process-wide.

use std::process::Command;

const CHILD: &str = "ZONAL_TEST_GLOBAL_ENV_CHILD";

#[test]
fn child_uses_the_global_pool() {
    if std::env::var_os(CHILD).is_none() {
        return; // only meaningful in the child
    }
    let _ = zonal_runtime::current_num_threads();
}

#[test]
fn an_invalid_value_panics_naming_the_variable_and_the_value() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_uses_the_global_pool", "--nocapture"])
        .env(CHILD, "1")
        .env(zonal_runtime::NUM_THREADS_VAR, "lots")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("cannot build the global thread pool")
            && stderr.contains("ZONAL_NUM_THREADS")
            && stderr.contains("lots"),
        "{stderr}"
    );
}
