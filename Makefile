# loadgate — see README.md. Two commands set everything up: `make demo`, `make test`.
GO      ?= go
BIN     := bin/loadgate
PKGS    := ./...

# The packages holding tests of a tier (internal/testtier): those whose
# tests name it, as git knows them.
tierpkgs = $(or $(shell git grep -l -e 'testtier\.$(1)\b' -- '*_test.go' | xargs -r -n1 dirname | sort -u | sed 's|^|./|'),$(error no test names testtier.$(1)))

.PHONY: build test sim e2e runner bench bench-low stress demo lint fuzz clean gate-quality gate-quality-collect screenshots

build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/loadgate

# vet, then every test of the default tier, within about 6 minutes on 2 cores (the
# Docker-backed ones skip loudly without an engine, and fail under
# LOADGATE_REQUIRE_DOCKER=1, as .ci/run sets). One package at a time: the
# engine tests measure latency against loopback servers, and a parallel
# docker build would put noise into them. The full-size simulations and the
# long end-to-end runs are `make sim` and `make e2e`; each keeps a small,
# seeded version here (internal/testtier).
test:
	$(GO) vet $(PKGS)
	$(GO) test -p 1 -count=1 -timeout 15m $(PKGS)

# The bound of each longer tier's go test (.ci/run passes what is left of
# its budget, so that the job never outlives it).
TIER_TIMEOUT ?= 60m

# The full-size statistical simulations (LOADGATE_TEST_TIER=sim): the
# packages holding them, whole. LOADGATE_SIM_GATES=1000 gives README's tables.
sim:
	LOADGATE_TEST_TIER=sim $(GO) test -p 1 -count=1 -timeout $(TIER_TIMEOUT) $(call tierpkgs,Sim)

# The long end-to-end runs (LOADGATE_TEST_TIER=e2e): the runner's signal and
# gate runs, every Docker stack case, the demo stack: the packages holding
# them, whole.
# E2E_SKIP leaves packages out (.ci/run runs internal/actrunner as make runner).
e2e:
	LOADGATE_TEST_TIER=e2e $(GO) test -p 1 -count=1 -timeout $(TIER_TIMEOUT) $(filter-out $(E2E_SKIP),$(call tierpkgs,E2E))

# The workflows and example workflows on a real runner (nektos/act,
# offline; internal/actrunner), against a GitHub API that stores their
# comment (internal/githubfake): part of make e2e, alone here. The first
# run builds act into the user cache (LOADGATE_E2E_CACHE overrides).
runner:
	LOADGATE_TEST_TIER=e2e $(GO) test -p 1 -count=1 -timeout $(TIER_TIMEOUT) -v ./internal/actrunner

# Throughput and CPU against vegeta, side by side in one run (not a test).
bench: build
	bash bench/run.sh

# The low rates alone (20, 60, 300, 1000 req/s, rt and normal mode, loadgate
# against vegeta and the engine of main, 10 s a run, at most 6 minutes):
# .bench/lowrate.md. BENCH_BEFORE=REF measures another engine beside it.
BENCH_BEFORE ?= main
bench-low: build
	BENCH_LOW=1 BENCH_BEFORE=$(BENCH_BEFORE) BENCH_ARGS="-low-duration 10s $(BENCH_ARGS)" bash bench/run.sh

# The generator never hangs: 50 plain runs with CPU hogs on its core, 10 on
# the demo stack, each within its stated bound (bench/stress.sh; not a test).
stress:
	bash bench/stress.sh

# The gate's operating characteristic (not a test): every committed
# corpus of real A/A rounds (bench/gatequality/corpora/<name>: the
# per-round histograms and where and when they were recorded) resampled
# into gates judged by gate/verdict, each estimator side by side. Nothing
# is collected: anyone re-judges the same bad days. Writes
# bench/gate-quality.md.
# GQ_ROUNDS: fixed round counts judged beside --rounds auto (e.g. 3,5,8).
GQ_ESTIMATORS ?= mean-t,hodges-lehmann,trimmed-mean
GQ_ROUNDS ?=
gate-quality:
	$(GO) run ./bench/gatequality -estimators $(GQ_ESTIMATORS) -rounds "$(GQ_ROUNDS)"

