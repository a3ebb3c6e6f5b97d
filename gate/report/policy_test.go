package report_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// ExamplePolicyText words one change of each kind, as a gate's notes say
// them.
func ExamplePolicyText() {
	none := verdict.PolicyValue{None: true}
	counter := verdict.PolicyValue{Count: &verdict.PolicyCounter{Metric: "http_requests_total", Service: "api", Port: 9090, Path: "/metrics"}}
	stop := verdict.PolicyValue{Faults: []verdict.PolicyFault{{Action: "stop", Service: "db", At: 5 * time.Second, For: 3 * time.Second}}}
	recovery := verdict.PolicyValue{Recovery: &verdict.PolicyTargets{Within: 10 * time.Second, ErrorRate: 0.01, P95: ms(500)}}
	for _, c := range []verdict.PolicyChange{
		{Kind: verdict.PolicyWorkloadAdded, Workload: "search"},
		{Kind: verdict.PolicyWorkloadRemoved, Workload: "ingest"},
		{Kind: verdict.PolicyLatency, Workload: "api_read", Field: "p95", Base: verdict.PolicyValue{Duration: ms(300)}, Head: verdict.PolicyValue{Duration: ms(2000)}},
		{Kind: verdict.PolicySession, Workload: "chat", Field: "connect_p99", Base: verdict.PolicyValue{Duration: ms(50)}, Head: none},
		{Kind: verdict.PolicyErrorRate, Workload: "api_read", Base: verdict.PolicyValue{Fraction: 0.001}, Head: verdict.PolicyValue{Fraction: 0.05}},
		{Kind: verdict.PolicyErrorRate, Workload: "ingest", Base: verdict.PolicyValue{Fraction: 0}, Head: none},
		{Kind: verdict.PolicyCount, Workload: "chat", Base: counter, Head: none},
		{Kind: verdict.PolicyCount, Base: none, Head: counter},
		{Kind: verdict.PolicyInject, Phase: "outage", Base: stop, Head: none},
		{Kind: verdict.PolicyRecovery, Phase: "outage", Base: none, Head: recovery},
		{Kind: verdict.PolicyRecoveryTarget, Phase: "outage", Field: "within", Base: verdict.PolicyValue{Duration: 10 * time.Second}, Head: verdict.PolicyValue{Duration: time.Minute}},
		{Kind: verdict.PolicyRecoveryTarget, Phase: "outage", Field: "error_rate", Base: verdict.PolicyValue{Fraction: 0.01}, Head: none},
		{Kind: verdict.PolicyRecoveryTarget, Phase: "outage", Field: "p95", Base: verdict.PolicyValue{Duration: ms(500)}, Head: verdict.PolicyValue{Duration: ms(5000)}},
		{Kind: verdict.PolicyCeiling, Field: "rate", Base: verdict.PolicyValue{ReqPerS: 10000}, Head: verdict.PolicyValue{ReqPerS: 1e6}},
		{Kind: verdict.PolicyCeiling, Field: "duration", Base: verdict.PolicyValue{Duration: time.Hour}, Head: verdict.PolicyValue{Duration: 2 * time.Hour}},
		{Kind: verdict.PolicyCeiling, Field: "in_flight", Base: verdict.PolicyValue{N: 10000}, Head: verdict.PolicyValue{N: 20000}},
		{Kind: verdict.PolicyCeiling, Field: "timeout", Base: verdict.PolicyValue{Duration: 30 * time.Second}, Head: verdict.PolicyValue{Duration: time.Minute}},
		{Kind: verdict.PolicyCeiling, Field: "drain", Base: verdict.PolicyValue{Duration: 5 * time.Second}, Head: verdict.PolicyValue{Duration: ms(1500)}},
		{Kind: verdict.PolicyCeiling, Field: "max_body", Base: verdict.PolicyValue{Bytes: 1 << 20}, Head: verdict.PolicyValue{Bytes: 64 << 20}},
		{Kind: verdict.PolicyLoad, Base: verdict.PolicyValue{Hash: "sha256:0123456789abcdef0123"}, Head: verdict.PolicyValue{Hash: "sha256:fedcba9876543210fedc"}},
	} {
		fmt.Println(report.PolicyText(c))
	}
	// Output:
	// head adds workload search
	// head removes workload ingest
	// head changes p95 threshold of api_read 300 ms → 2 000 ms
	// head changes connect_p99 threshold of chat 50.0 ms → none
	// head changes error_rate threshold of api_read 0.1% → 5%
	// head changes error_rate threshold of ingest 0% → none
	// head changes count of chat http_requests_total on api:9090/metrics → none
	// head changes count (every workload) none → http_requests_total on api:9090/metrics
	// head changes inject of phase outage [stop db at 5s for 3s] → none
	// head changes recovery of phase outage none → {within 10s, error_rate 1%, p95 500 ms}
	// head changes recovery target of phase outage within 10s → 1m0s
	// head changes recovery target of phase outage error_rate 1% → none
	// head changes p95 recovery target of phase outage 500 ms → 5 000 ms
	// head changes ceilings.rate 10 000.0 → 1 000 000.0 req/s
	// head changes ceilings.duration 1h0m0s → 2h0m0s
	// head changes ceilings.in_flight 10 000 → 20 000
	// head changes ceilings.timeout 30 000 ms → 60 000 ms
	// head changes ceilings.drain 5 000 ms → 1 500 ms
	// head changes ceilings.max_body 1MiB → 64MiB
	// head changes the load (scenario hash sha256:0123456789ab → sha256:fedcba987654)
}

