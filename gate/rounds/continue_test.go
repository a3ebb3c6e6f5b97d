package rounds_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// slowerEveryRound makes head factor× slower than base, round i swinging
// by jitter[(i−1) mod len]: every attempt of it sees the same rounds.
func slowerEveryRound(t *testing.T, f *fixture, factor float64, jitter []float64) {
	f.runner.editSide = func(side string, _ int, r *result.Result) {
		clean(t, r)
		if side == "head" {
			scaleLatency(t, r, factor*(1+jitter[(r.Round.Number-1)%len(jitter)]))
		}
	}
}

var swing = []float64{0.22, -0.22, 0.18, -0.18}

// attempt runs one sequential gate of at most 4 rounds of its own, head
// factor× slower, continuing what dir holds ("": none); and its runs.
func attempt(t *testing.T, dir string, factor float64, jitter ...float64) (rounds.Outcome, string, int) {
	return attemptOf(t, dir, 4, factor, jitter...)
}

func attemptOf(t *testing.T, dir string, maxRounds int, factor float64, jitter ...float64) (rounds.Outcome, string, int) {
	t.Helper()
	f := newFixture(t, scenarioWithStack)
	f.cfg.MaxRounds, f.cfg.Continue = maxRounds, dir
	if jitter == nil {
		jitter = swing
	}
	slowerEveryRound(t, f, factor, jitter)
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return gr, log, f.runner.runs()
}

// Issue 45: a CI re-run of a red gate started afresh, so a regression could
// be re-run until one attempt's fresh data alone read inconclusive. A re-run
// of the same base, head, scenario and policy continues the earlier rounds
// as further looks of one sequential test.
func TestRerunContinuesTheEarlierRounds(t *testing.T) {
	// Fresh, one attempt's 4 rounds of this change decide nothing.
	fresh, _, _ := attempt(t, "", 1.65)
	if fresh.Verdict.Value != verdict.Inconclusive {
		t.Fatalf("one attempt alone: %s; the test wants 4 rounds to be inconclusive", fresh.Verdict.Value)
	}
	dir := t.TempDir()
	first, _, _ := attempt(t, dir, 1.65)
	if first.Verdict.Value != verdict.Inconclusive || len(first.Head.Results) != 4 {
		t.Fatalf("attempt 1: %s after %d rounds", first.Verdict.Value, len(first.Head.Results))
	}
	if _, err := os.Stat(filepath.Join(dir, rounds.AttemptFile)); err != nil {
		t.Fatalf("attempt 1 kept no record for a re-run: %v", err)
	}
	// The re-run: 4 earlier + its own 4 rounds are one test of 8, its
	// looks at 4 (replayed), 6 and 8 at the 8-round plan's levels.
	second, log, _ := attempt(t, dir, 1.65)
	d := second.Verdict.Sequential
	if second.Verdict.Value != verdict.Regression || d == nil || d.MaxRounds != 8 || d.Rounds <= 4 || len(second.Head.Results) != d.Rounds {
		t.Fatalf("re-run: %s, sequential %+v, %d rounds; want a regression in one test of at most 8\n%s", second.Verdict.Value, d, len(second.Head.Results), log)
	}
	if !strings.Contains(log, "after 4 earlier rounds (replayed)") {
		t.Errorf("the earlier look was not replayed:\n%s", log)
	}
	for i, r := range second.Head.Results {
		if r.Round.Number != i+1 {
			t.Errorf("head round %d is numbered %d", i+1, r.Round.Number)
		}
	}
	notes := strings.Join(report.NoteTexts(second.Notes), "\n")
	if !strings.Contains(notes, "re-run: this gate continued the 4 paired round(s) of 1 earlier attempt(s)") {
		t.Errorf("the report does not say it continued:\n%s", notes)
	}
	// The level of its last look is the 8-round plan's, spending all α.
	if d.Spent != 1-d.Nominal && d.Rounds == 8 {
		t.Errorf("spent %v at the last look", d.Spent)
	}
}

// An earlier attempt of another head (or load, or policy) is not continued:
// the gate says why and starts afresh.
func TestRerunOfAnotherPairStartsAfresh(t *testing.T) {
	dir := t.TempDir()
	attempt(t, dir, 1.65)
	b, err := os.ReadFile(filepath.Join(dir, rounds.AttemptFile))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(b), `"commit": "h1"`, `"commit": "h0"`, 1)
	if err := os.WriteFile(filepath.Join(dir, rounds.AttemptFile), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	gr, log, _ := attempt(t, dir, 1.65)
	if d := gr.Verdict.Sequential; d == nil || d.MaxRounds != 4 || strings.Contains(log, "replayed") {
		t.Errorf("continued another head's rounds: %+v\n%s", d, log)
	}
	if notes := strings.Join(report.NoteTexts(gr.Notes), "\n"); !strings.Contains(notes, "not continued (base b1 and head h0, this gate's are b1 and h1)") {
		t.Errorf("notes:\n%s", notes)
	}
}

// A re-run of a gate its earlier rounds already decide at the continued
// plan's levels runs no round: the replayed look is the verdict.
func TestRerunDecidedByTheEarlierRoundsRunsNone(t *testing.T) {
	dir := t.TempDir()
	first, _, _ := attemptOf(t, dir, 8, 2, 0.02, -0.02, 0.01, -0.01)
	if first.Verdict.Value != verdict.Regression {
		t.Fatalf("attempt 1: %s after %d rounds; want a 2× regression", first.Verdict.Value, len(first.Head.Results))
	}
	R := len(first.Head.Results)
	second, log, runs := attempt(t, dir, 2, 0.02, -0.02, 0.01, -0.01)
	if second.Verdict.Value != verdict.Regression || runs != 0 || len(second.Head.Results) != R {
		t.Fatalf("re-run: %s, %d runs, %d rounds; want the replayed regression and no new round\n%s", second.Verdict.Value, runs, len(second.Head.Results), log)
	}
	if notes := strings.Join(report.NoteTexts(second.Notes), "\n"); !strings.Contains(notes, fmt.Sprintf("its look after %d of them decides it: no new round ran", R)) {
		t.Errorf("notes:\n%s", notes)
	}
}
