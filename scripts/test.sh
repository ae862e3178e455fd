#!/usr/bin/env bash
# The test command: set-up, then every test of the workspace (unit, behaviour, property,
# stress and doc tests).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace
# The optional tokio control plane.
cargo test -p zonal-runtime --features control-plane
