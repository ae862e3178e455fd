#!/usr/bin/env bash
# Installs what the test command (scripts/test.sh) needs on a fresh Debian machine: what
# the build needs (scripts/setup-build.sh: hwloc and udev headers, pkg-config, a Rust
# toolchain), then jq, Open MPI with libclang for zonal-mpi (through apt-get when root),
# and QEMU, busybox and a kernel for the guest tests (scripts/setup-guest.sh).
set -euo pipefail

"$(dirname "$0")/setup-build.sh"

need=()
# jq: scripts/rayon-tests.sh reads `cargo metadata` with it.
command -v jq >/dev/null 2>&1 || need+=(jq)

# zonal-mpi (crates/mpi) and only it: Open MPI's launcher and headers (mpi-sys finds them
# through `mpicc`/pkg-config) and libclang, which bindgen loads to generate rsmpi's
# bindings at build time.
command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
{ command -v pkg-config >/dev/null 2>&1 && pkg-config --exists ompi-c; } || need+=(libopenmpi-dev)
compgen -G '/usr/lib/llvm-*/lib/libclang.so' >/dev/null || need+=(libclang-dev)

"$(dirname "$0")/apt-need.sh" setup ${need[@]+"${need[@]}"}

# QEMU, busybox and a kernel for the guest tests (crates/guest).
"$(dirname "$0")/setup-guest.sh"
