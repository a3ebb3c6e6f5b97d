package verdict_test

import (
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// fastRounds: R paired rounds of "health", base p95 ≈ baseP95US µs, head's
// × ratio × (1 + jitter_i).
func fastRounds(t *testing.T, baseP95US, ratio float64, jitter []float64) (base, head []*result.Result) {
	med := baseP95US / 2.276 // p95 of spread's lognormal (log-sd 0.5) is med·e^(0.5·1.645)
	for _, j := range jitter {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "health", lat: spread(5000, med, 1)}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "health", lat: spread(5000, med, ratio*(1+j))}}, nil))
	}
	return base, head
}

// Issue 45: a reverse proxy's 0.3 ms health endpoint at +9% (27 µs) stayed
// inconclusive at a 10% tolerance; with an absolute floor the change is
// within ±max(10%·0.3 ms, floor) and passes.
func TestFastEndpointWithinTheFloorPasses(t *testing.T) {
	jitter := []float64{0, 0.03, -0.03, 0.02, -0.02, 0.01}
	base, head := fastRounds(t, 300, 1.09, jitter)
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := comparison(t, v, "p95"); c.Value != verdict.Inconclusive {
		t.Fatalf("without a floor: %s (%s) CI %v…%v; the test wants the interval to straddle +10%%", c.Value, c.Reason, c.CILow, c.CIHigh)
	}
	v, err = verdict.Compare(base, head, verdict.CompareOptions{ToleranceFloor: 50 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	c := comparison(t, v, "p95")
	if c.Value != verdict.Pass || c.Reason != verdict.ReasonWithin {
		t.Errorf("0.3 ms +9%% with a 50 µs floor: %s (%s) CI %v…%v, tolerance %v; want pass", c.Value, c.Reason, c.CILow, c.CIHigh, c.Tolerance)
	}
	if c.Base < 0.28 || c.Base > 0.32 || c.Tolerance < 0.15 || c.Tolerance > 0.18 || v.ToleranceFloorMs != 0.05 {
		t.Errorf("base %v ms, comparison tolerance %v (want 0.05/base ≈ 0.167), verdict floor %v ms", c.Base, c.Tolerance, v.ToleranceFloorMs)
	}
}

// An interval that leaves the floor's band is still called, either way; a
// floor below τ·base changes nothing.
func TestFloorStillCallsWhatLeavesTheBand(t *testing.T) {
	jitter := []float64{0, 0.02, -0.02, 0.01, -0.01, 0}
	opt := verdict.CompareOptions{ToleranceFloor: 50 * time.Microsecond}
	for _, tt := range []struct {
		name         string
		p95US, ratio float64
		want         verdict.Value
		floorApplies bool
	}{
		{"0.3 ms +50%", 300, 1.5, verdict.Regression, true},
		{"0.3 ms −40%", 300, 0.6, verdict.Improvement, true},
		{"20 ms +15%", 20000, 1.15, verdict.Regression, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, head := fastRounds(t, tt.p95US, tt.ratio, jitter)
			v, err := verdict.Compare(base, head, opt)
			if err != nil {
				t.Fatal(err)
			}
			c := comparison(t, v, "p95")
			if c.Value != tt.want || (c.Tolerance > 0) != tt.floorApplies {
				t.Errorf("%s (%s) CI %v…%v tolerance %v; want %s", c.Value, c.Reason, c.CILow, c.CIHigh, c.Tolerance, tt.want)
			}
		})
	}
	if _, err := verdict.Compare(nil, nil, verdict.CompareOptions{ToleranceFloor: -time.Millisecond}); err == nil {
		t.Error("a negative floor was accepted")
	}
}
