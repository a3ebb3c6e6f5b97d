package report_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// verdict returns reason codes and numbers; report words them, and fills
// the Why of what it writes (verdict.json) with those words.
func TestReasonWords(t *testing.T) {
	for _, c := range []struct {
		wv   verdict.WorkloadVerdict
		want string
	}{
		{verdict.WorkloadVerdict{Phase: "sustain", Reason: verdict.ReasonAbsent}, "absent from phase sustain"},
		{verdict.WorkloadVerdict{Phase: "recover", Reason: verdict.ReasonNotOffered}, "no request offered in phase recover"},
		{verdict.WorkloadVerdict{Reason: verdict.ReasonNoSuccess, Offered: 2811, Failed: 2800, Abandoned: 11},
			"no successful request: 0 of 2\u2009811 offered succeeded (2\u2009800 failed, 11 abandoned)"},
		{verdict.WorkloadVerdict{Reason: verdict.ReasonNoThresholds}, "no thresholds"},
		{verdict.WorkloadVerdict{Why: "from an older verdict file"}, "from an older verdict file"},
		{verdict.WorkloadVerdict{}, ""},
	} {
		if got := report.WorkloadWhy(c.wv); got != c.want {
			t.Errorf("WorkloadWhy(%+v) = %q, want %q", c.wv, got, c.want)
		}
	}
	for _, c := range []struct {
		c    verdict.Check
		want string
	}{
		{verdict.Check{Phase: "sustain", Reason: verdict.ReasonAbsent}, "absent from phase sustain"},
		{verdict.Check{Reason: verdict.ReasonNoSuccess}, "no successful request"},
		{verdict.Check{Reason: verdict.ReasonNoMessage}, "no session received a message"},
		{verdict.Check{Reason: verdict.ReasonNoHandshake}, "no session completed its handshake"},
		{verdict.Check{Reason: verdict.ReasonNoCompletion}, "no request completed"},
		{verdict.Check{Reason: verdict.ReasonAbandonedExcluded, Abandoned: 1200}, "1\u2009200 abandoned excluded"},
		{verdict.Check{Why: "kept"}, "kept"},
	} {
		if got := report.CheckWhy(c.c); got != c.want {
			t.Errorf("CheckWhy(%+v) = %q, want %q", c.c, got, c.want)
		}
	}

	v := verdict.Verdict{Workloads: []verdict.WorkloadVerdict{{Phase: "sustain", Workload: "w", Value: verdict.NotMeasured, Reason: verdict.ReasonAbsent,
		Checks: []verdict.Check{{Phase: "sustain", Metric: "p95", Value: verdict.NotMeasured, Reason: verdict.ReasonAbsent}}}}}
	e := report.Explain(v)
	if e.Workloads[0].Why != "absent from phase sustain" || e.Workloads[0].Checks[0].Why != "absent from phase sustain" {
		t.Errorf("Explain left %+v", e.Workloads[0])
	}
	if v.Workloads[0].Why != "" || v.Workloads[0].Checks[0].Why != "" {
		t.Errorf("Explain modified its argument: %+v", v.Workloads[0])
	}
	// An annotation says a check as the report does.
	c := verdict.Check{Metric: verdict.MetricErrorRate, Limit: 0.001, Observed: 0.02, Count: 900, Value: verdict.Fail, Reason: verdict.ReasonAbandonedExcluded, Abandoned: 3}
	if got, want := report.CheckText(c), "error_rate 2% > 0.1% (n=900), 3 abandoned excluded"; got != want {
		t.Errorf("CheckText = %q, want %q", got, want)
	}
}
