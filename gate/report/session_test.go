package report

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

func TestSessionTables(t *testing.T) {
	p := result.Phase{Name: "sustain", Workloads: []result.Workload{
		{Name: "api_read", Succeeded: 10, LatencyMS: result.Summary{Count: 10}},
		{Name: "chat_stream", Succeeded: 5, Cancelled: 1, MessagesReceived: 13,
			ConnectMS:      &result.Summary{Count: 5, P50: 1.25, P95: 2, P99: 3},
			FirstMessageMS: &result.Summary{Count: 5, P50: 10, P95: 20, P99: 30}},
	}}
	var tb txt
	textSessions(&tb, p)
	var mb md
	mdSessions(&mb, p)
	for _, out := range []string{tb.String(), mb.String()} {
		if strings.Contains(out, "api_read") {
			t.Errorf("an HTTP workload in the session table:\n%s", out)
		}
		for _, want := range []string{"chat_stream", "first message p50", "n=5", "13"} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in\n%s", want, out)
			}
		}
	}
	t.Logf("\n%s\n%s", tb.String(), mb.String())
	var empty txt
	textSessions(&empty, result.Phase{Workloads: p.Workloads[:1]})
	if empty.String() != "" {
		t.Errorf("no session workload, yet %q", empty.String())
	}
}
