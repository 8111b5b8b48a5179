#!/usr/bin/env bash
# The project's test command (README): installs what is missing, builds the test cluster's tools and the
# project, runs the unit, integration and e2e tests, then, in one clang build with ASan+UBSan, the unit tests
# again and a 60 s smoke run of each libFuzzer target (tests/fuzz).
# Extra arguments go to the main and the ASan+UBSan unit test runs (e.g. -R Pod, --repeat until-fail:3), not to
# the fuzzers.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
jobs=$(nproc)
started=$SECONDS
# Each phase says when it starts, counted from the start of the run.
phase() { echo "==> [$((SECONDS - started)) s] $*" >&2; }

phase "dependencies"
tools/install-deps.sh
phase "test cluster tools (Go, cached in ${IPU_OPERATOR_CACHE:-~/.cache/ipu-operator})"
tools/build-tools.sh > /dev/null
echo "tools ready after $((SECONDS - started)) s" >&2

phase "build (build/)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j "$jobs"

# ctest_counted <log> <ctest args...>: runs ctest, keeping its output to count the tests it ran.
ctest_counted() {
  local log=$1; shift
  ctest "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}
# failed_test_outputs <LastTest.log>: the last 40 lines each failed test printed, under its name.
failed_test_outputs() {
  [[ -f $1 ]] || return 0
  awk '
    / Testing: / { name = $NF }
    /^Output:$/ { n = 0; capturing = 1; getline; next }
    capturing && /^<end of output>$/ { capturing = 0; next }
    capturing { lines[n++] = $0; next }
    /^Test Failed\.$/ {
      print "--- output of the failed test " name " (last 40 lines) ---"
      for (i = (n > 40 ? n - 40 : 0); i < n; i++) print lines[i]
    }' "$1"
}
count() { sed -n "s/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1 \2/p" "$1" | tail -n 1; }

# e2e runs real containers on a real kubelet + containerd node (its own cluster), which needs root.
excluded='bench|chaos|fuzz'
tiers="unit + integration + e2e"
if [[ $(id -u) != 0 ]]; then
  excluded='bench|chaos|e2e|fuzz'
  tiers="unit + integration (e2e skipped: its real node needs root)"
fi
phase "$tiers tests"
status=0
ctest_counted build/ctest-main.log --test-dir build --label-exclude "$excluded" -j "$jobs" --output-on-failure "$@" ||
  status=$?
if ((status != 0)); then
  for cluster_logs in build/test-cluster/logs build/test-cluster-e2e/logs; do
    [[ -d $cluster_logs ]] || continue
    for log in "$cluster_logs"/*.log; do
      echo "--- tail of $log ---" >&2
      tail -n 30 "$log" >&2
    done
  done
  # Last, where a reader of only the end of this output finds it: what each failed test printed.
  failed_test_outputs build/Testing/Temporary/LastTest.log >&2
  exit "$status"
fi

phase "clang build with ASan+UBSan (build-asan/: unit tests and fuzzers only)"
# One clang build serves both: ASan+UBSan in all of it, libFuzzer's coverage hooks in the project's code
# (IPU_FUZZ). A build-asan/ configured with another compiler (g++, before the fuzzers) cannot switch in place.
sanitizer_cxx=clang++-14
if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=.*/$sanitizer_cxx\$" build-asan/CMakeCache.txt; then
  echo "build-asan/ was configured with another compiler than $sanitizer_cxx: starting it afresh" >&2
  rm -rf build-asan
fi
# Line tables are all a sanitizer report needs for its file:line stack traces; full debug info would make this
# build of every unit test slower to compile and link.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
  -DCMAKE_CXX_COMPILER="$sanitizer_cxx" -DIPU_SANITIZE=ON -DIPU_FUZZ=ON > /dev/null
cmake --build build-asan -j "$jobs" --target unit_tests fuzz_targets
# tools/sanitizers/lsan.supp: leaks a third-party library leaves at process exit only (each says why).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS="suppressions=$PWD/tools/sanitizers/lsan.supp:print_suppressions=0"
phase "unit tests under ASan+UBSan"
ctest_counted build-asan/ctest-asan.log --test-dir build-asan --label-regex '^unit$' -j "$jobs" --output-on-failure "$@"
phase "the fuzzers' smoke runs"
# Each fuzzer for 60 s on a copy of its seeds (tests/fuzz/corpus); a crash's input is kept in
# build-asan/tests/fuzz/artifacts/.
ctest_counted build-asan/ctest-fuzz-smoke.log --test-dir build-asan --label-regex '^fuzz-smoke$' -j "$jobs" \
  --output-on-failure

read -r main_failed main_total <<< "$(count build/ctest-main.log)"
read -r asan_failed asan_total <<< "$(count build-asan/ctest-asan.log)"
read -r fuzz_failed fuzz_total <<< "$(count build-asan/ctest-fuzz-smoke.log)"
failed=$((main_failed + asan_failed + fuzz_failed))
echo "finished in $((SECONDS - started)) s: $main_total tests, then $asan_total unit tests under ASan+UBSan" \
  "and $fuzz_total fuzzer smoke runs" >&2
echo "tests: $((main_total + asan_total + fuzz_total - failed)) passed, $failed failed"
