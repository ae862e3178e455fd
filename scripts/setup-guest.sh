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

"$(dirname "$0")/apt-need.sh" setup-guest ${need[@]+"${need[@]}"}
