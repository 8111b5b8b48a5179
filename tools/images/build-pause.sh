#!/usr/bin/env bash
# Builds localhost/ipu-operator/pause:<key>, the pod sandbox ("pause") image of the real test node, which
# cannot pull registry.k8s.io/pause: only Debian's static busybox, running `sleep` for ~68 years. containerd
# stops sandboxes with SIGKILL, so a pause that handles no signal is enough. Cached like build-busybox.sh.
#
# Usage: tools/images/build-pause.sh [--quiet]   (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
image_parse_args "$@"

image_name=pause
image_begin_from_busybox_static

if [[ $image_cached == false ]]; then
  # busybox picks the applet by the name it is run as.
  mkdir -p "$rootfs"/{bin,proc,sys,dev}
  install -m 755 "$busybox" "$rootfs/bin/sleep"
fi
image_finish '{"Entrypoint":["/bin/sleep","2147483647"],"User":"65534:65534"}'
