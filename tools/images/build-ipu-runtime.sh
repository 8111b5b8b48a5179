#!/usr/bin/env bash
# Builds localhost/ipu-operator/ipu-runtime:<key>, the image of the worker pods' init container: one layer
# holding only a stripped copy of the static ipu-runtime binary at /ipu-runtime, plus /etc/passwd and
# /etc/group naming its non-root user (65532, "nonroot"). No shell and no libc: the binary needs neither.
# Its default command, `install /opt/ipu-runtime`, copies the binary into the emptyDir the worker container
# mounts there. Cached in $IPU_OPERATOR_CACHE/images/ipu-runtime-<key>.tar, the key being a hash of this
# script, tools/images/lib.sh, the binary and the strip tool's version: same binary in, same bytes out.
#
# The binary comes from --binary PATH, else $IPU_RUNTIME_BINARY, else <repo>/build/runtime/ipu-runtime; it is
# never modified (a copy is stripped). A dynamically linked build (IPU_SANITIZE) is refused: the image has no
# C library to load it with.
#
# Usage: tools/images/build-ipu-runtime.sh [--binary PATH] [--quiet]
#        (as root; prints "<image reference> <archive>")
set -euo pipefail
source "$(dirname "$0")/lib.sh"

repo=$(cd "$images_dir/../.." && pwd)
binary=${IPU_RUNTIME_BINARY:-$repo/build/runtime/ipu-runtime}
image_parse_binary_args binary "$@"

[[ -f $binary ]] ||
  { echo "build-ipu-runtime: no ipu-runtime binary at $binary; build it first: cmake --build build --target ipu-runtime" \
      "(or pass --binary PATH / set IPU_RUNTIME_BINARY)" >&2; exit 1; }
{ command -v objcopy && command -v readelf; } > /dev/null ||
  { echo "build-ipu-runtime: objcopy and readelf are missing (binutils; run tools/install-deps.sh)" >&2; exit 1; }
# A program interpreter (ld-linux) means a dynamic binary, which would fail in the image with a bare
# "no such file or directory" when the kubelet starts it; say why here instead.
if readelf -lW "$binary" | grep -q 'Requesting program interpreter'; then
  echo "build-ipu-runtime: $binary is dynamically linked; the image has no C library (build without IPU_SANITIZE)" >&2
  exit 1
fi

image_name=ipu-runtime
image_begin "$(sha256sum < "$binary")" "$(objcopy --version | head -n 1)"

if [[ $image_cached == false ]]; then
  image_nonroot_user
  # Stripped: the debug information is for the build tree's copy (about two thirds of its size).
  objcopy --strip-all "$binary" "$image_work/ipu-runtime"
  install -m 755 -o 0 -g 0 "$image_work/ipu-runtime" "$rootfs/ipu-runtime"
fi
image_finish '{"User":"65532:65532","Entrypoint":["/ipu-runtime"],"Cmd":["install","/opt/ipu-runtime"]}'
