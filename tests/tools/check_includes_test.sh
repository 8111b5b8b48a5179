#!/usr/bin/env bash
# tools/check-includes.py on the fixture trees in include_fixtures/ (each with its own tools/include-layers.conf):
# a valid tree passes and prints its module graph; a cycle, a library that includes a controller and a
# controller that includes the binary fail, naming the cycle or the offending file:line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check=$here/../../tools/check-includes.py
fixtures=$here/include_fixtures
failures=0

# run_check <fixture>: runs the checker on the fixture; sets $output and $status.
run_check() {
  status=0
  output=$("$check" --root "$fixtures/$1" 2>&1) || status=$?
}
fail() {
  echo "FAIL: $*" >&2
  echo "--- the checker's output ---" >&2
  echo "$output" >&2
  failures=$((failures + 1))
}
expect_status() { [[ $status == "$1" ]] || fail "$2: exit $status, expected $1"; }
expect_line() { grep -qxF -- "$1" <<< "$output" || fail "$2: no line '$1'"; }

run_check good
expect_status 0 good
expect_line "  operator/lib/kube [library] → operator/lib/common (1)" good
expect_line "  controllers/jobs [controller] → operator/lib/common (1), operator/lib/kube (1)" good
expect_line "  operator/cmd [binary] → controllers/jobs (1), operator/lib/common (1), operator/lib/kube (1)" good
expect_line "  operator/lib/common [library] → (none)" good
# runtime is in its configuration but not in the tree: skipped, not an error.
expect_line "  not present, skipped: runtime" good
expect_line "include graph: 4 modules, 6 edges, OK" good

run_check cycle
expect_status 1 cycle
expect_line "cycle: controllers/admission → controllers/ipujob → controllers/admission" cycle
expect_line "  controllers/admission → controllers/ipujob: controllers/admission/admitter.h:4 #include \"ipujob/job_status.h\"" cycle
expect_line "  controllers/ipujob → controllers/admission: controllers/ipujob/reconciler.cpp:3 #include \"admission/admitter.h\"" cycle
expect_line "include graph: 3 modules, 3 edges, FAILED: 1 cycle" cycle

run_check library_includes_controller
expect_status 1 library_includes_controller
expect_line "library includes a controller: operator/lib/kube/store.cpp:3: operator/lib/kube includes controllers/quota (#include \"quota/quota_ledger.h\")" library_includes_controller
expect_line "include graph: 2 modules, 1 edge, FAILED: 1 library → controller include" library_includes_controller

run_check controller_includes_binary
expect_status 1 controller_includes_binary
expect_line "includes a binary: controllers/ipujob/controller.h:3: controllers/ipujob includes operator/cmd (#include \"cmd/operator_flags.h\")" controller_includes_binary
expect_line "cycle: controllers/ipujob → operator/cmd → controllers/ipujob" controller_includes_binary

# A tree without the configuration: exit 2, not a pass.
run_check no_such_fixture
expect_status 2 no_such_fixture

if ((failures > 0)); then
  echo "check_includes_test: $failures failed" >&2
  exit 1
fi
echo "check_includes_test: all passed"
