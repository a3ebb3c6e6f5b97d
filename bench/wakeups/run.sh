#!/usr/bin/env bash
# Where the generator's voluntary context switches come from, per request.
#
#   bench/wakeups/run.sh [LOADGATE_BINARY] [RATE] [SECONDS]
#
# Builds bench/server and bench/wakeups, starts the server pinned to core 0,
# runs `loadgate run` at RATE req/s (default 5000, max_in_flight 64, the
# bench's scenario) pinned to core 1, and over SECONDS (default 5) of its
# steady state (from 2 s in):
#   1. per thread: voluntary/involuntary context switches from
#      /proc/PID/task/TID/status (no tracer; sysmon is the runtime's second
#      thread), per request;
#   2. perf record -a of sched:sched_switch + sched:sched_waking with call
#      chains, attributed by bench/wakeups (each sleep paired with the wake-up
#      that ended it), per request;
#   3. the same for the server's threads, from the same recording;
# and prints the run's lateness. The two are separate runs (perf adds
# overhead). Needs perf and root (or perf_event_paranoid ≤ -1).
# Environment: GODEBUG etc. pass through to loadgate; WAKEUPS_PERF=0 skips 2;
# LG_ARGS adds flags to loadgate's run (e.g. LG_ARGS="--load-priority rt").
set -euo pipefail
cd "$(dirname "$0")/../.."
LG=${1:-bin/loadgate}
RATE=${2:-5000}
SECS=${3:-5}
W=${WAKEUPS_DIR:-.bench/wakeups}
mkdir -p "$W"
go build -o "$W/server" ./bench/server
go build -o "$W/wakeups" ./bench/wakeups
LG=$(cd "$(dirname "$LG")" && pwd)/$(basename "$LG")
COMM=$(basename "$LG" | cut -c1-15)

cat >"$W/scenario.yaml" <<YAML
name: wakeups-$RATE
timeout: 5s
max_in_flight: 64
ceilings: {rate: 200000, duration: 10m, in_flight: 10000}
phases:
  - {name: sustain, rate: $RATE, duration: $((SECS + 4))s}
workloads:
  - {name: get, share: 1, http: {method: GET, path: /}}
YAML

taskset -c 0 "$W/server" -addr 127.0.0.1:0 >"$W/server.out" &
SRV=$!
trap 'kill $SRV 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$W/server.out" && break; sleep 0.1; done
ADDR=$(awk '/listening/{print $2}' "$W/server.out")

threads() { # TID VOL INVOL for every thread of $1
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(awk '/^voluntary_ctxt_switches/{v=$2} /^nonvoluntary_ctxt_switches/{n=$2} END{print v, n}' "$t/status" 2>/dev/null)"
	done | sort
}
start() { # $1: out dir
	rm -rf "$1"
	taskset -c 1 "$LG" run --scenario "$W/scenario.yaml" --target "http://$ADDR/" --out "$1" \
		--load-cpus 1 --progress never ${LG_ARGS:-} >/dev/null 2>"$1.err" &
	PID=$!
	sleep 2
}
lateness() { "$W/wakeups" -result "$1/result.json" || true; }

echo "## $COMM at $RATE req/s, $SECS s of steady state (server on core 0, generator on core 1)"
echo
echo "### 1. per thread, no tracer (/proc/PID/task/*/status)"
start "$W/run-proc"
threads $PID >"$W/t1"
t0=$(date +%s.%N)
sleep "$SECS"
threads $PID >"$W/t2"
t1=$(date +%s.%N)
SYSMON=$(awk '{print $1}' "$W/t1" | sort -n | sed -n 2p)
wait $PID || true
echo
echo "| thread | role | voluntary /req | involuntary /req |"
echo "| --- | --- | ---: | ---: |"
join "$W/t1" "$W/t2" | awk -v d="$(echo "$t1 - $t0" | bc)" -v r="$RATE" -v s="$SYSMON" -v main="$PID" '
	{ v = ($4 - $2) / d / r; n = ($5 - $3) / d / r; tv += v; tn += n
	  role = ($1 == s) ? "sysmon" : ($1 == main) ? "main (m0)" : "M"
	  if (v + n >= 0.001) printf "| %s | %s | %.3f | %.3f |\n", $1, role, v, n }
	END { printf "| all | | %.3f | %.3f |\n", tv, tn }'
echo
echo "lateness: $(lateness "$W/run-proc")"

if [ "${WAKEUPS_PERF:-1}" != 0 ]; then
	echo
	echo "### 2. perf: each sleep paired with the wake-up that ended it"
	echo
	start "$W/run-perf"
	perf record -q -a -e sched:sched_switch -e sched:sched_waking --call-graph fp -o "$W/perf.data" -- sleep "$SECS" 2>/dev/null
	wait $PID || true
	perf script -F comm,tid,cpu,event,trace,ip,sym -i "$W/perf.data" 2>/dev/null |
		"$W/wakeups" -comm "$COMM" -secs "$SECS" -rate "$RATE" -peer server
	echo
	echo "### 3. the same recording, the server's threads"
	echo
	perf script -F comm,tid,cpu,event,trace,ip,sym -i "$W/perf.data" 2>/dev/null |
		"$W/wakeups" -comm server -secs "$SECS" -rate "$RATE" -peer "$COMM"
	echo
	echo "lateness (under perf): $(lateness "$W/run-perf")"
fi
