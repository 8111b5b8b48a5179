#!/usr/bin/env bash
# tools/check-cited-docs.sh on the fixture trees in cited_docs_fixtures/: one whose sources cite only documents
# it has (from the root, from the citing file's folder, next to URLs, variables and ignored names), one whose
# sources cite missing ones (each named as file:line), and the first again without its ignore list.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check=$here/../../tools/check-cited-docs.sh
fixtures=$here/cited_docs_fixtures
failures=0

# run_check <tree>: runs the check on the tree; sets $output and $status.
run_check() {
  status=0
  output=$("$check" --root "$1" 2>&1) || status=$?
}
fail() {
  echo "FAIL: $*" >&2
  echo "--- the check's output ---" >&2
  echo "$output" >&2
  failures=$((failures + 1))
}
expect_status() { [[ $status == "$1" ]] || fail "$2: exit $status, expected $1"; }
expect_line() { grep -qxF -- "$1" <<< "$output" || fail "$2: no line '$1'"; }
expect_no_match() { ! grep -qF -- "$1" <<< "$output" || fail "$2: '$1' reported"; }

run_check "$fixtures/passing"
expect_status 0 passing
expect_line "cited documents: 9 citation(s) in 6 of 7 files, OK" passing
expect_no_match MISSING.md passing
expect_no_match GENERATED.md passing

run_check "$fixtures/missing"
expect_status 1 missing
expect_line "src/main.cpp:3: cites DESIGN.md, which is not in the repository" missing
expect_line "sub/CMakeLists.txt:1: cites docs/gone.md, which is not in the repository" missing
expect_line "deploy/values.yaml:2: cites operator/vipu/README.md, which is not in the repository" missing
expect_line ".ci/run:2: cites DESIGN.md, which is not in the repository" missing
# ../outside.md exists, but outside the tree.
expect_line "src/escape.h:2: cites ../../outside.md, which is not in the repository" missing
expect_line "cited documents: 6 citation(s) in 5 of 5 files, 5 missing: FAILED" missing
expect_no_match " README.md, which" missing

# Without tools/cited-docs.ignore, the name it lists is a missing document.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -a "$fixtures/passing/." "$scratch/"
rm "$scratch/tools/cited-docs.ignore"
run_check "$scratch"
expect_status 1 passing-without-ignore
expect_line "src/bench.cpp:1: cites RESULT.md, which is not in the repository" passing-without-ignore

run_check "$fixtures/no_such_tree"
expect_status 2 no_such_tree

if ((failures > 0)); then
  echo "check_cited_docs_test: $failures failed" >&2
  exit 1
fi
echo "check_cited_docs_test: all passed"
