#!/usr/bin/env bash
# Side-by-side rotation: loadgate variants (and vegeta) at fixed rates, in
# turn, REPS times, so that a difference between variants is a ratio taken
# within minutes of each other on the same noisy machine (bench/README.md).
#
#   bench/rotate.sh NAME=ENV[,ENV...] ...      e.g.
#   bench/rotate.sh s30=LOADGATE_ENGINE_SPIN=30us s60=LOADGATE_ENGINE_SPIN=60us vegeta
#   bench/rotate.sh new=- old=LG_BIN=/tmp/loadgate-before   # the engine before a change
#
# A variant is NAME=ENV, where ENV is a comma-separated list of VAR=VALUE
# given to loadgate (or "-" for none); LG_BIN=PATH in it runs that loadgate
# binary instead of bin/loadgate, LG_ARGS="--flag value ..." adds flags to
# its run (after the rotation's own: they win). The variant "vegeta" runs
# vegeta (.bench/bin/vegeta, built by `make bench`) with 64 workers.
# Environment: RATES (default "5000 10000 20000"), SECS per run (5), REPS (3),
# PRIO (rt, the default, as make bench: vegeta under chrt -r 1, loadgate
# --load-priority rt; normal: both SCHED_OTHER).
# Server on core 0, generator on core 1, as in `make bench`. One line per
# run: CPU µs per request (user + system, wait4 rusage via GNU time),
# voluntary / involuntary context switches per request, loadgate's lateness,
# and the steal on the generator's core over the run (% of the core).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RATES=${RATES:-"5000 10000 20000"}
SECS=${SECS:-5}
REPS=${REPS:-3}
PRIO=${PRIO:-rt}
case $PRIO in
rt) VEGETA_PRE=(chrt -r 1) LG_PRIO=rt ;;
normal) VEGETA_PRE=() LG_PRIO=normal ;;
*) echo "rotate: PRIO=$PRIO: want rt or normal" >&2; exit 2 ;;
esac
W=${ROTATE_DIR:-$ROOT/.bench/rotate}
[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "rotate: needs GNU time (/usr/bin/time, Debian package time)" >&2; exit 2; }
mkdir -p "$W" bin
go build -o "$W/server" ./bench/server
go build -o "$W/wakeups" ./bench/wakeups
CGO_ENABLED=0 go build -o bin/loadgate ./cmd/loadgate # the working tree, as make bench builds it
for v in "$@"; do
	if [ "$v" = vegeta ] && [ ! -x .bench/bin/vegeta ]; then echo "rotate: vegeta: run make bench once to build .bench/bin/vegeta" >&2; exit 2; fi
	if [ "$v" != vegeta ] && [[ "$v" != *=* ]]; then echo "rotate: variant $v: want NAME=ENV or vegeta" >&2; exit 2; fi
done

taskset -c 0 "$W/server" -addr 127.0.0.1:0 >"$W/server.out" &
SRV=$!
trap 'kill $SRV 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$W/server.out" && break; sleep 0.1; done
ADDR=$(awk '/listening/{print $2}' "$W/server.out")
echo "GET http://$ADDR/" >"$W/targets.txt"
steal() { awk -v c="cpu1" '$1 == c {print $9}' /proc/stat; }

for rep in $(seq "$REPS"); do
	for R in $RATES; do
		cat >"$W/s.yaml" <<YAML
name: rotate-$R
timeout: 5s
max_in_flight: 64
ceilings: {rate: 200000, duration: 10m, in_flight: 10000}
phases:
  - {name: sustain, rate: $R, duration: ${SECS}s}
workloads:
  - {name: get, share: 1, http: {method: GET, path: /}}
YAML
		for v in "$@"; do
			name=${v%%=*}
			s0=$(steal)
			if [ "$v" = vegeta ]; then
				/usr/bin/time -f "%U %S %w %c" -o "$W/time" timeout -k 5 $((SECS + 30)) taskset -c 1 ${VEGETA_PRE[@]+"${VEGETA_PRE[@]}"} .bench/bin/vegeta attack \
					-rate="$R/1s" -duration="${SECS}s" -workers=64 -max-workers=64 -timeout=5s \
					-targets="$W/targets.txt" -output="$W/vegeta.bin" || true
				lat="(vegeta: see make bench)"
			else
				envs=()
				extra=()
				lg=bin/loadgate
				if [ "${v#*=}" != - ]; then
					IFS=, read -ra kv <<<"${v#*=}"
					for e in "${kv[@]}"; do
						case $e in
						LG_BIN=*) lg=${e#LG_BIN=} ;;
						LG_ARGS=*) read -ra extra <<<"${e#LG_ARGS=}" ;;
						*) envs+=("$e") ;;
						esac
					done
				fi
				# A loadgate older than --load-priority runs under chrt instead.
				pre=() prio=(--load-priority "$LG_PRIO")
				help=$("$lg" run -h 2>&1 || true) # whole: a grep -q closing the pipe early fails it under pipefail
				if [[ $help != *-load-priority* ]]; then
					prio=()
					[ "$LG_PRIO" = rt ] && pre=(chrt -r 1)
				fi
				rm -rf "$W/out"
				# Bounded: a loadgate that hangs (the lost wake-up of the engine before
				# issue 8's fix did, here, on 3 December) dumps its goroutines
				# into loadgate.err and the rotation goes on.
				env ${envs[@]+"${envs[@]}"} /usr/bin/time -f "%U %S %w %c" -o "$W/time" timeout -s QUIT -k 5 $((SECS + 30)) taskset -c 1 ${pre[@]+"${pre[@]}"} "$lg" run \
					--scenario "$W/s.yaml" --target "http://$ADDR/" --out "$W/out" --load-cpus 1 --progress never ${prio[@]+"${prio[@]}"} ${extra[@]+"${extra[@]}"} \
					>/dev/null 2>"$W/loadgate.err" || true
				lat=$("$W/wakeups" -result "$W/out/result.json" 2>/dev/null) || lat="no result: hung or failed (see $W/loadgate.err)"
			fi
			s1=$(steal)
			read -r U S V C < <(grep -E '^[0-9.]+ [0-9.]+ [0-9]+ [0-9]+$' "$W/time")
			awk -v name="$name" -v r="$R" -v n=$((R * SECS)) -v u="$U" -v s="$S" -v vc="$V" -v ic="$C" \
				-v st=$((s1 - s0)) -v secs="$SECS" -v lat="$lat" 'BEGIN {
				printf "%-10s %6d/s  CPU %6.2f µs/req  vol %.3f invol %.3f cs/req  steal %4.1f%%  lateness %s\n",
					name, r, 1e6 * (u + s) / n, vc / n, ic / n, st / secs, lat }'
		done
	done
done
