#!/usr/bin/env bash
# Builds localhost/ipu-operator/busybox:<key>, a ~1 MB image for fast end-to-end tests: Debian's static
# busybox (package busybox-static) with a link for each applet, /etc/passwd and /etc/group, and `sh` as the
# default command. Cached in $IPU_OPERATOR_CACHE/images/busybox-<key>.tar, the key being a hash of this
# script, tools/images/lib.sh and the busybox package's version and binary.
#
# Usage: tools/images/build-busybox.sh [--quiet]   (as root; prints "<image reference> <archive>")
# BUSYBOX_WITHOUT_APPLETS (space-separated applets given no link) and BUSYBOX_IMAGE_NAME make variants of it
# (build-busybox-notar.sh).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
image_parse_args "$@"

image_name=${BUSYBOX_IMAGE_NAME:-busybox}
without=" ${BUSYBOX_WITHOUT_APPLETS:-} "
[[ $without == "  " ]] || image_variant="without:$without"
image_begin_from_busybox_static

if [[ $image_cached == false ]]; then
  mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,root,proc,sys,dev,tmp,var/tmp}
  chmod 1777 "$rootfs/tmp" "$rootfs/var/tmp"
  chmod 700 "$rootfs/root"
  install -m 755 "$busybox" "$rootfs/bin/busybox"
  # Absolute links, as busybox --install -s would make them.
  while read -r applet; do
    [[ $without == *" ${applet##*/} "* ]] && continue
    [[ -e $rootfs/$applet || -L $rootfs/$applet ]] || ln -s /bin/busybox "$rootfs/$applet"
  done < <("$busybox" --list-full)
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
    > "$rootfs/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' > "$rootfs/etc/group"
fi
image_finish '{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sh"]}'
