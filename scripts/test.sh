#!/usr/bin/env bash
# The test command: set-up, then every test of the workspace (unit, behaviour, property,
# stress and doc tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The example CLIs as plain binaries: tests/hostile_input.rs runs them (`cargo test` builds
# the examples that have unit tests only in test mode).
cargo build --workspace --examples
# The in-guest probe: crates/guest/tests boot it (with the workload and service examples)
# in QEMU NUMA guests.
cargo build -p zonal-guest-probe
cargo test --workspace
# The optional tokio control plane.
cargo test -p zonal-runtime --features control-plane
# Model tests of the sleep protocol under loom (their own build: a cfg for our code only).
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release sleep::loom
# Model tests of the async task's state machine under loom (preemption bound 3, seconds).
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release async_task::loom
# Model test of the live policy switch (generation and epoch) under loom.
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release policy_switch::loom
