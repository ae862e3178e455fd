#!/usr/bin/env bash
# The test command: set-up, then every test of the workspace (unit, behaviour, property,
# stress and doc tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Disk. A full disk fails the build in the linker with a message that names neither the
# disk nor the space (a CI run failed so, 17 min in), so the space left is printed after
# each stage, and the run keeps its target directories small:
# - debug info is line tables only (backtraces keep their files and lines): full debug info
#   is most of each test binary's size, and the workspace links about a hundred of them;
# - a one-shot build (CI's fresh clone) gains nothing from incremental caches, which would
#   roughly double the target directory;
# - in CI, a stage's own target directory (rayon's tests, loom, Miri, the packages) goes
#   once the stage has passed; a local run keeps them, for the next run's sake.
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CARGO_PROFILE_TEST_DEBUG=line-tables-only
if [ "${CI:-}" = true ]; then
    export CARGO_INCREMENTAL=0
fi
disk() {
    df -h . | tail -n 1 | awk -v at="$1" '{print "test.sh: disk " $4 " free of " $2 " (" at ")"}'
}
stage_done() {
    disk "$1"
    if [ "${CI:-}" = true ] && [ -n "${2:-}" ]; then
        rm -rf "$2"
    fi
}
disk start
# The toolchain is at least the workspace's rust-version (Cargo.toml, [workspace.package]),
# the oldest one `zonal`'s default build supports (scripts/msrv.sh, at the end, builds it).
need=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
have=$(rustc --version | awk '{print $2}')
if [ "$(printf '%s\n%s\n' "$need" "${have%%-*}" | sort -V | head -n 1)" != "$need" ]; then
    echo "test.sh: rustc $have is older than rust-version $need (Cargo.toml)" >&2
    exit 1
fi
# The example CLIs and the in-guest probe as plain binaries: tests/hostile_input.rs runs
# the examples, and the guest tests (crates/guest/tests) boot Linux under QEMU as NUMA
# machines with them inside (`cargo test` builds examples only in test mode, and another
# package's binaries not at all).
cargo build --workspace --bins --examples
stage_done "workspace binaries"
# The reproduction report (crates/sim/REPRODUCTION.md and its JSON) is what the generator
# writes now, verdict table included: regenerated and compared byte for byte.
scripts/check-reproduction.sh
# One Zonal pool per MPI rank: the distributed heat example under Open MPI, two
# ranks on this machine (bound by the launcher's default, or oversubscribed where it has
# fewer CPUs; crates/mpi/tests/mpirun.rs runs them unbound); its last line is rank 0's
# check against a serial run of the whole grid. Open MPI refuses root unless told.
# What zonal-mpi adds to CI, measured on 2 shared cores: its build above about 60 s cold
# (mpi-sys runs bindgen over the MPI headers), this run and its tests (cargo test below)
# under 10 s, its package verification at the end about 30 s.
mpi_root=()
[ "$(id -u)" = "0" ] && mpi_root=(--allow-run-as-root)
if ! heat=$(mpirun -np 2 --oversubscribe ${mpi_root[@]+"${mpi_root[@]}"} target/debug/examples/heat 2>&1); then
    echo "$heat" >&2
    echo "test.sh: mpirun -np 2 target/debug/examples/heat failed" >&2
    exit 1
fi
echo "$heat"
if ! echo "$heat" | grep '^heat: answer' | tail -n 1 | grep -q '^heat: answer ok'; then
    echo "test.sh: the heat example's answer is not ok" >&2
    exit 1
fi
# The probe without hwloc, for crates/guest/tests/no_hwloc.rs (own target dir: 60-70 s cold).
cargo build -p zonal-guest-probe --no-default-features --target-dir target/nohwloc
# The guest tests must run here: a host that cannot boot them fails rather than skips.
ZONAL_GUEST_REQUIRED=1 cargo test --workspace
stage_done "workspace tests" target/nohwloc
# Without hwloc (`cargo add zonal` on Linux needs no libhwloc): the facade builds,
# zonal-topology's tests pass (discovery through sysfs), and no libhwloc binding is in
# zonal's normal graph, with or without its default features. `cargo tree -i` prints
# nothing for a package of the lockfile outside the graph, and fails for one that is not in
# the lockfile at all: both pass.
cargo build -p zonal --no-default-features
cargo test -p zonal-topology --no-default-features
for flags in --no-default-features --features=; do
    if hw=$(cargo tree -p zonal "$flags" -e normal -i hwlocality-sys 2>/dev/null) && [ -n "$hw" ]; then
        echo "test.sh: zonal ($flags) depends on hwlocality-sys:" >&2
        echo "$hw" >&2
        exit 1
    fi