// The notes that carry a policy change or a workflow change say it in
// PolicyText's and WorkflowChangeText's words; a note written before they
// carried the value keeps its Detail's words.
func TestPolicyAndWorkflowNotes(t *testing.T) {
	p95 := verdict.PolicyChange{Kind: verdict.PolicyLatency, Workload: "api_read", Field: "p95",
		Base: verdict.PolicyValue{Duration: ms(300)}, Head: verdict.PolicyValue{Duration: ms(2000)}}
	for _, c := range []struct {
		n    verdict.Note
		want string
	}{
		{verdict.Note{Code: verdict.NotePolicyNotApplied, Policy: &p95},
			"head changes p95 threshold of api_read 300 ms → 2\u2009000 ms: not applied (the scenario is base's; --scenario-from head applies head's, unsafe for a required check)"},
		{verdict.Note{Code: verdict.NotePolicyApplied, Policy: &p95},
			"head changes p95 threshold of api_read 300 ms → 2\u2009000 ms: applied (--scenario-from head)"},
		{verdict.Note{Code: verdict.NotePolicyApplied, Detail: "head adds workload x"}, "head adds workload x: applied (--scenario-from head)"},
		{verdict.Note{Code: verdict.NoteWorkflowChange, Path: "action.yml", How: verdict.WorkflowAdds},
			"WARNING: head adds action.yml: the inputs of this run come from the pull request's own workflow and may loosen it"},
		{verdict.Note{Code: verdict.NoteWorkflowChange, Path: ".github/workflows/old.yml", How: verdict.WorkflowRemoves},
			"WARNING: head removes .github/workflows/old.yml: the inputs of this run come from the pull request's own workflow and may loosen it"},
		{verdict.Note{Code: verdict.NoteWorkflowChange, Path: ".github/workflows/gate.yml", How: verdict.WorkflowChanges},
			"WARNING: head changes .github/workflows/gate.yml: the inputs of this run come from the pull request's own workflow and may loosen it"},
		{verdict.Note{Code: verdict.NoteWorkflowChange, Path: ".github/workflows/big.yml", How: verdict.WorkflowUnreadable, Detail: ".github/workflows/big.yml is larger than 1048576 bytes"},
			"WARNING: head may change .github/workflows/big.yml (loadgate cannot compare it: .github/workflows/big.yml is larger than 1048576 bytes): the inputs of this run come from the pull request's own workflow and may loosen it"},
		{verdict.Note{Code: verdict.NoteWorkflowChange, Path: "action.yml", Detail: "changes"},
			"WARNING: head changes action.yml: the inputs of this run come from the pull request's own workflow and may loosen it"},
	} {
		if got := report.NoteText(c.n); got != c.want {
			t.Errorf("NoteText(%+v)\n got %q\nwant %q", c.n, got, c.want)
		}
	}
}
