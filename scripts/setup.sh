#!/usr/bin/env bash
# Installs what Zonal needs to build on a fresh Debian machine: hwloc and udev headers,
# pkg-config, and Open MPI with libclang for zonal-mpi (through apt-get when root), and
# checks for a Rust toolchain.
set -euo pipefail

need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if command -v pkg-config >/dev/null 2>&1; then
  pkg-config --exists hwloc 2>/dev/null || need+=(libhwloc-dev)
  pkg-config --exists libudev 2>/dev/null || need+=(libudev-dev)
else
  need+=(libhwloc-dev libudev-dev)
fi

# jq: scripts/rayon-tests.sh reads `cargo metadata` with it.
command -v jq >/dev/null 2>&1 || need+=(jq)

# zonal-mpi (crates/mpi) and only it: Open MPI's launcher and headers (mpi-sys
# finds them through `mpicc`/pkg-config) and libclang, which bindgen loads to generate
# rsmpi's bindings at build time.
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
{ command -v pkg-config >/dev/null 2>&1 && pkg-config --exists ompi-c; } || need+=(libopenmpi-dev)
compgen -G '/usr/lib/llvm-*/lib/libclang.so' >/dev/null || need+=(libclang-dev)

"$(dirname "$0")/apt-need.sh" setup ${need[@]+"${need[@]}"}

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: no cargo on PATH; install a stable Rust toolchain (https://rustup.rs) first" >&2
  exit 1
fi

# QEMU, busybox and a kernel for the guest tests (crates/guest).
"$(dirname "$0")/setup-guest.sh"
