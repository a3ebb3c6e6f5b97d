#!/usr/bin/env bash
# Collects the corpus of real A/A rounds for make gate-quality: for each
# design, CHUNKS gates of ROUNDS paired rounds each, both sides the same
# commit (--base REF --head REF: two worktrees of one commit, ABBA, the
# idle side paused — exactly what a gate does; a design's flags, such as
# --duet, change that as they change a gate). Every gate's rounds stay in
# .bench/gatequality/corpus/<design>/chunk-<k>/{base,head}/round-<i>/result.json.
# Resumable: a chunk with a DONE file is kept; a chunk that was interrupted
# or refused is run again (--force). The chunks of the designs interleave,
# so that the machine's drift over the hour falls on every design alike.
#
# Write .bench/gatequality/corpus/CONDITIONS.md beside the designs: one
# paragraph saying when, on what machine, shared with what and at what
# priority the corpus was recorded; the table prints it ("How far the
# figures carry").
#
# Usage: bench/gatequality/collect.sh            (from the repository root)
# Environment:
#   GQ_REPO     the git checkout whose commit both sides run (default: .)
#   GQ_REF      that commit (default: HEAD)
#   GQ_CHUNKS   gates per design (default 3)
#   GQ_LOADGATE the loadgate binary (default: bin/loadgate)
#   GQ_NICE     run loadgate (the generator, not the stack's containers,
#               which dockerd starts) at this niceness, e.g. -10 on a
#               machine shared with other work (default: unchanged)
#   GQ_DESIGNS  "name=scenario:rounds[:flag...] ..." (default: the ones below);
#               flags after the rounds, colon-separated, are passed to
#               loadgate gate as they are, e.g. duet5=bench/gatequality/designs/steady5.yaml:8:--duet
#               (a design's flags are its own: one design, one set of flags)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
repo=$(cd "${GQ_REPO:-$root}" && pwd)
bin=${GQ_LOADGATE:-$root/bin/loadgate}
chunks=${GQ_CHUNKS:-3}
ref=${GQ_REF:-HEAD}
corpus=$root/.bench/gatequality/corpus
designs=${GQ_DESIGNS:-"steady5=bench/gatequality/designs/steady5.yaml:8 dense5=bench/gatequality/designs/dense5.yaml:8 duet5=bench/gatequality/designs/steady5.yaml:10:--duet"}
nice=()
[ -z "${GQ_NICE:-}" ] || nice=(nice -n "$GQ_NICE")
[ -x "$bin" ] || { echo "collect: $bin not built (make build)" >&2; exit 2; }
cd "$repo" || exit 2
for k in $(seq 1 "$chunks"); do
  for d in $designs; do
    name=${d%%=*}; rest=${d#*=}; scen=${rest%%:*}; rest=${rest#*:}; rounds=${rest%%:*}
    extra=()
    if [ "$rest" != "$rounds" ]; then IFS=: read -r -a extra <<<"${rest#*:}"; fi
    case $rounds in ''|*[!0-9]*) echo "collect: design $d: rounds \"$rounds\" is not a number" >&2; exit 2 ;; esac
    out=$corpus/$name/chunk-$k
    if [ -f "$out/DONE" ]; then echo "collect: $name chunk $k: cached"; continue; fi
    mkdir -p "$out"
    echo "collect: $name chunk $k: $rounds rounds of $scen${extra[*]:+ (${extra[*]})} at $(git -C "$repo" rev-parse --short "$ref") ($(date -u +%H:%M:%S))"
    start=$(date +%s)
    "${nice[@]}" "$bin" gate --scenario "$scen" --base "$ref" --head "$ref" --rounds "$rounds" --budget 60m \
      --out "$out" --force --progress never "${extra[@]}" >"$out/stdout.txt" 2>"$out/stderr.txt"
    code=$?
    end=$(date +%s)
    echo "collect: $name chunk $k: exit $code in $((end - start)) s"
    # exit 3 (unusable: a round the watchdog ended, a stack that failed)
    # is kept too: its usable pairs join the corpus, and the table counts
    # the gates a user would have seen unusable.
    if { [ "$code" -le 1 ] || [ "$code" -eq 3 ]; } && [ -f "$out/verdict.json" ]; then
      printf '{"design":"%s","scenario":"%s","rounds":%s,"flags":"%s","exit":%s,"wall_s":%s,"started":%s}\n' \
        "$name" "$scen" "$rounds" "${extra[*]}" "$code" "$((end - start))" "$start" >"$out/DONE"
    else
      echo "collect: $name chunk $k: not kept (see $out/stderr.txt); run again to retry" >&2
    fi
  done
done
