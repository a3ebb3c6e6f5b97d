#!/usr/bin/env bash
# Real A/B gates for make gate-quality: GQ_GATES gates of base GQ_BASE
# against head GQ_HEAD (a commit whose backend or api is slower on one
# endpoint), exactly as a user runs them. Each gate's results stay in
# .bench/gatequality/ab/<GQ_NAME>/gate-<k>/ (verdict.json, rounds); a DONE
# file records the exit code and the wall time. Resumable: kept gates are
# not run again. The analysis (bench/gatequality, -ab) counts the gates
# that called the changed workload a regression.
#
# Usage: GQ_REPO=/tmp/abclone GQ_BASE=main GQ_HEAD=slow bench/gatequality/ab.sh
# Environment:
#   GQ_REPO      the git checkout holding both refs (default: .)
#   GQ_BASE, GQ_HEAD  the refs (required)
#   GQ_NAME      the label of this A/B (default: ab)
#   GQ_WORKLOAD  the workload the change slows (default: profile)
#   GQ_CHANGE    the change in words, for the table (default: "+20%")
#   GQ_SCENARIO  the scenario (default: examples/demo/gate.yaml)
#   GQ_GATES     gates to run (default 5)
#   GQ_ARGS      the gate's rounds flags (default: the Action's, --rounds auto)
#   GQ_LOADGATE  the loadgate binary (default: bin/loadgate)
#   GQ_NICE      loadgate's niceness, as for collect.sh (default: unchanged)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
repo=$(cd "${GQ_REPO:-$root}" && pwd)
bin=${GQ_LOADGATE:-$root/bin/loadgate}
: "${GQ_BASE:?set GQ_BASE}" "${GQ_HEAD:?set GQ_HEAD}"
name=${GQ_NAME:-ab}
workload=${GQ_WORKLOAD:-profile}
change=${GQ_CHANGE:-+20%}
scen=${GQ_SCENARIO:-examples/demo/gate.yaml}
gates=${GQ_GATES:-5}
args=${GQ_ARGS:---rounds auto}
dir=$root/.bench/gatequality/ab/$name
nice=()
[ -z "${GQ_NICE:-}" ] || nice=(nice -n "$GQ_NICE")
[ -x "$bin" ] || { echo "ab: $bin not built (make build)" >&2; exit 2; }
cd "$repo" || exit 2
for k in $(seq 1 "$gates"); do
  out=$dir/gate-$k
  if [ -f "$out/DONE" ]; then echo "ab: $name gate $k: cached"; continue; fi
  mkdir -p "$out"
  echo "ab: $name gate $k: $GQ_BASE → $GQ_HEAD, $scen $args ($(date -u +%H:%M:%S))"
  start=$(date +%s)
  # shellcheck disable=SC2086 # GQ_ARGS is flags
  "${nice[@]}" "$bin" gate --scenario "$scen" --base "$GQ_BASE" --head "$GQ_HEAD" $args \
    --out "$out" --force --progress never >"$out/stdout.txt" 2>"$out/stderr.txt"
  code=$?
  end=$(date +%s)
  echo "ab: $name gate $k: exit $code in $((end - start)) s"
  if [ "$code" -le 1 ] && [ -f "$out/verdict.json" ]; then
    printf '{"name":"%s","workload":"%s","change":"%s","scenario":"%s","args":"%s","exit":%s,"wall_s":%s}\n' \
      "$name" "$workload" "$change" "$scen" "$args" "$code" "$((end - start))" >"$out/DONE"
  else
    echo "ab: $name gate $k: not kept (see $out/stderr.txt); run again to retry" >&2
  fi
done
