#!/usr/bin/env bash
# The longest non-test Go functions of the tree, longest first: lines from
# "func" to its closing brace (gofmt'd code), file and name.
# Usage: scripts/longfuncs.sh [N]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files '*.go' ':!:*_test.go' ':!:*/testdata/*' | xargs awk '
  FNR == 1 { name = "" }
  /^func / {
    name = $0; sub(/^func /, "", name)
    recv = ""
    if (name ~ /^\(/) { recv = name; sub(/\).*/, ")", recv); sub(/^\([a-zA-Z0-9_]+ /, "(", recv); name = substr(name, index(name, ")") + 2); recv = recv "." }
    sub(/[\[(].*/, "", name); name = recv name; start = FNR
    if ($0 ~ /}$/) { name = "" }
    next
  }
  /^}/ && name != "" { printf "%5d  %s:%d  %s\n", FNR - start + 1, FILENAME, start, name; name = "" }
' | sort -rn | sed -n "1,${1:-10}p"
