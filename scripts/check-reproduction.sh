#!/usr/bin/env bash
# The reproduction report is generated and deterministic: crates/sim/REPRODUCTION.md and
# crates/sim/reproduction/ (JSON, SVG) as committed must be exactly what the generator writes
# now. Regenerates them into a temporary directory (same `--out crates/sim`, so the command
# line the report prints is the same) and fails on any difference, listing it. The verdict
# table at the top of the report is computed from these runs, so a change to the simulator,
# a policy or the tolerances that moves a verdict fails here until the report is regenerated
# and committed:
#
#     cargo run --release --example paper -- --reproduction --out crates/sim
#
# Cost: the release build of the paper example (about 3 min cold on 2 cores), then the
# 25,509 runs (about 2.5 min on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p zonal-examples --example paper
bin="$PWD/target/release/examples/paper"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/crates/sim"
start=$(date +%s)
(cd "$tmp" && "$bin" --reproduction --out crates/sim >/dev/null)
echo "check-reproduction: regenerated in $(($(date +%s) - start)) s"
status=0
diff -u crates/sim/REPRODUCTION.md "$tmp/crates/sim/REPRODUCTION.md" || status=1
diff -ru crates/sim/reproduction "$tmp/crates/sim/reproduction" || status=1
if [ "$status" -ne 0 ]; then
    echo "check-reproduction: crates/sim/REPRODUCTION.md or crates/sim/reproduction/ differs" \
        "from what the generator writes now; regenerate with" \
        "'cargo run --release --example paper -- --reproduction --out crates/sim' and commit" >&2
    exit 1
fi
echo "check-reproduction: the committed report is what the generator writes"
