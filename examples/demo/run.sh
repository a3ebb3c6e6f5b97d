#!/usr/bin/env bash
# make demo: builds the demo service (a static binary, so the FROM scratch
# image needs no registry), then runs the demo's named load against the demo
# stack, pinned, and prints where the results are.
set -euo pipefail
cd "$(dirname "$0")/../.."
# the scenario's stack.prepare builds the service binary
out=${LOADGATE_DEMO_OUT:-loadgate-out/demo-$(date +%Y%m%d-%H%M%S)}
set +e
bin/loadgate run --scenario examples/demo/scenario.yaml --out "$out" ${LOADGATE_DEMO_ARGS:-}
code=$?
set -e
echo
echo "demo results: $out/  (report.md, result.json, verdict.json, snapshots.jsonl, stats.jsonl, logs/)"
case $code in
0) meaning="the verdict passed" ;;
1) meaning="the verdict failed (a threshold or check broke)" ;;
2) meaning="the scenario or flags were refused" ;;
3) meaning="the run was unusable" ;;
*) meaning="an unexpected exit" ;;
esac
echo "loadgate exit code $code: $meaning"
# The demo's thresholds are the demo's: a failed verdict is a result, not a broken demo.
[ "$code" -le 1 ]
