#!/usr/bin/env bash
# `make bench`: loadgate vs vegeta v12.13.0 against a loopback server, each
# pinned to its own core; then the project's Go micro-benchmarks.
# Report: stdout and .bench/results.md (see bench/README.md).
#
# Environment:
#   BENCH_TOOLS=vegeta          run only vegeta (e.g. before bin/loadgate builds)
#   BENCH_ARGS="-duration 5s"   extra flags for bench/compare (go run ./bench/compare -h)
#   BENCH_GO_BENCH=0            skip the Go micro-benchmarks
#   LOADGATE_BIN=/path/loadgate measure this prebuilt loadgate binary instead of
#                               building bin/loadgate from the working tree
#   LOADGATE_VERSION=label      what the report calls it (default: the commit,
#                               or "prebuilt PATH" with LOADGATE_BIN)
#   BENCH_LOW=1                 only the low rates (20, 60, 300, 1000/s in rt and
#                               normal mode, at most 6 minutes; make bench-low),
#                               report in .bench/lowrate.md, no micro-benchmarks
#   BENCH_BEFORE=REF            also measure loadgate built from git REF (e.g.
#                               main) as the tool "before", side by side
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.bench/bin
TOOLS=${BENCH_TOOLS:-vegeta,loadgate}
VEGETA_VERSION=v12.13.0
mkdir -p "$BIN"

say() { printf 'bench: %s\n' "$*" >&2; }

command -v taskset >/dev/null || { say "taskset not found (util-linux)"; exit 1; }
if [ "$(nproc --all)" -lt 2 ]; then
	say "needs 2 cores (server on core 0, generator on core 1); this machine has $(nproc --all)"
	exit 1
fi

# vegeta, built from the Go module proxy into the git-ignored .bench/bin.
if ! go version -m "$BIN/vegeta" 2>/dev/null | grep -q "github.com/tsenart/vegeta/v12[[:space:]]*$VEGETA_VERSION"; then
	say "building vegeta $VEGETA_VERSION"
	(cd "$ROOT/.bench" && GOWORK=off GOFLAGS= GOBIN="$BIN" go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION")
fi

say "building bench/server, bench/compare"
go build -o "$BIN/server" ./bench/server
go build -o "$BIN/compare" ./bench/compare

LOADGATE=""
LOADGATE_VERSION=${LOADGATE_VERSION:-}
if [[ ",$TOOLS," == *",loadgate,"* ]]; then
	if [ -n "${LOADGATE_BIN:-}" ]; then
		[ -x "$LOADGATE_BIN" ] || { say "LOADGATE_BIN=$LOADGATE_BIN is not an executable"; exit 1; }
		LOADGATE=$(cd "$(dirname "$LOADGATE_BIN")" && pwd)/$(basename "$LOADGATE_BIN")
		LOADGATE_VERSION=${LOADGATE_VERSION:-"prebuilt $LOADGATE_BIN"}
		say "using prebuilt $LOADGATE ($LOADGATE_VERSION)"
	else
		say "building bin/loadgate"
		mkdir -p bin
		CGO_ENABLED=0 go build -o bin/loadgate ./cmd/loadgate
		LOADGATE=$ROOT/bin/loadgate
		if [ -z "${LOADGATE_VERSION:-}" ]; then
			LOADGATE_VERSION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
			if [ -n "$(git status --porcelain 2>/dev/null)" ]; then LOADGATE_VERSION+="+dirty"; fi
		fi
	fi
fi

# The engine before a change, from git, as the tool "before".
BEFORE_ARGS=()
if [ -n "${BENCH_BEFORE:-}" ]; then
	rev=$(git rev-parse --short "$BENCH_BEFORE")
	say "building loadgate at $BENCH_BEFORE ($rev) as \"before\""
	rm -rf "$ROOT/.bench/before" && mkdir -p "$ROOT/.bench/before/src"
	git archive "$rev" | tar -x -C "$ROOT/.bench/before/src"
	(cd "$ROOT/.bench/before/src" && CGO_ENABLED=0 go build -o "$ROOT/.bench/before/loadgate" ./cmd/loadgate)
	BEFORE_ARGS=(-loadgate-before "$ROOT/.bench/before/loadgate")
	TOOLS+=",before"
	LOADGATE_VERSION+=" (before: $BENCH_BEFORE $rev)"
fi

OUT=$ROOT/.bench/results.md
LOW_ARGS=()
if [ "${BENCH_LOW:-0}" = 1 ]; then
	OUT=$ROOT/.bench/lowrate.md
	LOW_ARGS=(-only-low)
	BENCH_GO_BENCH=0
fi

# The orchestrator shares core 0 with the server; it sleeps in wait4 while a
# generator runs, so core 1 is the generator's alone.
# shellcheck disable=SC2086
taskset -c 0 "$BIN/compare" \
	-vegeta "$BIN/vegeta" -loadgate "$LOADGATE" -server "$BIN/server" \
	-loadgate-version "$LOADGATE_VERSION" -tools "$TOOLS" "${BEFORE_ARGS[@]}" "${LOW_ARGS[@]}" \
	-work "$ROOT/.bench/run" -out "$OUT" ${BENCH_ARGS:-}
say "report written to ${OUT#"$ROOT"/}"

if [ "${BENCH_GO_BENCH:-1}" != 0 ]; then
	say "Go micro-benchmarks"
	# Packages that do not compile yet are reported and skipped, not fatal.
	go test -run='^$' -bench=. -benchmem -timeout=5m ./... >"$ROOT/.bench/gobench.txt" 2>&1 || true
	{
		echo
		echo "## Go micro-benchmarks (go test -run='^\$' -bench=. -benchmem ./...)"
		echo
		echo '```'
		cat "$ROOT/.bench/gobench.txt"
		echo '```'
	} | tee -a "$ROOT/.bench/results.md"
fi
