package verdict_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// TestRegression_HalfFailingRunPasses: a server killed 3 s into a 6 s run
// left 306 of 600 requests failed and the verdict was PASS, because the
// workload had no error_rate threshold. The scenario now gives every
// workload the default error_rate of 1% (scenario.DefaultErrorRate), which
// result.json carries as an ordinary threshold; this is how it is judged.
func TestRegression_HalfFailingRunPasses(t *testing.T) {
	const dflt = 0.01 // scenario.DefaultErrorRate, as scenarioInfo copies it
	tests := []struct {
		name  string
		thr   map[string]result.Thr
		w     result.Workload
		want  verdict.Value
		exit  int
		check verdict.Value // the error_rate check's value ("" when there is none)
	}{
		// The run, with the default threshold: fails on error_rate.
		{"killed mid-run, default 1%", map[string]result.Thr{"read": {ErrorRate: rate(dflt)}},
			wl("read", 294, 306, 0, 20), verdict.Fail, 1, verdict.Fail},
		// A default beside a latency threshold that passes: still fails.
		{"killed mid-run, p95 passes", map[string]result.Thr{"read": {P95MS: 300, ErrorRate: rate(dflt)}},
			wl("read", 294, 306, 0, 20), verdict.Fail, 1, verdict.Fail},
		// Under the default: passes.
		{"0.5% failed, default 1%", map[string]result.Thr{"read": {ErrorRate: rate(dflt)}},
			wl("read", 995, 5, 0, 20), verdict.Pass, 0, verdict.Pass},
		// Exactly the default: passes (the limit is inclusive).
		{"1% failed, default 1%", map[string]result.Thr{"read": {ErrorRate: rate(dflt)}},
			wl("read", 990, 10, 0, 20), verdict.Pass, 0, verdict.Pass},
		// Server never up: nothing succeeded, not measured, and the check fails.
		{"all failed", map[string]result.Thr{"read": {ErrorRate: rate(dflt)}},
			wl("read", 0, 600, 0, 0), verdict.NotMeasured, 1, verdict.Fail},
		// error_rate: 100% in the scenario: any error rate passes, the check is shown.
		{"error_rate 100%", map[string]result.Thr{"read": {ErrorRate: rate(1)}},
			wl("read", 294, 306, 0, 20), verdict.Pass, 0, verdict.Pass},
		// error_rate: none in the scenario: no threshold reaches the result, as before.
		{"error_rate none", nil,
			wl("read", 294, 306, 0, 20), verdict.Pass, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := verdict.Thresholds(run(tt.thr, phase("sustain", true, false, tt.w)))
			if v.Value != tt.want || v.ExitCode() != tt.exit {
				t.Errorf("verdict %s (exit %d), want %s (exit %d): %+v", v.Value, v.ExitCode(), tt.want, tt.exit, v)
			}
			var got verdict.Value
			for _, wv := range v.Workloads {
				for _, c := range wv.Checks {
					if c.Metric == verdict.MetricErrorRate {
						got = c.Value
					}
				}
			}
			if got != tt.check {
				t.Errorf("error_rate check = %q, want %q", got, tt.check)
			}
		})
	}
}

// WebSocket sessions are judged on their first message and handshake
// times too (first_message_p95, connect_p99), not only on the session's end.
func TestSessionThresholds(t *testing.T) {
	fm := &result.Summary{Count: 100, P50: 200, P90: 700, P95: 1200, P99: 1500, P999: 1600, Max: 1600}
	cn := &result.Summary{Count: 100, P50: 5, P90: 8, P95: 9, P99: 12, P999: 15, Max: 15}
	tests := []struct {
		name   string
		thr    result.Thr
		fm, cn *result.Summary
		want   verdict.Value
		metric string // the check that decides
	}{
		// first message p95 1.2 s over a 1 s limit: fails.
		{"first message too slow", result.Thr{FirstMessage: &result.PctThr{P95MS: 1000}}, fm, cn, verdict.Fail, "first_message_p95"},
		// within the limit: passes.
		{"first message in time", result.Thr{FirstMessage: &result.PctThr{P95MS: 1500}}, fm, cn, verdict.Pass, "first_message_p95"},
		// connect p99 12 ms over 10 ms: fails.
		{"handshake too slow", result.Thr{Connect: &result.PctThr{P99MS: 10}}, fm, cn, verdict.Fail, "connect_p99"},
		// no session got a message: the limit cannot be judged, not measured.
		{"no first message", result.Thr{FirstMessage: &result.PctThr{P95MS: 1000}}, nil, cn, verdict.NotMeasured, "first_message_p95"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := wl("chat", 100, 0, 0, 20)
			w.FirstMessageMS, w.ConnectMS = tt.fm, tt.cn
			v := verdict.Thresholds(run(map[string]result.Thr{"chat": tt.thr}, phase("sustain", true, false, w)))
			if v.Value != tt.want {
				t.Errorf("verdict %s, want %s: %+v", v.Value, tt.want, v.Workloads)
			}
			found := false
			for _, wv := range v.Workloads {
				for _, c := range wv.Checks {
					found = found || (c.Metric == tt.metric && c.Value == tt.want)
				}
			}
			if !found {
				t.Errorf("no %s check valued %s in %+v", tt.metric, tt.want, v.Workloads)
			}
		})
	}
}
