#!/usr/bin/env bash
# `scripts/apt-need.sh WHO PACKAGE...`: installs the named Debian packages through apt-get
# when run as root, else names them and fails. Shared by setup-build.sh, setup.sh
# and setup-guest.sh.
set -euo pipefail
who=$1
shift
[ $# -gt 0 ] || exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "$who: installing $* with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
else
  echo "$who: missing $*." >&2
  echo "$who: install them as root, e.g.: sudo apt-get install --no-install-recommends $*" >&2
  exit 1
fi
