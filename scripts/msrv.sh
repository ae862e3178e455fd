#!/usr/bin/env bash
# The MSRV check: `zonal` with its default features builds with the oldest toolchain it
# declares (`rust-version` in Cargo.toml's [workspace.package]), Debian 12's rustc 1.85
# (a build, not the tests: the dev-dependencies need newer).
#
# - The toolchain: Debian 12's rustc-web/cargo-web 1.85 at /usr/bin, beside rustup's
#   proxies in ~/.cargo/bin (which stay first on PATH for everything else). Installed with
#   apt-get when missing; the check fails when it cannot be installed, it never skips.
# - The dependencies: resolved for 1.85 (`incompatible-rust-versions = "fallback"`: the
#   newest version of each whose rust-version 1.85 meets), by the current cargo into a
#   lockfile of a copy of the workspace (target/msrv/ws: the repository's Cargo.lock stays
#   the one the tests use), then built by cargo 1.85 from that lockfile, `--locked`, in its
#   own target directory (target/msrv/target).
#
# About 2 min cold on 2 cores (the copy, the resolution, 19 packages built by 1.85) when
# the toolchain is installed; the apt-get install adds about 1 min on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
if [ "$msrv" != 1.85 ]; then
    echo "msrv.sh: Cargo.toml declares rust-version \"$msrv\"; this check installs Debian 12's" >&2
    echo "msrv.sh: rustc 1.85: change both together" >&2
    exit 1
fi
V=1.85.0+dfsg3-1~deb12u3
old_rustc=/usr/bin/rustc
old_cargo=/usr/bin/cargo
has_msrv() {
    [ -x "$old_rustc" ] && [ -x "$old_cargo" ] \
        && "$old_rustc" --version | grep -q "^rustc $msrv\." \
        && "$old_cargo" --version | grep -q "^cargo $msrv\."
}
if ! has_msrv; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "msrv.sh: no rustc/cargo $msrv at /usr/bin, and no root apt-get to install them:" >&2
        echo "msrv.sh:   apt-get install rustc-web=$V cargo-web=$V libstd-rust-web-dev=$V libstd-rust-web-1.85=$V" >&2
        exit 1
    fi
    echo "msrv.sh: installing Debian 12's rustc and cargo $V" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    if ! apt-get install -y -qq --no-install-recommends rustc-web="$V" cargo-web="$V" \
        libstd-rust-web-dev="$V" libstd-rust-web-1.85="$V" >/dev/null; then
        echo "msrv.sh: apt-get could not install rustc-web/cargo-web $V (Debian 12 bookworm's" >&2
        echo "msrv.sh: security or updates suite must be in the sources)" >&2
        exit 1
    fi
    if ! has_msrv; then
        echo "msrv.sh: after the install, /usr/bin/rustc or /usr/bin/cargo is not $msrv:" >&2
        "$old_rustc" --version >&2 || true
        "$old_cargo" --version >&2 || true
        exit 1
    fi
fi

# A copy of the workspace's sources (tracked and untracked files, not what git ignores).
ws=target/msrv/ws
rm -rf "$ws"
mkdir -p "$ws"
git ls-files -z --cached --others --exclude-standard \
    | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$ws"
# Resolved for the MSRV by the current cargo (cargo 1.85 does not know the fallback
# resolver): every dependency at its newest version whose rust-version 1.85 meets.
CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo update --manifest-path "$ws/Cargo.toml" -q
# Built by 1.85: its cargo, its rustc, its lockfile, its own target directory.
if ! RUSTC="$old_rustc" "$old_cargo" build --manifest-path "$ws/Cargo.toml" -p zonal --locked \
    --target-dir target/msrv/target; then
    echo "msrv.sh: zonal (default features) does not build with rustc $msrv" >&2
    exit 1
fi
echo "msrv.sh: zonal (default features) builds with $("$old_rustc" --version)"
