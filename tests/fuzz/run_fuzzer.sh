#!/usr/bin/env bash
# run_fuzzer.sh <fuzzer> <seed corpus> <artifact dir> <dictionary or none> <libFuzzer flags...>
# Runs a libFuzzer target on a copy of its seed corpus in a temporary folder (what it adds is thrown away
# with it), with the sanitizer options of the ASan+UBSan unit run (tools/test.sh) unless the caller set its
# own. libFuzzer exits non-zero on a crash, a sanitizer report or a failed check, and so does this script;
# the input that did it is written to the artifact folder.
set -euo pipefail
fuzzer=$1 seeds=$2 artifacts=$3 dict=$4
shift 4
repo=$(cd "$(dirname "$0")/../.." && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS-suppressions=$repo/tools/sanitizers/lsan.supp:print_suppressions=0}

corpus=$(mktemp -d "${TMPDIR:-/tmp}/ipu-fuzz-corpus.XXXXXX")
trap 'rm -rf "$corpus"' EXIT
cp -R "$seeds"/. "$corpus"/
mkdir -p "$artifacts"
name=$(basename "$fuzzer")
flags=(-artifact_prefix="$artifacts/$name-" -timeout=30 -rss_limit_mb=4096 -print_final_stats=1)
[[ $dict != none ]] && flags+=(-dict="$dict")
echo "$name: $(find "$corpus" -type f | wc -l) seeds from $seeds, flags: ${flags[*]} $*"
"$fuzzer" "${flags[@]}" "$@" "$corpus"
