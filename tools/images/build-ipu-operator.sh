#!/usr/bin/env bash
# Builds localhost/ipu-operator/ipu-operator:<key>, the operator's image: a stripped copy of the ipu-operator
# binary at /ipu-operator (gRPC, protobuf and yaml-cpp linked in) and exactly the shared objects it loads
# (glibc, libstdc++, cpprestsdk, OpenSSL... from this machine's Debian packages), /etc/passwd naming its
# non-root user (65532) and an empty /tmp to mount an emptyDir on. No shell, no package manager: the root
# filesystem can be mounted read-only. Cached in $IPU_OPERATOR_CACHE/images/ipu-operator-<key>.tar, the key being a hash of
# this script, tools/images/lib.sh, the binary and every library it loads: same inputs, same bytes.
# deploy/images/Dockerfile (--target ipu-operator) builds the same image with Docker.
#
# The binary comes from --binary PATH, else $IPU_OPERATOR_BINARY, else <repo>/build/operator/ipu-operator.
#
# Usage: tools/images/build-ipu-operator.sh [--binary PATH] [--quiet]
#        (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"

repo=$(cd "$images_dir/../.." && pwd)
binary=${IPU_OPERATOR_BINARY:-$repo/build/operator/ipu-operator}
image_parse_binary_args binary "$@"

image_name=ipu-operator
image_begin_from_elf "$binary"
[[ $image_cached == true ]] || "$images_dir/elf-rootfs.sh" "$binary" /ipu-operator "$rootfs"
image_finish '{"User":"65532:65532","Entrypoint":["/ipu-operator"],"ExposedPorts":{"8080/tcp":{},"8081/tcp":{}}}'
