#!/usr/bin/env bash
# The fast lane (tools/test.sh runs it before any build; seconds, no compiler): four checks, each timed,
#   format    clang-format-14 --dry-run --Werror (the repository's .clang-format) on every tracked *.h, *.cpp
#             and *.cc but the test fixtures and generated code; to fix a file: clang-format-14 -i <file>
#   shell     shellcheck on every shell script in tools/ and .ci/ (*.sh, and files without an extension that
#             start with a shell's #!), following what they source: shellcheck -x -P SCRIPTDIR <file>
#   includes  tools/check-includes.py: the C++ modules' include graph keeps its layers (tools/include-layers.conf)
#   docs      tools/check-cited-docs.sh: every document a source cites is in the repository
# All four run even when one fails; the last line is "fast lane: ok in N s" or "fast lane: FAILED: <checks> in
# N s", and the exit status is 1 if any failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
jobs=$(nproc)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Microseconds since the epoch, and a duration in them as seconds with one decimal.
now_us() { echo "${EPOCHREALTIME//[!0-9]/}"; } # the decimal point is the locale's
seconds() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }

check_format() {
  command -v clang-format-14 > /dev/null ||
    { echo "clang-format-14 is missing (tools/install-deps.sh installs it)"; return 1; }
  git rev-parse --is-inside-work-tree > /dev/null 2>&1 ||
    { echo "not a git checkout: no tracked files to check"; return 1; }
  local files=() file
  # Tracked files only (a build tree's generated *.pb.h/*.pb.cc are not); one removed from the work tree is
  # skipped.
  while IFS= read -r -d '' file; do
    [[ -f $file ]] && files+=("$file")
  done < <(git ls-files -z -- '*.h' '*.cpp' '*.cc' ':(exclude)tests/tools/*_fixtures/*' ':(exclude)*.pb.h' \
    ':(exclude)*.pb.cc')
  ((${#files[@]} > 0)) || { echo "no C++ files"; return 0; }
  local log=$scratch/clang-format.log status=0
  printf '%s\0' "${files[@]}" |
    xargs -0 -n 16 -P "$jobs" clang-format-14 --style=file --dry-run --Werror 2> "$log" || status=$?
  local violations
  violations=$(grep -c ': error: code should be clang-formatted' "$log" || true)
  if ((status == 0)); then
    echo "${#files[@]} files formatted as .clang-format says"
    return 0
  fi
  if ((violations == 0)); then # clang-format itself failed
    cat "$log"
    return 1
  fi
  # Per file: its violations and the line of its first.
  local sites=$scratch/violations bad
  sed -n 's/^\(.*\):\([0-9]*\):[0-9]*: error: code should be clang-formatted.*/\1 \2/p' "$log" |
    LC_ALL=C sort -k1,1 -k2,2n > "$sites"
  awk '{ n[$1]++; if (!($1 in first)) { first[$1] = $2; order[++k] = $1 } }
       END { for (i = 1; i <= k; i++) { f = order[i]; printf "  %s: %d (first at line %d)\n", f, n[f], first[f] } }' \
    "$sites"
  bad=$(cut -d' ' -f1 "$sites" | sort -u | wc -l)
  echo "$violations violations in $bad of ${#files[@]} files (see one: clang-format-14 --dry-run <file>;" \
    "fix it: clang-format-14 -i <file>)"
  return 1
}

check_shell() {
  command -v shellcheck > /dev/null ||
    { echo "shellcheck is missing (tools/install-deps.sh installs it)"; return 1; }
  local scripts=() file first
  while IFS= read -r -d '' file; do
    case ${file##*/} in
      *.sh) scripts+=("$file") ;;
      *.*) ;; # another extension: go.mod, go.sum, *.env, *.yaml, *.py...
      *)
        first=""
        IFS= read -r first < "$file" || true
        if [[ $first =~ ^#!.*[/\ ](ba|da|k)?sh([[:space:]]|$) ]]; then scripts+=("$file"); fi
        ;;
    esac
  done < <(find tools .ci -type f -print0 2> /dev/null | LC_ALL=C sort -z)
  ((${#scripts[@]} > 0)) || { echo "no shell scripts"; return 0; }
  if shellcheck -x -P SCRIPTDIR "${scripts[@]}"; then
    echo "${#scripts[@]} scripts clean"
    return 0
  fi
  return 1
}

check_includes() { tools/check-includes.py; }
check_docs() { tools/check-cited-docs.sh; }

started=$(now_us)
failed=()
for check in format shell includes docs; do
  echo "==> fast lane: $check"
  check_started=$(now_us)
  status=0
  "check_$check" || status=$?
  if ((status == 0)); then result=ok; else result="FAILED (exit $status)"; failed+=("$check"); fi
  echo "--- $check: $result in $(seconds $(($(now_us) - check_started))) s"
done
total=$(seconds $(($(now_us) - started)))
if ((${#failed[@]} > 0)); then
  printf -v names '%s, ' "${failed[@]}"
  echo "fast lane: FAILED: ${names%, } in $total s"
  exit 1
fi
echo "fast lane: ok in $total s"
