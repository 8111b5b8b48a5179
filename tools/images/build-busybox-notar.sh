#!/usr/bin/env bash
# Builds localhost/ipu-operator/busybox-notar:<key>: the busybox image (build-busybox.sh) without the tar applet's
# link, so that the image has no tar, as many users' images have none: what `kubectl ipu cp` is tested on
# (`kubectl cp` needs tar in the image).
#
# Usage: tools/images/build-busybox-notar.sh [--quiet]   (as root; prints "<image reference> <archive>")
set -euo pipefail
BUSYBOX_IMAGE_NAME=busybox-notar BUSYBOX_WITHOUT_APPLETS=tar exec "$(dirname "$0")/build-busybox.sh" "$@"
