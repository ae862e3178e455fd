#!/usr/bin/env bash
# Installs what building the default members (the facade and the example programs, the
# main job's `cargo build --release --examples`) needs on a fresh Debian machine: hwloc's
# and udev's headers and pkg-config (through apt-get when root), and checks for a Rust
# toolchain. The test command's extra set-up (MPI, libclang, jq, the guests' QEMU) is
# scripts/setup.sh's.
set -euo pipefail

need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if command -v pkg-config >/dev/null 2>&1; then
  pkg-config --exists hwloc 2>/dev/null || need+=(libhwloc-dev)
  pkg-config --exists libudev 2>/dev/null || need+=(libudev-dev)
else
  need+=(libhwloc-dev libudev-dev)
fi

"$(dirname "$0")/apt-need.sh" setup-build ${need[@]+"${need[@]}"}

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup-build: no cargo on PATH; install a stable Rust toolchain (https://rustup.rs) first" >&2
  exit 1
fi
