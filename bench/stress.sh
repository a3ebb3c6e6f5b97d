#!/usr/bin/env bash
# `make stress`: the generator never hangs (issue 8's evidence).
#
# 1. RUNS (default 50) consecutive plain runs of a 2 000 req/s, 4 s scenario
#    against bench/server on core 0, the generator on core 1 with two CPU
#    hogs on that same core;
# 2. DEMO_RUNS (default 10) runs of the demo stack (scaled by DEMO_SCALE,
#    default 0.2).
# Every run must end by itself within its bound: the load within
# warm-up + phases + drain + 2 s (result.json started_at → finished_at), the
# process within that plus STARTUP_S (default 5 s; 60 s with a stack). A run
# still going at the bound + 60 s is killed and counted as a hang.
# Prints one line per run and a summary; exits 1 if any run hung or
# overran. Only loopback and the stack's own containers receive traffic.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-50}
DEMO_RUNS=${DEMO_RUNS:-10}
DEMO_SCALE=${DEMO_SCALE:-0.2}
STARTUP_S=${STARTUP_S:-5}
WORK=$ROOT/.bench/stress
mkdir -p "$WORK" bin
say() { printf 'stress: %s\n' "$*" >&2; }

go build -o "$WORK/server" ./bench/server
CGO_ENABLED=0 go build -o bin/loadgate ./cmd/loadgate
LG=$ROOT/bin/loadgate

cat >"$WORK/s2k.yaml" <<'YAML'
name: stress-2k
timeout: 2s
drain: 2s
max_in_flight: 64
phases:
  - {name: sustain, rate: 2000, duration: 4s}
workloads:
  - {name: get, share: 1, http: {method: GET, path: /}}
YAML

PORT=$((20000 + RANDOM % 20000))
taskset -c 0 "$WORK/server" -addr "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
SRV=$!
HOGS=()
cleanup() {
	kill "$SRV" "${HOGS[@]}" 2>/dev/null || true
}
trap cleanup EXIT
for _ in 1 2; do
	taskset -c 1 bash -c 'while :; do :; done' &
	HOGS+=($!)
done
sleep 0.5



span_s() { # started_at → finished_at of a result.json, in seconds
	python3 - "$1" <<'PY'
import json, sys, datetime
r = json.load(open(sys.argv[1]))
p = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
print("%.3f" % (p(r["finished_at"]) - p(r["started_at"])).total_seconds())
PY
}

hangs=0 over=0 fails=0
one() { # name bound_load_s bound_proc_s args...
	local name=$1 bl=$2 bp=$3
	shift 3
	local out=$WORK/$name t0 t1 rc=0
	rm -rf "$out"
	t0=$(date +%s.%N)
	timeout -k 5 "$(echo "$bp + 60" | bc)" "$LG" "$@" --out "$out" --progress never >"$out.log" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	local took span="-"
	took=$(echo "$t1 - $t0" | bc)
	[ -f "$out/result.json" ] && span=$(span_s "$out/result.json")
	local mark=ok
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		mark=HANG hangs=$((hangs + 1))
	elif (($(echo "$took > $bp" | bc))) || { [ "$span" != - ] && (($(echo "$span > $bl" | bc))); }; then
		mark=OVER over=$((over + 1))
	fi
	[ "$rc" -gt 1 ] && [ "$mark" = ok ] && fails=$((fails + 1))
	printf '%-10s exit %-3s load %7ss (bound %ss)  process %7.2fs (bound %ss)  %s\n' "$name" "$rc" "$span" "$bl" "$took" "$bp" "$mark"
}

say "$RUNS plain runs, 2000 req/s for 4 s, two CPU hogs on the generator's core"
for i in $(seq 1 "$RUNS"); do
	# bound: 4 s + drain 2 s + 2 s slack
	one "plain-$i" 8 $((8 + STARTUP_S)) run --scenario "$WORK/s2k.yaml" --target "http://127.0.0.1:$PORT/" --load-cpus 1
done
kill "${HOGS[@]}" 2>/dev/null || true
HOGS=()

if [ "$DEMO_RUNS" -gt 0 ]; then
	say "$DEMO_RUNS demo stack runs at --scale $DEMO_SCALE"
	bash examples/demo/build.sh >/dev/null 2>&1 || true
	for i in $(seq 1 "$DEMO_RUNS"); do
		# the demo: warm-up 5 s + phases 70 s, scaled; drain 5 s; slack 2 s
		bl=$(echo "(75 * $DEMO_SCALE) + 5 + 2" | bc)
		one "demo-$i" "$bl" "$(echo "$bl + 60" | bc)" run --scenario examples/demo/scenario.yaml --scale "$DEMO_SCALE"
	done
fi
echo "summary: $((RUNS + DEMO_RUNS)) runs, hangs $hangs, over their bound $over, unusable or refused $fails"
[ "$hangs" = 0 ] && [ "$over" = 0 ]
