package history_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// t0 is the first entry's date; entry i is i days later.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sha is a 40-digit commit for entry i.
func sha(i int) string { return fmt.Sprintf("%08x%032x", uint32(i)*2654435761, i) }

// res is a result of commit whose workload "api" (phase "steady") took
// about latMS: 200 successes spread over ±10%.
func res(t testing.TB, commit string, latMS float64) *result.Result {
	t.Helper()
	h := result.NewHistogram()
	for i := 0; i < 200; i++ {
		_ = h.RecordValue(int64(latMS * 1000 * (0.9 + 0.2*float64(i)/199)))
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	s := result.Summarize(h)
	return &result.Result{
		Schema: result.Schema, Commit: commit, Usable: true, Offered: 200, Recorded: 200,
		Scenario: result.Scenario{Name: "checkout", Hash: "sha256:" + fmt.Sprintf("%064x", 7), Scale: 1},
		Machine:  result.Machine{Host: "runner-" + commit[len(commit)-2:], CPUs: 4, OS: "linux", Arch: "amd64"},
		Phases: []result.Phase{{Name: "steady", Pattern: "constant", Judged: true, DurationS: 10,
			Workloads: []result.Workload{{Name: "api", Offered: 200, Succeeded: 200, Failures: map[string]int64{},
				LatencyMS: s, ServiceMS: s, Histogram: enc, ServiceH: enc, Completed: 200}}}},
		NotMeasured: []string{},
	}
}

// apiP95 is the series every helper entry measures.
var apiP95 = history.Key{Phase: "steady", Workload: "api", Metric: "p95"}

// step is a link of ratio with a log-symmetric interval of ±hw (ratio·(1±hw)
// in log terms: [ratio/(1+hw), ratio·(1+hw)]).
func step(ratio, hw float64) history.Step {
	return history.Step{Phase: "steady", Workload: "api", Metric: "p95", Ratio: ratio,
		CILow: ratio / (1 + hw), CIHigh: ratio * (1 + hw), Confidence: 0.95, Interval: verdict.IntervalRounds,
		Rounds: 6, BaseN: 1200, HeadN: 1200, Value: verdict.Pass}
}

// chain is a history whose entry i+1 links to entry i by ratios[i] (±hw);
// entry i's absolute latency follows the product.
func chain(t testing.TB, ratios []float64, hw float64) history.Chain {
	t.Helper()
	lat := 20.0
	es := []history.Entry{{Schema: history.Schema, Commit: sha(0), Ref: "main", Date: t0, Result: res(t, sha(0), lat)}}
	for i, r := range ratios {
		lat *= r
		e := history.Entry{Schema: history.Schema, Commit: sha(i + 1), Ref: "main", Date: t0.AddDate(0, 0, i+1),
			Result: res(t, sha(i+1), lat), Base: sha(i), Steps: []history.Step{step(r, hw)}}
		es = append(es, e)
	}
	return history.NewChain(es)
}
