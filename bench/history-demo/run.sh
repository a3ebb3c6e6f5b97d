#!/bin/bash
# The history demo (after setup.sh): nine commits of $D/repo, each gated
# for real (ROUNDS duet rounds, default 5) against the previous entry's
# commit (the parent for the first) and recorded on the bare remote's
# loadgate-data branch. Latency knob (knob.py): the api's waits, ×1 for
# three commits, ×1.4 (the deliberate slowdown), ×1 again, then four
# creeping steps of ×1.06.
set -u
D=${D:-/tmp/histdemo}; ROUNDS=${ROUNDS:-5}
H=$(cd "$(dirname "$0")" && pwd)
LG=$D/loadgate
cd "$D/repo" || exit 2
mkdir -p "$D/gates"
steps=(
 "1|docs: a note on the service"
 "1|refactor: no latency change"
 "1|docs: another note"
 "1.4|items: a deliberate slowdown (waits x1.4)"
 "1.4|docs: after the slowdown"
 "1.484|creep 1: waits x1.06"
 "1.57304|creep 2: waits x1.06"
 "1.6674224|creep 3: waits x1.06"
 "1.767467744|creep 4: waits x1.06"
)
i=0
for s in "${steps[@]}"; do
  i=$((i+1)); f=${s%%|*}; msg=${s#*|}
  python3 "$H/knob.py" "$f" compose.yaml
  echo "entry $i: $msg" >> NOTES
  git add -A && git commit -qm "$msg"
  base=$($LG history previous --scenario demo-gate)
  [ -z "$base" ] && base=$(git rev-parse HEAD~1)
  echo "=== entry $i $(git rev-parse --short=12 HEAD) factor $f base ${base:0:12} $(date -u +%T)"
  $LG gate --scenario gate.yaml --base "$base" --head HEAD --rounds "$ROUNDS" --out "$D/gates/$i" --progress never > "$D/gates/$i.log" 2>&1
  echo "gate exit $? $(grep -m1 '^verdict:' "$D/gates/$i.log")"
  grep -E '^  (api_read|item) +p95' "$D/gates/$i.log"
  GITHUB_EVENT_NAME=push $LG history record --from "$D/gates/$i" --ref main
done
echo "=== done $(date -u +%T)"
