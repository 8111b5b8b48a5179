#!/usr/bin/env bash
# Links ipu-operator again from a built tree's objects with every dependency that Debian ships as a static
# archive taken from that archive (gRPC, protobuf, abseil, upb, re2, c-ares, zlib, yaml-cpp), and
# --gc-sections, into BUILD/operator/ipu-operator-static-deps: what static linking would save in memory is
# measured by running this binary where the normal one ran (IPU_BENCH_OPERATOR, docs/benchmarks.md).
# cpprestsdk and prometheus-cpp come as shared objects only, so OpenSSL, Boost and libstdc++, which they
# load, stay shared too: two copies of OpenSSL in one process would each keep state the other never sees.
#
# Usage: tools/link-operator-static-deps.sh [BUILD]   (BUILD defaults to build; prints the binary's path)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$repo/build}
[[ -x $build/operator/ipu-operator ]] || { echo "no $build/operator/ipu-operator: build it first" >&2; exit 2; }
out=operator/ipu-operator-static-deps

# The link line ninja runs for the operator: ": && /usr/bin/c++ <flags> <objects> -o operator/ipu-operator
# <archives> <shared objects> && :".
read -r -a line < <(ninja -C "$build" -t commands operator/ipu-operator | tail -n 1)
# The libraries to take statically, by the names pkg-config gives them; the system's own and those shared
# with cpprestsdk stay shared.
mapfile -t wanted < <(pkg-config --static --libs-only-l grpc++ protobuf yaml-cpp | tr ' ' '\n' |
  grep -vxE -- '-l(ssl|crypto|dl|m|rt|atomic|pthread)|' | sort -u)
static_name() { # whether a token of the link line (-lNAME, or a path to libNAME.so…) names a wanted library
  local name
  case $1 in
    -l*) name=${1#-l} ;;
    */lib*.so*) name=${1##*/lib} name=${name%%.so*} ;;
    *) return 1 ;;
  esac
  [[ " ${wanted[*]} " == *" -l$name "* ]]
}
args=()
for ((i = 0; i < ${#line[@]}; i++)); do
  token=${line[i]}
  case $token in
    : | '&&') continue ;;
    -o) args+=(-o "$out"); i=$((i + 1)); continue ;;
  esac
  static_name "$token" && continue
  args+=("$token")
done
# The wanted archives as one group (their order among themselves does not matter then), the rest shared.
args+=("-Wl,--gc-sections" "-Wl,-Bstatic" "-Wl,--start-group" "${wanted[@]}" "-Wl,--end-group" "-Wl,-Bdynamic"
  -lssl -lcrypto -latomic -ldl -lrt -lm -pthread)
(cd "$build" && "${args[@]}")
echo "$build/$out"
