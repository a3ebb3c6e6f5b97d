package rounds_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
)

// roundCount is one round's count of api_read over all phases: sent 100,
// counted as given (nil with why: not measured; reset: the counter went
// down).
func roundCount(counted *float64, reset bool, why string) *result.Counting {
	span := result.CountedSpan{Phase: result.TotalSpan, Sent: 100, Counted: counted, Reset: reset, NotMeasured: why}
	sustain := span
	sustain.Phase = "sustain"
	return &result.Counting{Counts: []result.Counted{{Workload: "api_read", Service: "api", Port: 9090, Path: "/metrics",
		Metric: `http_requests_total{route="GET /"}`, Phases: []result.CountedSpan{sustain}, Total: span}}, Stubs: []result.Stub{}}
}

func num(v float64) *float64 { return &v }

// Each round reads the side's counters (Stack.Count, as loadgate run
// does); the gate's report says, per side, sent vs counted summed over the
// rounds when every round measured it, and "not measured" with the round
// and the reason when one did not (here head's round 2 saw a reset) —
// never "equal to sent".
func TestGateCountsEachRoundAndSaysNotMeasuredPerSide(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds = 2
	f.stacks.count = func(side string, n int) *result.Counting {
		if side == "head" && n == 1 {
			return roundCount(nil, true, "the counter went down (the service restarted)")
		}
		return roundCount(num(float64(98+n)), false, "")
	}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(gr.Base.Results, gr.Head.Results...) {
		if r.Counting == nil {
			t.Fatalf("%s round %d: no counting in the result", r.Side, r.Round.Number)
		}
	}
	base := result.PoolCounting(gr.Base.Results).Counts[0].Total
	if base.Counted == nil || *base.Counted != 98+99 || base.Sent != 200 {
		t.Errorf("base: %+v, want sent 200, counted 197", base)
	}
	head := result.PoolCounting(gr.Head.Results).Counts[0].Total
	if head.Counted != nil || !head.Reset || !strings.HasPrefix(head.NotMeasured, "round 2:") {
		t.Errorf("head: %+v, want not measured, reset, in round 2", head)
	}
	var b bytes.Buffer
	if err := report.CompareText(&b, gr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	row := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "api_read") && strings.Contains(l, "197") {
			row = l
		}
	}
	if f := strings.Fields(row); len(f) != 8 || f[1] != "200" || f[2] != "197" || f[3] != "−3" || f[4] != "200" || f[5] != "reset" || f[6] != "not" {
		t.Errorf("the counted row %q, want api_read 200 197 −3 200 reset not measured\n%s", row, out)
	}
	if !strings.Contains(out, "head (api_read): not measured: round 2: the counter went down") {
		t.Errorf("the report does not say why head is not measured:\n%s", out)
	}
}

// A count whose service:port is refused (ErrUsage from Stack.Count) ends
// the gate as refused (exit 2), before any load.
func TestGateRefusedCountIsAUsageError(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.stacks.countErr = rounds.Usagef("count of workload api_read: target refused")
	_, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if rounds.KindOf(err) != rounds.ErrUsage {
		t.Fatalf("err %v, want ErrUsage", err)
	}
	if strings.Contains(f.ev.String(), "run ") {
		t.Errorf("a load ran: %s", f.ev)
	}
}

const scenarioWithFaults = `
name: demo-faults
phases:
  - name: sustain
    rate: 10
    duration: 10s
    inject:
      - {action: stop, service: db, at: 2s, for: 1s}
    recovery: {within: 5s, error_rate: 0%}
stack:
  compose: [compose.yaml]
  target: api:8080
workloads:
  - {name: api_read, http: {path: /}}
`

// The gate does not inject faults: a scenario with phase inject: is
// refused (ErrUsage: exit 2) before any stack comes up, saying to use
// loadgate run, never run without its faults.
func TestGateRefusesFaultScenarios(t *testing.T) {
	f := newFixture(t, scenarioWithFaults)
	_, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if rounds.KindOf(err) != rounds.ErrUsage || !errors.Is(err, rounds.ErrFaultsRefused) {
		t.Fatalf("err %v, want ErrUsage wrapping ErrFaultsRefused", err)
	}
	if !strings.Contains(err.Error(), "loadgate run") {
		t.Errorf("the refusal %q does not say to use loadgate run", err)
	}
	if strings.Contains(f.ev.String(), "up ") {
		t.Errorf("a stack came up: %s", f.ev)
	}
}
