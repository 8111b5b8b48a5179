#!/usr/bin/env bash
# The project's test command (README): installs what is missing, runs the fast lane (tools/fast-lane.sh: the
# format, the shell scripts' lint, the include layers, the cited documents; seconds, and a failure ends the run
# before any build), builds the test cluster's tools and the project, runs the unit tests alone (a failure stops
# there), then the integration and e2e tests, then, in one clang build with ASan+UBSan, the unit tests again and
# a 60 s smoke run of each libFuzzer target (tests/fuzz). With ccache installed, both builds compile through it
# (its cache in $IPU_OPERATOR_CACHE/ccache unless CCACHE_DIR says otherwise).
# Extra arguments go to the unit, cluster and ASan+UBSan unit test runs (e.g. -R Pod, --repeat until-fail:3), not
# to the fuzzers.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
jobs=$(nproc)
started=$SECONDS
# Each phase says when it starts, counted from the start of the run.
phase() { echo "==> [$((SECONDS - started)) s] $*" >&2; }

phase "fast lane (tools/fast-lane.sh)"
tools/install-deps.sh --fast-lane
if ! tools/fast-lane.sh; then
  echo "the fast lane failed (its report is above): no build, no tests" >&2
  exit 1
fi
phase "dependencies"
tools/install-deps.sh
phase "test cluster tools (Go, cached in ${IPU_OPERATOR_CACHE:-~/.cache/ipu-operator})"
tools/build-tools.sh > /dev/null
echo "tools ready after $((SECONDS - started)) s" >&2

cache=${IPU_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ipu-operator}
# The compiler launcher goes to both configures: ccache when installed, else none (a build directory configured
# with one before is configured again without it, not left pointing at a missing program).
launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=
compiling="without ccache (not installed)"
if command -v ccache > /dev/null; then
  launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
  # Paths under the checkout are hashed relative to it, and the build directory is not hashed: a clean clone
  # elsewhere (CI's) reuses what an earlier checkout compiled.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
  compiling="through ccache, cached in $CCACHE_DIR"
fi

phase "build (build/, $compiling)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$launcher" > /dev/null
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
# count <log>: "<failed> <total>" from ctest's summary line ("0 0" when it ran no test).
count() {
  local counted
  counted=$(sed -n "s/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1 \2/p" "$1" | tail -n 1)
  echo "${counted:-0 0}"
}
# after_failure <status> [clusters]: what a reader needs after a failed run: with "clusters", the test clusters'
# log tails, then, last, where a reader of only the end of this output finds it, what each failed test printed;
# exits with the status.
after_failure() {
  local cluster_logs log
  [[ ${2:-} == clusters ]] || { failed_test_outputs build/Testing/Temporary/LastTest.log >&2; exit "$1"; }
  for cluster_logs in build/test-cluster/logs build/test-cluster-e2e/logs; do
    [[ -d $cluster_logs ]] || continue
    for log in "$cluster_logs"/*.log; do
      [[ -f $log ]] || continue
      echo "--- tail of $log ---" >&2
      tail -n 30 "$log" >&2
    done
  done
  failed_test_outputs build/Testing/Temporary/LastTest.log >&2
  exit "$1"
}

# The unit tier first, on its own: seconds, no cluster; a failure here stops before the clusters start.
phase "unit tests"
unit_started=$SECONDS
status=0
ctest_counted build/ctest-unit.log --test-dir build --label-regex '^unit$' -j "$jobs" --output-on-failure "$@" ||
  status=$?
read -r unit_failed unit_total <<< "$(count build/ctest-unit.log)"
echo "unit tests: $((unit_total - unit_failed)) passed, $unit_failed failed in $((SECONDS - unit_started)) s" >&2
if ((status != 0)); then
  echo "the unit tests failed: the integration and e2e tests did not run" >&2
  after_failure "$status"
fi

# Then the tiers on a test cluster. e2e runs real containers on a real kubelet + containerd node (its own
# cluster), which needs root.
excluded='unit|bench|chaos|fuzz'
tiers="integration + e2e"
if [[ $(id -u) != 0 ]]; then
  excluded='unit|bench|chaos|e2e|fuzz'
  tiers="integration (e2e skipped: its real node needs root)"
fi
phase "$tiers tests"
status=0
ctest_counted build/ctest-main.log --test-dir build --label-exclude "$excluded" -j "$jobs" --output-on-failure "$@" ||
  status=$?
((status == 0)) || after_failure "$status" clusters

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
  -DCMAKE_CXX_COMPILER="$sanitizer_cxx" -DIPU_SANITIZE=ON -DIPU_FUZZ=ON "$launcher" > /dev/null
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
failed=$((unit_failed + main_failed + asan_failed + fuzz_failed))
total=$((unit_total + main_total + asan_total + fuzz_total))
echo "finished in $((SECONDS - started)) s: $unit_total unit tests, $main_total $tiers tests, then $asan_total unit" \
  "tests under ASan+UBSan and $fuzz_total fuzzer smoke runs" >&2
echo "tests: $((total - failed)) passed, $failed failed"
