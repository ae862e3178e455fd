#!/usr/bin/env bash
# Other people's crates on Zonal: published crates that use rayon run their own tests, their
# rayon features on, with rayon patched onto Zonal (compat/README.md, "Other crates").
#
# The crates' published sources come through cargo (compat/other-crates, a fetch-only
# package: `cargo fetch`, then `cargo metadata` says where the registry cache holds them)
# and are copied into target/other-crates/crates/ (never into the repository). Each copy
# gets its own `[workspace]` and, as a user would write it, `[patch.crates-io]` lines for
# the repository's compat/rayon-core and compat/rayon packages; its lockfile (the one it
# was published with, or a fresh one) is moved to rayon 1.12.0 and rayon-core 1.13.0 (the
# patch's versions, or in the control run rayon's own), and `cargo metadata` must show the
# packages where the mode says. Then `cargo test` runs the tests the crate list below names.
# Per crate, the counts and a status go to target/other-crates/summary-MODE.txt, the build
# and test output to target/other-crates/logs/CRATE-MODE.log (the lockfile's moves to
# CRATE-MODE.pin.log).
#
# Usage: scripts/other-crates.sh [--patch both|core] [--control] [--report] [--clean]
#   --patch both   rayon-core and rayon patched (the default): the crates' own Producer
#                  and Consumer implementations drive Zonal's iterators.
#   --patch core   rayon-core only: rayon's own iterators on Zonal's pool.
#   --control      no patch: the published rayon, to compare with (not run in CI).
#   --report       exit 0 whatever the tests do (only a failure of the harness is non-zero).
#   --clean        delete the build directory (target/other-crates/target) at the end.
#   Exit status 0 only when every crate's tests compile and pass.
# Environment: OTHER_CRATES_TIMEOUT, seconds one crate's test run may take (default 600).
set -euo pipefail

mode=both
report=0
clean=0
usage="usage: scripts/other-crates.sh [--patch both|core] [--control] [--report] [--clean]"
while [ "$#" -gt 0 ]; do
    case "$1" in
        --patch)
            case "${2:-}" in
                both | core) mode="$2" ;;
                *)
                    echo "other-crates.sh: --patch takes both or core ($usage)" >&2
                    exit 2
                    ;;
            esac
            shift
            ;;
        --control) mode=control ;;
        --report) report=1 ;;
        --clean) clean=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "other-crates.sh: unknown argument '$1' ($usage)" >&2
            exit 2
            ;;
    esac
    shift
done

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/other-crates"
fetch_manifest="$root/compat/other-crates/Cargo.toml"
run_timeout="${OTHER_CRATES_TIMEOUT:-600}"
export CARGO_TARGET_DIR="$out/target"

script=other-crates.sh
# shellcheck source=lib/fetch.sh
. "$root/scripts/lib/fetch.sh"
need_tools cargo jq timeout

# The crates: name, version (as compat/other-crates pins it), the features that turn rayon
# on ("-" when rayon is a plain dependency), and what `cargo test` runs: the tests that
# exercise rayon (the crate's whole suite where it is cheap). Some implement rayon's
# plumbing themselves (hashbrown, indexmap, ndarray, hibitset: Producers and Consumers);
# others only call rayon (petgraph: par_iter; jwalk: its own ThreadPool, scope, spawn).
crates=(
    "hashbrown 0.17.2 rayon --lib --test rayon"
    "indexmap 2.14.2 rayon --lib"
    "ndarray 0.17.2 rayon --doc parallel"
    "hibitset 0.6.4 parallel --lib"
    "petgraph 0.8.3 rayon --test page_rank --test johnson"
    "jwalk 0.9.0 - --tests"
)

# Offline first (the cache usually has everything), online when something is missing.
offline_first cargo fetch --manifest-path "$fetch_manifest"
metadata=$(cargo metadata --format-version 1 --offline --manifest-path "$fetch_manifest")

mkdir -p "$out/logs" "$out/crates"
rm -f "$out"/logs/*-"$mode".log "$out"/logs/*-"$mode".pin.log

# prepare NAME VERSION: copies the crate's published source to $out/crates/NAME-VERSION-MODE
# with the mode's [patch.crates-io] and its own [workspace]; prints the copy's manifest.
prepare() {
    local name="$1" version="$2"
    local manifest_path src dir
    manifest_path=$(jq -r --arg n "$name" --arg v "$version" \
        '[.packages[] | select(.name == $n and .version == $v)] | first | .manifest_path // empty' \
        <<<"$metadata")
    if [ -z "$manifest_path" ]; then
        echo "other-crates.sh: $name $version is not in compat/other-crates's metadata" >&2
        exit 2
    fi
    src=$(dirname "$manifest_path")
    dir="$out/crates/$name-$version-$mode"
    rm -rf "$dir"
    cp -R "$src" "$dir"
    chmod -R u+w "$dir"
    {
        echo
        echo "# Added by scripts/other-crates.sh ($mode)."
        if [ "$mode" != control ]; then
            echo "[patch.crates-io]"
            echo "rayon-core = { path = \"$root/compat/rayon-core\" }"
            if [ "$mode" = both ]; then
                echo "rayon = { path = \"$root/compat/rayon\" }"
            fi
            echo
        fi
        echo "[workspace]"
    } >>"$dir/Cargo.toml"
    echo "$dir/Cargo.toml"
}

# pin MANIFEST FEATURE_ARGS...: the lockfile at rayon 1.12.0 and rayon-core 1.13.0 (with a patch, Cargo
# takes the patched package of that version), then checks where each comes from.
pin() {
    local manifest="$1"
    shift
    local meta package path want
    if [ ! -f "$(dirname "$manifest")/Cargo.lock" ]; then
        offline_first cargo generate-lockfile --manifest-path "$manifest" || return 1
    fi
    offline_first cargo update --manifest-path "$manifest" -p rayon-core --precise 1.13.0 ||
        return 1
    offline_first cargo update --manifest-path "$manifest" -p rayon --precise 1.12.0 || return 1
    offline_first cargo fetch --manifest-path "$manifest" || return 1
    meta=$(cargo metadata --format-version 1 --offline --manifest-path "$manifest" "$@") ||
        return 1
    for package in rayon-core rayon; do
        path=$(jq -r --arg n "$package" \
            '[.packages[] | select(.name == $n)] | map(.manifest_path) | join(" ")' <<<"$meta")
        want=registry
        if [ "$package" = rayon-core ] && [ "$mode" != control ]; then
            want=repository
        elif [ "$package" = rayon ] && [ "$mode" = both ]; then
            want=repository
        fi
        case "$want:$path" in
            "repository:$root/compat/$package/Cargo.toml") ;;
            registry:*/registry/src/*/"$package"-*/Cargo.toml) ;;
            *)
                echo "other-crates.sh: $manifest: $package should come from the $want, comes from: $path" >&2
                return 1
                ;;
        esac
    done
}

