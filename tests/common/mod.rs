//! Helpers shared by the tests that run the example binaries.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The example binary `name`, built next to the test binary (`target/<profile>/examples/`;
/// `cargo test` builds only the examples with tests, so `scripts/test.sh` runs
/// `cargo build --examples` first).
pub(crate) fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/..");
    let bin = dir.join("examples").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --examples` first (scripts/test.sh does)",
        bin.display()
    );
    bin
}
