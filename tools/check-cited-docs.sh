#!/usr/bin/env bash
# The cited-documents check (part of tools/fast-lane.sh): every document (a path ending in .md) that a source
# file cites must exist in the repository. Sources: C++ sources and headers, CMakeLists.txt, *.cmake, shell
# scripts (*.sh, and files without an extension that start with a shell's #!), and the YAML under crds/ and
# deploy/. A cited name resolves from the repository root or from the citing file's folder: a bare name (no
# folder) passes only if it is at the root or next to the citing file. URLs are not citations, nor are names
# built from a variable ($dir/README.md). Prints each offender as file:line and exits 1 if there is any.
#
# <root>/tools/cited-docs.ignore, if present, lists names that look like documents but are not ("<file>
# <name>" per line, with a # comment saying why).
#
# Usage: tools/check-cited-docs.sh [--root DIR]   (DIR: the tree to check; default: this repository)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
while (($# > 0)); do
  case $1 in
    --root)
      [[ $# -ge 2 ]] || { echo "check-cited-docs: --root needs a folder" >&2; exit 2; }
      root=$2; shift 2 ;;
    -h | --help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "check-cited-docs: unknown argument '$1' (usage: $0 [--root DIR])" >&2; exit 2 ;;
  esac
done
[[ -d $root ]] || { echo "check-cited-docs: no folder $root" >&2; exit 2; }
root=$(cd "$root" && pwd)
cd "$root"

# The candidate files: in a git work tree its tracked and untracked (not ignored) files, else every file.
# This check's own test and its fixture trees (tests/tools/*_fixtures) name missing documents on purpose.
list_files() {
  if [[ $(git rev-parse --show-toplevel 2>/dev/null || true) == "$root" ]]; then
    git ls-files -z --cached --others --exclude-standard
  else
    find . -name .git -prune -o -type f -print0 | sed -z 's#^\./##' | LC_ALL=C sort -z
  fi
}
is_shell_script() {
  local first=""
  IFS= read -r first < "$1" 2>/dev/null || true
  [[ $first =~ ^#!.*[/\ ](ba|da|k)?sh([[:space:]]|$) ]]
}
files=()
while IFS= read -r -d '' file; do
  [[ -f $file && ! -L $file ]] || continue # tracked but deleted in the work tree, or a link
  case $file in
    tests/tools/*_fixtures/* | tests/tools/check_cited_docs_test.sh) continue ;;
    *.h | *.hpp | *.cpp | *.cc | */CMakeLists.txt | CMakeLists.txt | *.cmake | *.sh) files+=("$file") ;;
    crds/*.yaml | crds/*.yml | deploy/*.yaml | deploy/*.yml) files+=("$file") ;;
    */*.* | [!.]*.*) ;; # any other extension
    *) if is_shell_script "$file"; then files+=("$file"); fi ;;
  esac
done < <(list_files)

# Known non-citations, "<file> <name>".
declare -A ignored=()
if [[ -f tools/cited-docs.ignore ]]; then
  while read -r ignore_file ignore_name _; do
    [[ -n $ignore_file && $ignore_file != \#* && -n ${ignore_name:-} ]] || continue
    ignored["$ignore_file $ignore_name"]=1
  done < tools/cited-docs.ignore
fi

# Every citation as "<file>\t<line>\t<name>": a name of path characters ending in .md (and not .mdx...),
# with no URL around it and not cut from a longer path ($dir/README.md, */README.md).
citations() {
  ((${#files[@]} > 0)) || return 0
  awk '
    {
      line = $0
      gsub(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^ \t"'\''<>)]*/, " ", line)
      while (match(line, /(\.\.?\/)*[A-Za-z0-9_][A-Za-z0-9_.\/-]*\.md/)) {
        name = substr(line, RSTART, RLENGTH)
        before = RSTART > 1 ? substr(line, RSTART - 1, 1) : ""
        after = substr(line, RSTART + RLENGTH, 1)
        line = substr(line, RSTART + RLENGTH)
        if (after ~ /[A-Za-z0-9_]/ || before ~ /[\/$}*~]/) continue
        print FILENAME "\t" FNR "\t" name
      }
    }' "${files[@]}"
}

# resolves <citing file> <name>: the name is a file or folder in the tree, from the root or from the citing
# file's folder (and not outside the tree through "..").
resolves() {
  local candidate
  for candidate in "$2" "$(dirname "$1")/$2"; do
    candidate=$(realpath -m -s --relative-to=. -- "$candidate")
    [[ $candidate != .. && $candidate != ../* && -e $candidate ]] && return 0
  done
  return 1
}

cited=0 missing=0
declare -A citing_files=()
while IFS=$'\t' read -r file line name; do
  [[ -z ${ignored["$file $name"]:-} ]] || continue
  cited=$((cited + 1))
  citing_files["$file"]=1
  resolves "$file" "$name" && continue
  echo "$file:$line: cites $name, which is not in the repository"
  missing=$((missing + 1))
done < <(citations)

summary="cited documents: $cited citation(s) in ${#citing_files[@]} of ${#files[@]} files"
if ((missing > 0)); then
  echo "$summary, $missing missing: FAILED"
  exit 1
fi
echo "$summary, OK"