rows=()
all_ok=1
for spec in "${crates[@]}"; do
    read -r name version features args <<<"$spec"
    log="$out/logs/$name-$mode.log"
    pin_log="$out/logs/$name-$mode.pin.log"
    echo "other-crates.sh: $name $version ($mode)" >&2
    passed=-
    failed=-
    ignored=-
    manifest=$(prepare "$name" "$version")
    feature_args=()
    [ "$features" = - ] || feature_args=(--features "$features")
    # shellcheck disable=SC2086 # the test selection is words
    read -r -a test_args <<<"$args"
    : >"$log"
    if ! pin "$manifest" ${feature_args[@]+"${feature_args[@]}"} >"$pin_log" 2>&1; then
        status="patch not taken (logs/$(basename "$pin_log"))"
    # The build first (`--no-run`; doc tests have none: the library then, their build is
    # part of the run).
    elif ! if [[ " $args " == *" --doc "* ]]; then
        cargo build --offline --manifest-path "$manifest" ${feature_args[@]+"${feature_args[@]}"} \
            --lib >>"$log" 2>&1
    else
        cargo test --offline --manifest-path "$manifest" ${feature_args[@]+"${feature_args[@]}"} \
            "${test_args[@]}" --no-run >>"$log" 2>&1
    fi; then
        status="compile error"
    else
        rc=0
        timeout --kill-after=10 "$run_timeout" \
            cargo test --offline --manifest-path "$manifest" ${feature_args[@]+"${feature_args[@]}"} \
            "${test_args[@]}" >>"$log" 2>&1 || rc=$?
        results=$(sed -n 's/^test result: [^.]*\. \([0-9]*\) passed; \([0-9]*\) failed; \([0-9]*\) ignored;.*/\1 \2 \3/p' "$log")
        if [ -n "$results" ]; then
            passed=$(awk '{ s += $1 } END { print s }' <<<"$results")
            failed=$(awk '{ s += $2 } END { print s }' <<<"$results")
            ignored=$(awk '{ s += $3 } END { print s }' <<<"$results")
        fi
        if [ "$rc" -eq 0 ] && [ -n "$results" ] && [ "$passed" -gt 0 ]; then
            status=pass
        elif [ "$rc" -eq 0 ]; then
            status="no tests ran"
        elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            status="timeout (${run_timeout}s)"
        elif [ -n "$results" ] && [ "$failed" -gt 0 ]; then
            status=FAIL
        else
            status="crash (exit $rc)"
        fi
    fi
    # (The lockfile's moves above may warn on the way; the build must not.)
    if grep -q "was not used in the crate graph" "$log"; then
        status="patch not used"
    fi
    [ "$status" = pass ] || all_ok=0
    rows+=("$(printf '%-10s %-8s %-9s %6s %6s %7s  %s' \
        "$name" "$version" "${features}" "$passed" "$failed" "$ignored" "$status")")
done

summary="$out/summary-$mode.txt"
{
    echo "Other crates' own tests on Zonal (scripts/other-crates.sh, mode: $mode)"
    case "$mode" in
        both) echo "rayon-core and rayon patched onto compat/rayon-core and compat/rayon" ;;
        core) echo "rayon-core patched onto compat/rayon-core; rayon is the published 1.12.0" ;;
        control) echo "no patch: the published rayon 1.12.0 and rayon-core 1.13.0" ;;
    esac
    echo
    printf '%-10s %-8s %-9s %6s %6s %7s  %s\n' crate version features passed failed ignored status
    printf '%s\n' "${rows[@]}"
} >"$summary"
cat "$summary"
echo
echo "other-crates.sh: summary in $summary, logs in $out/logs/"

if [ "$clean" -eq 1 ]; then
    rm -rf "$out/target" "$out/crates"
fi

if [ "$all_ok" -eq 1 ]; then
    exit 0
fi
if [ "$report" -eq 1 ]; then
    echo "other-crates.sh: --report: exit 0 although not every crate's tests pass" >&2
    exit 0
fi
exit 1
