package verdict_test

import (
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// errorRounds builds paired rounds of "api" (n successes a round, latency
// equal on both sides) whose failures are failB[i] and failH[i].
func errorRounds(t *testing.T, n int, failB, failH []int64) (base, head []*result.Result) {
	t.Helper()
	for i := range failB {
		base = append(base, mkRound(t, hashA, nil, []wlData{{name: "api", lat: spread(n, 20000, 1), failed: failB[i]}}, nil))
		head = append(head, mkRound(t, hashA, nil, []wlData{{name: "api", lat: spread(n, 20000, 1), failed: failH[i]}}, nil))
	}
	return base, head
}

// Issue 45: every request of every round was pooled into one Newcombe
// interval, so one round's burst of 503s made a tight "regression"
// (0 vs 150 of 6 000 pooled: CI ≈ +2.1…+2.9 points). The rounds are the
// unit that repeats: one burst in six rounds is within their spread.
func TestOneRoundBurstIsNotARegression(t *testing.T) {
	base, head := errorRounds(t, 1000, []int64{0, 0, 0, 0, 0, 0}, []int64{0, 0, 0, 150, 0, 0})
	// Pooled, the same counts were a regression at any level a gate uses.
	if _, lo, _ := verdict.Newcombe(0, 6000, 150, 6150, verdict.NormQuantile(1-0.0001/2)); lo <= 0 {
		t.Fatalf("pooled low end %v: the burst should look significant when pooled", lo)
	}
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := comparison(t, v, verdict.MetricErrorRate)
	if c.Value == verdict.Regression || c.Reason != verdict.ReasonNoMoreErrors {
		t.Errorf("a burst in one of 6 rounds: %s (%s), CI %v…%v; want pass, no significant increase", c.Value, c.Reason, c.CILow, c.CIHigh)
	}
	if c.Interval != verdict.IntervalRounds || len(c.RoundDiffs) != 6 || c.RoundDiffs[3] <= 0 {
		t.Errorf("interval %q, round diffs %v: want the rounds' t interval over 6 differences", c.Interval, c.RoundDiffs)
	}
	if c.ErrHead.Failed != 150 || c.HeadN != 6150 || c.BaseN != 6000 {
		t.Errorf("sample counts: head %d of %d, base n %d", c.ErrHead.Failed, c.HeadN, c.BaseN)
	}
}

// An increase in every round is what a regression looks like, and is still called.
func TestConsistentErrorIncreaseIsARegression(t *testing.T) {
	base, head := errorRounds(t, 1000, []int64{2, 1, 3, 2, 1, 2}, []int64{30, 26, 33, 29, 31, 28})
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := comparison(t, v, verdict.MetricErrorRate)
	if c.Value != verdict.Regression || c.Reason != verdict.ReasonMoreErrors {
		t.Errorf("≈ +2.8 points in every round: %s (%s), CI %v…%v; want regression", c.Value, c.Reason, c.CILow, c.CIHigh)
	}
	if !(c.CILow > 0.02 && c.CIHigh < 0.035 && c.CILow <= c.Diff && c.Diff <= c.CIHigh) {
		t.Errorf("CI %v…%v around %v: want ≈ +2.8 points", c.CILow, c.CIHigh, c.Diff)
	}
	// The mirror image is an improvement.
	v, err = verdict.Compare(head, base, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := comparison(t, v, verdict.MetricErrorRate); c.Value != verdict.Improvement {
		t.Errorf("fewer errors in every round: %s (%s)", c.Value, c.Reason)
	}
}

// Few failures make the per-round differences discrete: 1 of 1 000 in every
// head round has s = 0, and the pooled counts' score interval is the floor.
func TestFewErrorsInEveryRoundKeepTheScoreFloor(t *testing.T) {
	base, head := errorRounds(t, 1000, []int64{0, 0, 0, 0, 0, 0}, []int64{1, 1, 1, 1, 1, 1})
	v, err := verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := comparison(t, v, verdict.MetricErrorRate)
	d, lo, hi := verdict.Newcombe(0, 6000, 6, 6006, verdict.NormQuantile(0.975))
	if c.Interval != verdict.IntervalScore || c.CILow > c.Diff-(d-lo)+1e-12 || c.CIHigh < c.Diff+(hi-d)-1e-12 {
		t.Errorf("interval %q %v…%v: want at least the score interval's widths (%v…%v)", c.Interval, c.CILow, c.CIHigh, lo, hi)
	}
	// Zero on both sides: a pass with no interval.
	base, head = errorRounds(t, 1000, make([]int64, 6), make([]int64, 6))
	v, err = verdict.Compare(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := comparison(t, v, verdict.MetricErrorRate); c.Value != verdict.Pass || c.Reason != verdict.ReasonNoFailure || c.Interval != "" || c.BaseN != 6000 {
		t.Errorf("0 vs 0: %s (%s) interval %q n %d", c.Value, c.Reason, c.Interval, c.BaseN)
	}
}
