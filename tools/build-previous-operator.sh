#!/usr/bin/env bash
# Builds ipu-operator as it was at an earlier commit of this repository, for the upgrade test: the sources
# come from the repository's own history (git archive), built with the same compiler and packages into
# OUT/build. A build of the same commit is reused. Cold, it takes a few minutes on 2 cores.
#
# Usage: tools/build-previous-operator.sh COMMIT OUT
# Exit status 3 (and a message, also in OUT/unavailable) when the history does not hold COMMIT, as in a
# shallow clone.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[[ $# == 2 ]] || { echo "usage: $0 COMMIT OUT" >&2; exit 2; }
commit=$1
out=$2
binary=$out/build/operator/ipu-operator
if [[ -x $binary && $(cat "$out/commit" 2>/dev/null) == "$commit" ]]; then
  echo "$binary"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
if ! git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "commit $commit is not in this repository's history (a shallow clone?)" | tee "$out/unavailable" >&2
  exit 3
fi
mkdir -p "$out/src"
git -C "$repo" archive "$commit" | tar -x -C "$out/src"
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
echo "build-previous-operator: building ipu-operator at $commit (a few minutes when cold)" >&2
cmake -S "$out/src" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIPU_BUILD_TESTS=OFF \
  "${launcher[@]}" > "$out/cmake.log"
cmake --build "$out/build" --target ipu-operator -j "$(nproc)" > "$out/build.log" ||
  { tail -n 40 "$out/build.log" >&2; exit 1; }
echo "$commit" > "$out/commit"
echo "$binary"
