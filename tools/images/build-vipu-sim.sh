#!/usr/bin/env bash
# Builds localhost/ipu-operator/vipu-sim:<key>, the image of vipu-sim, the simulated V-IPU controller the
# Helm chart can run in clusters without IPUs: a stripped copy of the vipu-sim binary at /vipu-sim and the
# shared objects it loads, /etc/passwd naming its non-root user (65532), an empty /tmp. Built and cached like
# build-ipu-operator.sh; deploy/images/Dockerfile (--target vipu-sim) builds the same image with Docker.
#
# The binary comes from --binary PATH, else $VIPU_SIM_BINARY, else <repo>/build/vipu-sim/vipu-sim.
#
# Usage: tools/images/build-vipu-sim.sh [--binary PATH] [--quiet]
#        (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"

repo=$(cd "$images_dir/../.." && pwd)
binary=${VIPU_SIM_BINARY:-$repo/build/vipu-sim/vipu-sim}
image_parse_binary_args binary "$@"

image_name=vipu-sim
image_begin_from_elf "$binary"
[[ $image_cached == true ]] || "$images_dir/elf-rootfs.sh" "$binary" /vipu-sim "$rootfs"
image_finish '{"User":"65532:65532","Entrypoint":["/vipu-sim"],"ExposedPorts":{"8090/tcp":{}}}'
