package verdict_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// withSession gives the sustain workload of r session numbers: connect and
// first-message histograms of its own, and cancelled sessions (successes
// without a latency sample), as a WebSocket workload's result has them.
func withSession(t *testing.T, r *result.Result, cancelled int64, first, connect []int64) *result.Result {
	t.Helper()
	w := &r.Phases[0].Workloads[0]
	enc := func(vals []int64) (string, *result.Summary) {
		h := result.NewHistogram()
		for _, v := range vals {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		s, err := result.EncodeHistogram(h)
		if err != nil {
			t.Fatal(err)
		}
		sum := result.Summarize(h)
		return s, &sum
	}
	w.FirstMessageH, w.FirstMessageMS = enc(first)
	w.ConnectH, w.ConnectMS = enc(connect)
	w.Succeeded += cancelled
	w.Offered += cancelled
	w.Completed += cancelled
	w.Cancelled = cancelled
	r.Offered += cancelled
	r.Recorded += cancelled
	return r
}

// Regression (issue 11, found in the demo's protocols gate): a
// first_message_p95 or connect_p95 comparison read the session's full
// latency histogram, so it showed the p95 of the whole session under the
// first message's name, with the latency's sample count; and a workload
// with cancelled sessions (latency count < successes) was refused as
// unusable.
func TestCompareSessionMetricsReadTheirOwnHistograms(t *testing.T) {
	thr := map[string]result.Thr{"chat": {P95MS: 100, FirstMessage: &result.PctThr{P95MS: 50}, Connect: &result.PctThr{P95MS: 50}}}
	const n, cancelled = 2000, 500
	var base, head []*result.Result
	for range 3 {
		// The session latency is the same on both sides; the first message
		// is 3x slower on head, the connect time unchanged.
		base = append(base, withSession(t, mkRound(t, hashA, thr, []wlData{{name: "chat", lat: spread(n, 40000, 1)}}, nil),
			cancelled, spread(n+cancelled, 5000, 1), spread(n+cancelled, 1000, 1)))
		head = append(head, withSession(t, mkRound(t, hashA, thr, []wlData{{name: "chat", lat: spread(n, 40000, 1)}}, nil),
			cancelled, spread(n+cancelled, 5000, 3), spread(n+cancelled, 1000, 1)))
	}
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Value == verdict.Unusable {
		t.Fatalf("unusable: %+v", v.Notes)
	}
	lat, first, conn := comparison(t, v, "p95"), comparison(t, v, "first_message_p95"), comparison(t, v, "connect_p95")
	if lat.Value != verdict.Pass || lat.BaseN != 3*n {
		t.Errorf("p95: %s n=%d, want pass over the %d timed sessions", lat.Value, lat.BaseN, 3*n)
	}
	if first.Value != verdict.Regression || first.BaseN != 3*(n+cancelled) || first.Ratio < 2.5 {
		t.Errorf("first_message_p95: %s ratio %.2f n=%d, want a regression near 3x over %d sessions", first.Value, first.Ratio, first.BaseN, 3*(n+cancelled))
	}
	if first.Base > lat.Base/2 {
		t.Errorf("first_message_p95 base %.2f ms is the latency's (%.2f ms)", first.Base, lat.Base)
	}
	if conn.Value != verdict.Pass {
		t.Errorf("connect_p95: %s ratio %.2f, want pass", conn.Value, conn.Ratio)
	}
}
