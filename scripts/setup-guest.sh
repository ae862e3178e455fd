#!/usr/bin/env bash
# Installs what the guest tests (crates/guest) need to boot Linux under QEMU: QEMU for x86-64,
# a static busybox and a kernel image in /boot (through apt-get when root).
set -euo pipefail

need=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
if [ ! -x /usr/bin/busybox ] && [ ! -x /bin/busybox ]; then
  need+=(busybox-static)
fi
if ! compgen -G "/boot/vmlinuz-*" >/dev/null; then
  need+=(linux-image-amd64)
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-guest: installing ${need[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "setup-guest: missing ${need[*]}." >&2
    echo "setup-guest: install them as root, e.g.: sudo apt-get install --no-install-recommends ${need[*]}" >&2
    exit 1
  fi
fi