done
# MPI stays in zonal-mpi (no other user pays for its build): no other workspace package has
# rsmpi (`mpi`, `mpi-sys`) in its graph, any feature, any target, dev-dependencies
# included; zonal-mpi itself does (so the check can see it).
if ! cargo tree -p zonal-mpi -i mpi-sys >/dev/null 2>&1; then
    echo "test.sh: zonal-mpi's graph has no mpi-sys: the check below would see nothing" >&2
    exit 1
fi
for p in $(cargo metadata --no-deps --format-version 1 | jq -r '.packages[].name'); do
    [ "$p" = zonal-mpi ] && continue
    for dep in mpi mpi-sys; do
        if m=$(cargo tree -p "$p" --all-features --target all -i "$dep" 2>/dev/null) && [ -n "$m" ]; then
            echo "test.sh: $p depends on $dep (only zonal-mpi may):" >&2
            echo "$m" >&2
            exit 1
        fi
    done
done
# Light by default (a user's build stays small): at most 20 unique packages in zonal's normal graph
# with its default features, the four Zonal crates included (19 when written; README, "Features").
packages=$(cargo tree -p zonal -e normal --prefix none | sed 's/ (\*)//' | sort -u | wc -l)
if [ "$packages" -gt 20 ]; then
    echo "test.sh: zonal's default build lists $packages unique packages (at most 20):" >&2
    cargo tree -p zonal -e normal --prefix none | sed 's/ (\*)//' | sort -u >&2
    exit 1
fi
# rayon 1.12's and rayon-core 1.13's own integration tests against Zonal, through shim
# crates named `rayon` and `rayon_core` whose libs are compat/rayon's and compat/rayon-core's
# (the packages a `[patch.crates-io]` uses), every file, nothing filtered
# (compat/README.md): all 23 files must pass. About 1 min warm, 3 from a cold cache.
scripts/rayon-tests.sh
stage_done "rayon's tests" target/rayon-compat/debug
# A whole dependency tree on Zonal (README; compat/README.md): the `rayon-core` and `rayon`
# packages (their own workspace, outside this one, so `cargo fmt --all` and `cargo clippy
# --workspace` below do not reach them): their tests (extension traits on rayon's types,
# RAYON_NUM_THREADS in child processes, the README's patch lines built and run in
# throwaway packages: the path lines both ways, the git lines from this repository's HEAD),
# formatting and lints; then the example program on ndarray
# and hashbrown through the patch, on this machine and on a 16-node virtual one. About
# 4.5 min cold on 2 cores shared with another CI run (load 15; 2.7 min warm, most of it the
# README test's builds of its throwaway packages: Zonal from the path and from git).
# (The facade's `rayon-env` code is built only under the patch: linted here on its own.)
cargo clippy -p zonal-runtime --lib --features rayon-env -- -D warnings
CARGO_TARGET_DIR=target/compat cargo test --manifest-path compat/Cargo.toml
cargo fmt --manifest-path compat/Cargo.toml --all --check
cargo fmt --manifest-path compat/example/Cargo.toml --check
CARGO_TARGET_DIR=target/compat cargo clippy --manifest-path compat/Cargo.toml --all-targets \
    -- -D warnings
CARGO_TARGET_DIR=target/compat cargo clippy --manifest-path compat/example/Cargo.toml \
    -- -D warnings
RUSTDOCFLAGS="-D warnings" CARGO_TARGET_DIR=target/compat \
    cargo doc --manifest-path compat/Cargo.toml --no-deps
CARGO_TARGET_DIR=target/compat cargo run --manifest-path compat/example/Cargo.toml
CARGO_TARGET_DIR=target/compat cargo run --manifest-path compat/example/Cargo.toml -- s1
stage_done "the rayon packages and the example" target/compat
# Six published crates' own tests (hashbrown, indexmap, ndarray, hibitset, petgraph, jwalk;
# their rayon features on) with rayon-core and rayon patched onto Zonal: every crate must
# pass (compat/README.md, "Other crates"; `--patch core` and `--control` are the other
# modes, not run here). About 7 min cold on 2 cores shared with another CI run (load 15;
# jwalk's dev-dependencies, gix-testtools and criterion, are 2.7 min of it), 1.1 min warm;
# 1.1 GB of build, dropped once it passes.
scripts/other-crates.sh
stage_done "other crates" target/other-crates
# The optional tokio control plane.
cargo test -p zonal-runtime --features tokio,control-plane
# The documentation, with warnings denied (a broken intra-doc link fails): the default
# features, then every feature (as docs.rs builds the facade). The README's code blocks
# ran in the workspace tests above, as doc tests of the facade.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features
# Model tests of the sleep protocol under loom (their own build: a cfg for our code only).
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release sleep::loom
# Model tests of the async task's state machine under loom (preemption bound 3, seconds).
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release async_task::loom
# Model test of the live policy switch (generation and epoch) under loom.
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release policy_switch::loom
# Model tests of the job-block slabs (remote frees racing the owner's allocation and trim).
RUSTFLAGS="--cfg zonal_loom" CARGO_TARGET_DIR=target/loom \
    cargo test -p zonal-runtime --lib --release blocks::loom
