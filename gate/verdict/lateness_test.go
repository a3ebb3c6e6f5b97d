package verdict_test

import (
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// lateBy is a lateness summary: p50 and p90 on time (20 µs), p95 and the
// upper quantiles as given (ms).
func lateBy(p95, p99 float64) result.Summary {
	return result.Summary{Count: 1000, P50: 0.02, P90: 0.02, P95: p95, P99: p99, P999: p99, Max: p99}
}

// A round behind its schedule is set aside only where its lateness could
// make the change it shows: a slower head by head's lateness, a faster one
// by base's, a change within the tolerance by either side's.
func TestCheckLateness(t *testing.T) {
	on := result.Summary{}
	for _, tc := range []struct {
		name             string
		baseMS, headMS   float64
		latB, latH       result.Summary
		q                float64
		behindB, behindH bool
		side             string
		explains         bool
	}{
		// Issue 45: a 12× slowdown, 2.2% of head's sends 1.75 ms late: p95
		// lateness 0.06 ms against a change of 110 ms (bar 27.5 ms). Called.
		{"12x slower, 2.2% 1.75 ms late", 10, 120, on, lateBy(0.06, 1.75), 0.95, false, true, "head", false},
		// The same lateness judged at p99: 1.75 ms is still far under a
		// quarter of the change.
		{"12x slower at p99", 10, 120, on, lateBy(0.06, 1.75), 0.99, false, true, "head", false},
		// A/A at 10 ms, head late at p95 by 0.08 ms but at p99 by 1.8 ms:
		// lateness is read at (1+q)/2 (p97.5, so p99 here), since the late
		// sends need not be the slow ones; 1.8 ms ≥ a quarter of the
		// tolerance's 1 ms. Set aside.
		{"A/A, late at p99 though not at p95", 10, 10.2, on, lateBy(0.08, 1.8), 0.95, false, true, "head", true},
		// A/A at 10 ms, head late by 0.1 ms up to p99: under the bar of
		// 0.25 ms at every quantile that could matter. Judged.
		{"A/A, lateness under the bar", 10, 10.2, on, lateBy(0.08, 0.1), 0.95, false, true, "head", false},
		// Review of issue 45's rule: 3% of head's sends 20 ms late, its p95
		// lateness ~0, a +30% change at p95. The late sends can carry the
		// p95 by themselves (their p99 lateness 20 ms ≥ 0.75 ms). Set aside.
		{"few sends very late, p95 lateness nil", 10, 13, on, lateBy(0, 20), 0.95, false, true, "head", true},
		// Head 2× slower and late by 4 ms at p95: 4 ≥ 2.5 ms (a quarter of
		// the 10 ms change). Set aside.
		{"2x slower, lateness a third of it", 10, 20, on, lateBy(4, 6), 0.95, false, true, "head", true},
		// Head slower, only base behind: base's lateness only makes the
		// slowdown look smaller. Judged.
		{"slower head, base behind", 10, 20, lateBy(30, 40), on, 0.95, true, false, "head", false},
		// Head faster, base late by 3 ms at p95: could fake the improvement.
		{"faster head, base late", 20, 10, lateBy(3, 5), on, 0.95, true, false, "base", true},
		// Within the tolerance, base late by 0.3 ms at 10 ms: enough to hide
		// a change of the tolerance's size (bar 0.25 ms). Set aside.
		{"within tolerance, base late enough to hide a change", 10, 10.3, lateBy(0.3, 2), on, 0.95, true, false, "base", true},
		// Within the tolerance, the larger of both sides' lateness is named
		// (at p97.5, so p99: 2 ms each, enough to hide a change). Set aside.
		{"within tolerance, both behind", 10, 10.1, lateBy(0.1, 2), lateBy(0.2, 3), 0.95, true, true, "head", true},
		// A side on schedule is never suspect, however late its summary.
		{"head on schedule", 10, 20, on, lateBy(9, 9), 0.95, false, false, "head", false},
		// No lateness explains nothing, not even no change.
		{"no lateness, no change", 10, 10, on, on, 0.95, false, true, "head", false},
		// Four of 125 sends 1.8 ms late (a 10 ms serial server at 25/s),
		// judged at p99 with no change: 3.2% late is past the top 1%, so the
		// p99 itself may be 1.8 ms (18%) higher; 1.8 ≥ 0.25 ms. Set aside.
		{"serial server at p99", 10, 10, on, lateBy(0.05, 1.8), 0.99, false, true, "head", true},
	} {
		ck := verdict.CheckLateness(tc.baseMS, tc.headMS, verdict.DefaultTolerance, tc.latB, tc.latH, 0, 0, tc.q, tc.behindB, tc.behindH)
		if ck.Explains != tc.explains || ck.Side != tc.side {
			t.Errorf("%s: explains %v (side %s, lateness %v ms, bar %v ms), want %v (side %s)",
				tc.name, ck.Explains, ck.Side, ck.LatenessMS, ck.BarMS, tc.explains, tc.side)
		}
	}
}

// withLateness marks r behind its schedule by late of its sends, with the
// lateness summary s.
func withLateness(r *result.Result, late float64, s result.Summary) {
	r.Late = int64(late * float64(r.Offered))
	r.LatenessMS = s
}

// Issue 45: on a busy machine a 12× slowdown came out inconclusive because
// 2.2% of head's requests went out 1.75 ms late. That lateness cannot make
// a 12× change: the regression is called, and a note says the round was
// behind but judged.
func TestRegression_LatenessThatCannotExplainIsNoted(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 45))
	var base, head []*result.Result
	for range 5 {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 1500, 8000, 0.3, 1)}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 1500, 8000, 0.3, 12)}}, nil))
	}
	withLateness(head[1], 0.022, lateBy(0.06, 1.75))
	withLateness(head[3], 0.022, lateBy(0.06, 1.75))
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if head[1].GeneratorBehind() == nil {
		t.Fatal("the premise: 2.2% late is past the 1% limit")
	}
	if v.Value != verdict.Regression || len(v.Untrusted) != 0 {
		t.Fatalf("12× slower, head rounds 2 and 4 2.2%% late by 1.75 ms: %s, untrusted %+v; want a regression", v.Value, v.Untrusted)
	}
	var noted []int
	for _, n := range v.Notes {
		if n.Code == verdict.NoteLatenessNoted {
			if n.Behind == nil || n.Behind.Lateness == nil || n.Behind.Lateness.Explains || n.Side != "head" {
				t.Errorf("note %+v: want head's round, its generator and the check that does not explain", n)
				continue
			}
			noted = append(noted, n.Round)
		}
	}
	if len(noted) != 2 || noted[0] != 2 || noted[1] != 4 {
		t.Errorf("noted rounds %v, want [2 4]", noted)
	}

	// The same rounds with head late by 30 ms at p95 on a 1.2× change:
	// lateness could make it, so the round is set aside as before.
	base, head = base[:0], head[:0]
	for range 5 {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 1500, 8000, 0.1, 1)}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: lognormal(rng, 1500, 8000, 0.1, 1.5)}}, nil))
	}
	withLateness(head[2], 0.3, lateBy(30, 40))
	if v, err = verdict.Compare(base, head, verdict.CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if v.Value != verdict.Inconclusive || len(v.Untrusted) != 1 || v.Untrusted[0].Round != 3 ||
		v.Untrusted[0].Lateness == nil || !v.Untrusted[0].Lateness.Explains {
		t.Errorf("1.5× slower, head round 3 late by 30 ms at p95: %s, untrusted %+v; want inconclusive, round 3 untrusted with its check", v.Value, v.Untrusted)
	}
}
