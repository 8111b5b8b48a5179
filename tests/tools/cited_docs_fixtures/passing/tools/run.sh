#!/usr/bin/env bash
# Upstream's notes (https://example.com/guide/MISSING.md) are a URL, not a citation; docs/architecture.md is one.
dir=$(dirname "$0")
cat "$dir/GENERATED.md" "${dir}/ALSO-GENERATED.md" docs/*.md 2> /dev/null || true