stage_done "loom models" target/loom
# Miri over node-local memory (`NodeBuffer`: the split fill on the node's workers, zero-sized
# and empty buffers, drop; the kernel's calls are `cfg(miri)` stubs, src/os/miri.rs) and an
# adopted worker (`use_current_thread`). Miri needs a nightly toolchain, which rustup brings:
# the one installed, else the current nightly (minimal profile). About 3 min cold on 2 cores
# (Miri's sysroot and the dependencies under Miri), 1.5 min of tests. Uncaptured: a panic on a
# worker thread (which aborts) prints its message rather than into a test's lost buffer.
if rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup component add --toolchain nightly miri rust-src
else
    rustup toolchain install nightly --profile minimal --component miri --component rust-src
fi
MIRIFLAGS="-Zmiri-disable-isolation -Zmiri-ignore-leaks" \
    cargo +nightly miri test -p zonal-runtime --lib memory -- --nocapture
stage_done Miri target/miri
# Every published crate packaged as crates.io would receive it, and each package built from
# its .crate file against the others' (a temporary local registry): a file a build needs
# but the package leaves out fails here. zonal-guest, zonal-guest-probe and zonal-examples
# (the example programs and benches) are not published (publish = false); zonal-mpi is
# (its build needs the MPI packages setup.sh installs). --allow-dirty:
# the check is of this working tree, which the tests above may have written to; publishing
# itself is done from a clean one. About 15 s once the workspace is built (90 s from a cold
# cache, on 2 cores).
# cargo unpacks each verified package into its registry source cache, keyed by the temporary
# registry's path and the version, and never unpacks the same version twice: a checkout at
# the same path (CI's) would verify against a previous run's sources. Those unpacked copies
# of our own crates go first.
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
for crate in zonal zonal-topology zonal-policy zonal-runtime zonal-sim zonal-mpi; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"$crate-$version"
done
cargo package --workspace --exclude zonal-guest --exclude zonal-guest-probe \
    --exclude zonal-examples --allow-dirty
stage_done packages target/package
# The NUMA kit: its criterion bench run once as a test (each workload on Zonal's three
# policies, rayon and tokio, at the --quick size; the runtimes' results compared). The
# report itself runs in `cargo test --workspace` above: crates/examples/tests/numa_report.rs
# on this machine (about 25 s) and crates/guest/tests/numa_report.rs in the 4-node guest
# (about 2 min on 2 shared cores). This bench run: about 25 s once built.
cargo test -p zonal-examples --bench numa
# The parallel loops' benches (issue 42) run once as a test: each shape on Zonal and rayon,
# small, the runtimes' results compared (a few seconds once built).
cargo test -p zonal-examples --bench loops
# The library's tokio features are those it uses (`rt`; the control plane adds `net`,
# `time`, `sync`): `tokio` and `control-plane` bring no proc-macro crate (`macros`) and no
# multi-thread scheduler (`rt-multi-thread`), which the user's own tokio turns on if wanted.
for feature in tokio control-plane; do
    tokio_features=$(cargo tree -p zonal --features "$feature" -e normal --prefix none \
        -f '{p} {f}' | grep '^tokio v' | sort -u)
    if [ -z "$tokio_features" ]; then
        echo "test.sh: zonal --features $feature has no tokio: the check below would see nothing" >&2
        exit 1
    fi
    if cargo tree -p zonal --features "$feature" -e normal | grep -q tokio-macros \
        || echo "$tokio_features" | grep -Eq 'macros|rt-multi-thread'; then
        echo "test.sh: zonal --features $feature enables tokio's macros or rt-multi-thread:" >&2
        echo "$tokio_features" >&2
        exit 1
    fi
done
# The MSRV: `zonal` with default features builds with Debian 12's rustc 1.85, the
# declared rust-version (installed through apt-get if missing; fails, never skips, when it
# cannot be). About 1 min on 2 cores with the toolchain cold-installed and its own target
# directory cold.
scripts/msrv.sh
stage_done MSRV target/msrv
