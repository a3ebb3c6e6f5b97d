#!/usr/bin/env bash
# Lateness p99 of the generator as a user other than root, with and without
# CAP_SYS_NICE (what scripts/loadgate-nice.sh adds), in alternating pairs
# on the same machine: ratios side by side, never one timed run.
# Usage (as root, which hands the capability down): scripts/nice-ab.sh USER [PAIRS]
set -euo pipefail
user=${1:?usage: scripts/nice-ab.sh USER [PAIRS]}
pairs=${2:-5}
uid=$(id -u "$user")
gid=$(id -g "$user")
dir=$(mktemp -d)
chmod 1777 "$dir" # the user writes its results here
stub=
trap '[[ -n $stub ]] && kill "$stub" 2>/dev/null; rm -rf "$dir"' EXIT
CGO_ENABLED=0 go build -o "$dir/loadgate" ./cmd/loadgate
cat >"$dir/load.yaml" <<'YAML'
name: nice-ab
warmup: 2s
phases:
  - {name: sustain, rate: 1000, duration: 15s}
workloads:
  - {name: get, http: {path: "/x/{n}"}}
YAML
as() { setpriv --reuid "$uid" --regid "$gid" --init-groups "$@"; }
as "$dir/loadgate" stub --listen 127.0.0.1:18099 --delay 1ms --route "GET /x/{id}" --body ok >/dev/null 2>&1 &
stub=$!
sleep 1
run() { # $1: label, rest: setpriv capability flags
	local label=$1
	shift
	local out
	out=$(as "$@" env HOME="$dir" "$dir/loadgate" run --load-priority "$label" --scenario "$dir/load.yaml" \
		--target http://127.0.0.1:18099 --load-cpus 1 --out "$dir/out-$label-$i" 2>&1) || true
	if ! grep -q '^late ' <<<"$out"; then
		echo "pair $i $label: no result: $(tail -n 1 <<<"$out")"
		return
	fi
	echo "pair $i $label: $(grep '^late ' <<<"$out" | sed 's/.*lateness //') · $(grep -o 'generator SCHED[^·]*' <<<"$out" | head -n 1)"
}
for i in $(seq 1 "$pairs"); do
	run rt --inh-caps +sys_nice --ambient-caps +sys_nice
	run normal
done
