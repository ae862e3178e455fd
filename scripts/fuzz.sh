#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ for a bounded time (default 600 s each), one after the
# other: scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`); not part of CI.
# A crash or a panic stops the run with a non-zero status and leaves the input under
# fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(nodes_json xml sysfs distance_matrix policy_config)
fi
for t in "${targets[@]}"; do
  echo "== fuzz $t for ${secs} s"
  mkdir -p "fuzz/corpus/$t"
  # Seeds: the valid machine descriptions of the test data, so that mutations reach the
  # checks that come after parsing.
  case "$t" in
    xml) cp -n crates/topology/tests/hostile/two-nodes.xml \
           crates/topology/tests/data/16amd64-4distances.xml "fuzz/corpus/$t/" ;;
    nodes_json) cp -n crates/topology/tests/data/128arm-2pa2n8cluster4co.json "fuzz/corpus/$t/" ;;
  esac
  # -O: the release profile of fuzz/Cargo.toml (our debug assertions on, hwlocality's off).
  # -rss_limit_mb and -timeout turn memory blow-ups and hangs into findings.
  # libhwloc leaks the objects it allocated when it refuses a document (its error paths,
  # not ours): leak detection is off for the target that calls it.
  extra=()
  asan="${ASAN_OPTIONS:-}"
  if [ "$t" = xml ]; then extra=(-detect_leaks=0); asan="detect_leaks=0${asan:+:$asan}"; fi
  ASAN_OPTIONS="$asan" cargo +nightly fuzz run -O "$t" "fuzz/corpus/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=4096 -timeout=10 "${extra[@]}"
done
