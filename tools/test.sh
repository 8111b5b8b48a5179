#!/usr/bin/env bash
# The project's test command (README): installs what is missing, builds the test cluster's tools and the
# project, runs the unit and integration tests, then the unit tests again under ASan+UBSan.
# Extra arguments go to both ctest runs (e.g. -R Pod, --repeat until-fail:3).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
jobs=$(nproc)
phase() { echo "==> $*" >&2; }

started=$SECONDS
phase "dependencies"
tools/install-deps.sh
phase "test cluster tools (Go, cached in ${IPU_OPERATOR_CACHE:-~/.cache/ipu-operator})"
tools/build-tools.sh > /dev/null
echo "tools ready after $((SECONDS - started)) s" >&2

phase "build (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j "$jobs"

phase "unit + integration tests"
status=0
ctest --test-dir build --label-exclude 'bench|e2e|fuzz' -j "$jobs" --output-on-failure "$@" || status=$?
if ((status != 0)); then
  cluster_logs=build/test-cluster/logs
  if [[ -d $cluster_logs ]]; then
    for log in "$cluster_logs"/*.log; do
      echo "--- tail of $log ---" >&2
      tail -n 30 "$log" >&2
    done
  fi
  exit "$status"
fi

phase "unit tests under ASan+UBSan (build-asan/)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DIPU_SANITIZE=ON > /dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --label-regex '^unit$' -j "$jobs" --output-on-failure "$@"
echo "all tests passed in $((SECONDS - started)) s" >&2
