#!/usr/bin/env bash
# Builds localhost/ipu-operator/vipu-sim:<key>, the image of vipu-sim, the simulated V-IPU controller the
# Helm chart can run in clusters without IPUs: a stripped copy of the vipu-sim binary at /vipu-sim, and of
# vipu-ctl, the V-IPU CLI, at /vipu-ctl (to ask a controller, or from a worker pod the operator's proxy,
# what it holds), the shared objects they load, /etc/passwd naming its non-root user (65532), an empty /tmp. Built and cached like
# build-ipu-operator.sh; deploy/images/Dockerfile (--target vipu-sim) builds the same image with Docker.
#
# The binary comes from --binary PATH, else $VIPU_SIM_BINARY, else <repo>/build/vipu-sim/vipu-sim; vipu-ctl
# from $VIPU_CTL_BINARY, else the vipu-ctl next to it in the build tree (<build>/vipu-ctl/vipu-ctl).
#
# Usage: tools/images/build-vipu-sim.sh [--binary PATH] [--quiet]
#        (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"

repo=$(cd "$images_dir/../.." && pwd)
binary=${VIPU_SIM_BINARY:-$repo/build/vipu-sim/vipu-sim}
image_parse_binary_args binary "$@"

ctl=${VIPU_CTL_BINARY:-$(dirname "$(dirname "$binary")")/vipu-ctl/vipu-ctl}
[[ -f $ctl ]] || { echo "build-vipu-sim: no vipu-ctl at $ctl; build it first: cmake --build build --target vipu-ctl" \
  "(or set VIPU_CTL_BINARY)" >&2; exit 1; }
image_name=vipu-sim
# shellcheck disable=SC2046
image_begin_from_elf "$binary" "$(sha256sum < "$ctl")" "$(sha256sum $("$images_dir/elf-rootfs.sh" --closure "$ctl"))"
if [[ $image_cached == false ]]; then
  "$images_dir/elf-rootfs.sh" "$binary" /vipu-sim "$rootfs"
  "$images_dir/elf-rootfs.sh" "$ctl" /vipu-ctl "$rootfs"
fi
image_finish '{"User":"65532:65532","Entrypoint":["/vipu-sim"],"ExposedPorts":{"8090/tcp":{}}}'
