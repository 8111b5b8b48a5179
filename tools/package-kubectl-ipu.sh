#!/usr/bin/env bash
# Packs the kubectl plugin with the shared libraries it links, so that it runs on a machine without this
# build tree or those packages: tools/package-kubectl-ipu.sh <built kubectl-ipu> <out.tar.gz>.
#
# The tarball holds bin/kubectl-ipu and lib/kubectl-ipu/*.so*; the binary finds the libraries through its
# RPATH ($ORIGIN/../lib/kubectl-ipu, set by kubectl-ipu/CMakeLists.txt), so it is extracted into a prefix
# whose bin/ is on PATH (tar -xzf kubectl-ipu.tar.gz -C ~/.local). Only the C library stays the system's (it
# cannot be carried beside a program): a glibc at least as new as the building machine's, 2.36 on Debian 12.
set -euo pipefail
binary=${1:?usage: package-kubectl-ipu.sh <kubectl-ipu binary> <out.tar.gz>}
out=${2:?usage: package-kubectl-ipu.sh <kubectl-ipu binary> <out.tar.gz>}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/lib/kubectl-ipu"
cp "$binary" "$work/bin/kubectl-ipu"
strip --strip-debug "$work/bin/kubectl-ipu"  # debugging symbols stay in the build tree
# Every library the loader resolves for it, but the C library's own (libc, libm, libpthread, libdl, librt,
# the loader): those must match the system's kernel interface and loader.
ldd "$binary" | while read -r name arrow path _; do
  [[ $arrow == "=>" && -f $path ]] || continue
  case $name in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) continue ;;
  esac
  cp -L "$path" "$work/lib/kubectl-ipu/$name"
  strip --strip-debug "$work/lib/kubectl-ipu/$name"
done
tar -czf "$out" -C "$work" bin lib
echo "packed $(tar -tzf "$out" | grep -c '\.so') libraries with kubectl-ipu into $out" >&2
