package history_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/verdict"
)

// noisy is a 20-entry history with a step of ratio at entry at (at < 0:
// none): links measure the true ratio with 1% noise (±3% intervals),
// absolute values carry runnerSD log noise about the true level.
func noisy(t *testing.T, seed uint64, at int, ratio, runnerSD float64) history.Chain {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	measured := make([]float64, 19)
	for i := range measured {
		measured[i] = math.Exp(rng.NormFloat64() * 0.01)
		if i+1 == at {
			measured[i] *= ratio
		}
	}
	c := chain(t, measured, 0.03)
	for i := range c.Entries {
		lat := 20.0
		if at >= 0 && i >= at {
			lat *= ratio
		}
		c.Entries[i].Result = res(t, sha(i), lat*math.Exp(rng.NormFloat64()*runnerSD))
	}
	return c
}

// A single +30% step is located at its commit, and the chain since the
// first entry is a regression. The runners here differ by 5% (one runner
// kind): the detector's power against 10% is TestDetectSimulation's.
func TestAnalyzeStep(t *testing.T) {
	a, err := history.Analyze(noisy(t, 3, 12, 1.30, 0.05), history.Options{Detect: history.DetectOptions{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Series) != 1 || a.Series[0].Key != apiP95 {
		t.Fatalf("series %+v", a.Series)
	}
	s := a.Series[0]
	if len(s.ChangePoints) != 1 || s.ChangePoints[0].Index != 12 || s.Points[12].ChangePoint == nil || s.Points[12].Commit != sha(12) {
		t.Errorf("change points %+v, want one at entry 12", s.ChangePoints)
	}
	if s.Total.Value != verdict.Regression || s.Total.Links != 19 {
		t.Errorf("total %+v, want a regression over 19 links", s.Total)
	}
	if s.Points[12].Step == nil || s.Points[0].Step != nil {
		t.Errorf("steps: entry 0 %v, entry 12 %v", s.Points[0].Step, s.Points[12].Step)
	}
}

// An A/A history: no change point, the cumulative change a pass.
func TestAnalyzeAA(t *testing.T) {
	a, err := history.Analyze(noisy(t, 4, -1, 1, machineSD), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := a.Series[0]
	if len(s.ChangePoints) != 0 || s.Total.Value != verdict.Pass {
		t.Errorf("A/A: change points %+v, total %+v", s.ChangePoints, s.Total)
	}
}

// Since an entry: the cumulative change starts there; before it, none.
func TestAnalyzeSince(t *testing.T) {
	c := chain(t, []float64{1.05, 1.05, 1.05, 1.05, 1.05}, 0.03)
	a, err := history.Analyze(c, history.Options{Since: sha(3)[:8]})
	if err != nil {
		t.Fatal(err)
	}
	s := a.Series[0]
	if a.Since != 3 || s.Total.Links != 2 || s.Total.Value != verdict.Pass || s.Points[1].Cumulative.Known {
		t.Errorf("since entry 3: %+v; entry 1 %+v", s.Total, s.Points[1].Cumulative)
	}
	if _, err := history.Analyze(c, history.Options{Since: "deadbeef"}); err == nil {
		t.Error("since an unknown commit: no error")
	}
}

// The history's call: a step beyond the tolerance located after Since,
// or a cumulative regression, makes a regression; A/A, a pass.
func TestAnalysisValue(t *testing.T) {
	for _, c := range []struct {
		name  string
		c     history.Chain
		since string
		want  verdict.Value
	}{
		{"A/A", noisy(t, 4, -1, 1, machineSD), "", verdict.Pass},
		{"+30% step", noisy(t, 3, 12, 1.30, 0.05), "", verdict.Regression},
		{"+30% step before since", noisy(t, 3, 12, 1.30, 0.05), sha(14), verdict.Pass},
		{"five +5% steps", chain(t, []float64{1, 1.05, 1.05, 1, 1.05, 1.05, 1.05}, 0.01), "", verdict.Regression},
		{"empty", history.Chain{}, "", verdict.Pass},
	} {
		a, err := history.Analyze(c.c, history.Options{Since: c.since, Detect: history.DetectOptions{Seed: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Value(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
