#!/usr/bin/env bash
# How much prose the non-test Go code carries: comment lines per package,
# comment blocks longer than 6 lines, and string literals of 180+ characters
# (user messages, notes, flag help).
# Usage: scripts/prose.sh [PKGDIR...]   (default: every package)
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.go' ':!:*_test.go' ':!:*/testdata/*')
if [ $# -gt 0 ]; then
  files=$(for d in "$@"; do git ls-files "${d%/}" | grep -E "^${d%/}/[^/]+\.go$" | grep -v _test.go || true; done)
fi
echo "$files" | xargs awk '
  function flush() { if (run > 6) { long++; if (run > worst) { worst = run; where = FILENAME ":" (FNR - run) } } run = 0 }
  FNR == 1 { flush() }
  /^[ \t]*\/\// { lines++; run++; pkg[dir(FILENAME)]++; next }
  { flush() }
  {
    s = $0
    while (match(s, /"([^"\\]|\\.)*"/)) { if (RLENGTH >= 182) strs++; s = substr(s, RSTART + RLENGTH) }
  }
  function dir(f) { sub(/\/[^\/]+$/, "", f); return f }
  END {
    flush()
    for (p in pkg) printf "%6d  %s\n", pkg[p], p | "sort -rn"
    close("sort -rn")
    printf "comment lines %d; blocks over 6 lines %d (longest %d, %s); strings of 180+ chars %d\n", lines, long, worst, where, strs
  }'