# Record a new corpus on this machine (resumable, under .bench/gatequality;
# bench/gatequality/*.sh say how), the real A/B gates when GQ_BASE and
# GQ_HEAD name a slower head, and judge it; then write its CONDITIONS.md
# and commit it with
# go run ./bench/gatequality -pack .bench/gatequality/corpus -name <date>.
gate-quality-collect: build
	bash bench/gatequality/collect.sh
	if [ -n "$$GQ_HEAD" ]; then bash bench/gatequality/ab.sh; fi
	$(GO) run ./bench/gatequality -corpus .bench/gatequality/corpus -estimators $(GQ_ESTIMATORS) -rounds "$(GQ_ROUNDS)" -out .bench/gatequality/gate-quality.md

# What a reviewer sees: the pull request comment goldens (gate/action's
# testdata, made by go test ./gate/report ./gate/action -update) rendered as
# GitHub-flavoured Markdown (bench/render, goldmark) and screenshotted in
# headless Chromium (Debian: apt-get install chromium) into
# bench/screenshots/ as posted (collapsed), and with every section open
# into .bench/render/ (not committed: large).
# Look at them before calling a change to the report done.
SHOTS    := bench/screenshots
CHROMIUM ?= chromium
screenshots:
	mkdir -p $(SHOTS) .bench/render
	$(GO) build -o .bench/render/render ./bench/render
	for f in gate/action/testdata/comment_*.md.golden; do \
		n=$$(basename $$f .md.golden); \
		.bench/render/render $$f .bench/render/$$n.html && \
		$(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --screenshot=$(SHOTS)/$$n.png --window-size=1000,1400 .bench/render/$$n.html; \
	done
	.bench/render/render -open gate/action/testdata/comment_duet_regression.md.golden .bench/render/open.html
	$(CHROMIUM) --headless --no-sandbox --disable-gpu --hide-scrollbars --screenshot=.bench/render/comment_duet_regression_open.png --window-size=1000,4000 .bench/render/open.html

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Short fuzzing of every decoder.
fuzz:
	$(GO) test -run=^$$ -fuzz=^FuzzParse$$ -fuzztime=30s ./gate/scenario
	$(GO) test -run=^$$ -fuzz=^FuzzFaults$$ -fuzztime=30s ./gate/scenario
	$(GO) test -run=^$$ -fuzz=^FuzzCompileTemplate$$ -fuzztime=30s ./gate/scenario
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeResult$$ -fuzztime=30s ./gate/result
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeHistogram$$ -fuzztime=30s ./gate/result
	$(GO) test -run=^$$ -fuzz=^FuzzParseSelector$$ -fuzztime=30s ./gate/scenario
	$(GO) test -run=^$$ -fuzz=^FuzzDecode$$ -fuzztime=30s ./gate/counted
	$(GO) test -run=^$$ -fuzz=^FuzzParseDelay$$ -fuzztime=30s ./gate/stub
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeConfig$$ -fuzztime=30s ./gate/stub
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeVerdict$$ -fuzztime=30s ./gate/report
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeGateVerdict$$ -fuzztime=30s ./gate/report
	$(GO) test -run=^$$ -fuzz=^FuzzParseStat$$ -fuzztime=30s ./gate/procstat
	$(GO) test -run=^$$ -fuzz=^FuzzParseStatm$$ -fuzztime=30s ./gate/procstat
	$(GO) test -run=^$$ -fuzz=^FuzzParseSteal$$ -fuzztime=30s ./gate/procstat
	$(GO) test -run=^$$ -fuzz=^FuzzParseCPUTimes$$ -fuzztime=30s ./gate/procstat
	$(GO) test -run=^$$ -fuzz=^FuzzParseCPUModel$$ -fuzztime=30s ./gate/procstat
	$(GO) test -run=^$$ -fuzz=^FuzzCollector$$ -fuzztime=30s ./gate/soak
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeSweep$$ -fuzztime=30s ./gate/sweep
	$(GO) test -run=^$$ -fuzz=^FuzzParseEvent$$ -fuzztime=30s ./gate/action
	$(GO) test -run=^$$ -fuzz=^FuzzReadManifest$$ -fuzztime=30s ./gate/action
	$(GO) test -run=^$$ -fuzz=^FuzzDecodeNoise$$ -fuzztime=30s ./gate/verdict
	$(GO) test -run=^$$ -fuzz=^FuzzParseRxTimestamp$$ -fuzztime=30s ./gate/load

demo: build
	bash examples/demo/run.sh

clean:
	rm -rf bin loadgate-out .bench
