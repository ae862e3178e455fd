//! Tests that need something of the machine (two CPUs, working pinning): where it is
//! missing they are skipped, unless something requires them — `CI=true` (CI services set
//! it) or `ZONAL_TESTS_REQUIRED` set to anything (`scripts/test.sh` sets it) —, and then
//! they fail, naming what is missing, rather than pass without running.
//!
//! One copy: the behaviour tests include it with `#[path]`, and so do the runtime's unit
//! tests.

#![allow(dead_code, unreachable_pub)]

/// Whether a test that cannot run here must fail: `CI` is `true`, or
/// `ZONAL_TESTS_REQUIRED` is set.
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
        || std::env::var_os("ZONAL_TESTS_REQUIRED").is_some()
}

/// A test cannot run here, for `why`: fails it when [`required`], else says so on stderr
/// (the caller then returns).
#[track_caller]
pub fn cannot_run(why: &str) {
    assert!(
        !required(),
        "this test must run here (CI=true or ZONAL_TESTS_REQUIRED is set), but {why}"
    );
    eprintln!("skipped: {why} (CI=true or ZONAL_TESTS_REQUIRED would make this a failure)");
}
