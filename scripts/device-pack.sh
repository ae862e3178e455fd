#!/usr/bin/env bash
# Packs the release example programs, and the shared libraries they link that a bare machine
# may lack (libhwloc, libudev, libpciaccess, libxml2), into .devicepack/ at the repository
# root (ignored by git), with a run.sh that measures them there. For a second machine with
# no network and no Rust toolchain (BENCHMARKS.md's 16-core figures came from one).
#
# Usage, from the repository root:
#   scripts/device-pack.sh                 # this tree's programs
#   scripts/device-pack.sh BEFORE_DIR      # also BEFORE_DIR's programs (built from an older
#                                          # commit), as NAME_before, alternated with these
# Then, on the other machine, from the directory holding .devicepack/:
#   sh .devicepack/run.sh                  # results under $OUT (default: out/)
set -euo pipefail
cd "$(dirname "$0")/.."
before=${1:-}
programs="rayon_demo scaling service topology vs_rayon"
cargo build --release --examples
rm -rf .devicepack && mkdir -p .devicepack/bin .devicepack/lib
for n in $programs; do
    cp "target/release/examples/$n" .devicepack/bin/
    if [ -n "$before" ]; then
        if [ ! -x "$before/$n" ]; then
            echo "device-pack.sh: $before/$n is missing or not executable" >&2
            exit 2
        fi
        cp "$before/$n" ".devicepack/bin/${n}_before"
    fi
done
ldd .devicepack/bin/* 2>/dev/null \
    | grep -oE '/[^ ]*lib(hwloc|udev|pciaccess|xml2)[^ ]*' | sort -u \
    | xargs -r -I{} cp -L {} .devicepack/lib/
cat > .devicepack/run.sh <<'RUN'
#!/bin/sh
# The machine report, the scaling curve, the rayon-demo programs (paired with rayon in one
# process), the paired fib/scope/sum and the service load; with *_before binaries present,
# each timed program runs before/after alternated, so both see the same machine state.
set -u
export LD_LIBRARY_PATH="$PWD/.devicepack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
B=.devicepack/bin
out=${OUT:-out}; mkdir -p "$out"
{ nproc; lscpu 2>/dev/null | head -20; } > "$out/machine.txt"
$B/topology > "$out/topology.txt" 2>&1
sides="after"; [ -x $B/rayon_demo_before ] && sides="before after"
# One file per program and side, runs appended (the device tool returns a few files only).
for i in 1 2; do
    for s in $sides; do
        if [ "$s" = before ]; then x=_before; else x=; fi
        $B/rayon_demo$x --threads 1,2,4,8,16 --rounds 7 --json >> "$out/rayon_demo_$s.jsonl" 2>&1
        $B/vs_rayon$x 31 >> "$out/vs_rayon_$s.txt" 2>&1
    done
done
for s in $sides; do
    if [ "$s" = before ]; then x=_before; else x=; fi
    $B/scaling$x --rounds 9 --out "$out/scaling_$s" > "$out/scaling_$s.txt" 2>&1
done
$B/service --policy all --seconds 2 > "$out/service.txt" 2>&1
ls -la "$out"
RUN
chmod +x .devicepack/run.sh
grep -qx '/.devicepack/' .gitignore || echo "device-pack.sh: add /.devicepack/ to .gitignore" >&2
du -sh .devicepack
