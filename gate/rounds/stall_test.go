package rounds_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// stallOn makes f's runner a quiet A/A gate (every side-round swings by
// e^N(0, 2%), seeded) in which side's first run of each round in at is
// slower by factor on every workload at once; later runs of those rounds
// (re-runs) are quiet. head scales head every run (1: none). It returns
// how many runs each round number had on side.
//
// Each run's noise is drawn from its own stream, seeded by side, round and
// run: a duet runs both sides at once, and one shared stream drawn in
// either order made the test pass or fail by the scheduler's choice
// (TestStallRoundIsReRunAndTheGateDecides/duet_fixed failed 1 run in 10).
func stallOn(t *testing.T, f *fixture, side string, factor, head float64, at ...int) func(round int) int {
	var mu sync.Mutex
	runs := map[string]map[int]int{"base": {}, "head": {}}
	f.runner.editSide = func(s string, _ int, r *result.Result) {
		mu.Lock()
		defer mu.Unlock()
		n := r.Round.Number
		runs[s][n]++
		clean(t, r)
		sideBit := uint64(0)
		if s == "head" {
			sideBit = 1
		}
		rng := rand.New(rand.NewPCG(34, uint64(n)<<8|uint64(runs[s][n])<<1|sideBit))
		scaleLatency(t, r, math.Exp(0.02*rng.NormFloat64()))
		if s == "head" && head != 1 {
			scaleLatency(t, r, head)
		}
		if s != side {
			return
		}
		for _, a := range at {
			if a == n && runs[s][n] == 1 {
				scaleLatency(t, r, factor)
			}
		}
	}
	return func(round int) int { mu.Lock(); defer mu.Unlock(); return runs[side][round] }
}

// notesOf are gr's notes of code c.
func notesOf(gr rounds.Outcome, c verdict.NoteCode) []verdict.Note {
	var ns []verdict.Note
	for _, n := range gr.Notes {
		if n.Code == c {
			ns = append(ns, n)
		}
	}
	return ns
}

// A round in which head's stack is 4.5× slower on every workload at once
// is flagged, kept aside in the results directory with the rule's
// numbers, run again in its place, and the gate then decides on quiet
// rounds; the re-run is in the log and in the report's notes. Without
// the re-run the same rounds would not have passed. Sequential ABBA and
// fixed duet rounds alike.
func TestStallRoundIsReRunAndTheGateDecides(t *testing.T) {
	for _, duet := range []bool{false, true} {
		t.Run(map[bool]string{false: "ABBA sequential", true: "duet fixed"}[duet], func(t *testing.T) {
			f := newFixture(t, scenarioWithStack)
			runsOf := stallOn(t, f, "head", 4.5, 1, 3)
			var gr rounds.Outcome
			var log string
			var err error
			if duet {
				f.cfg.Duet, f.cfg.Rounds = true, 6
				var b strings.Builder
				gr, err = rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Log: &b, Words: report.GateWords{}})
				log = b.String()
			} else {
				gr, log, err = seqRun(t, f, time.Second)
			}
			if err != nil {
				t.Fatal(err)
			}
			ns := notesOf(gr, verdict.NoteStallRerun)
			if len(ns) != 1 || ns[0].Round != 3 || ns[0].Side != "head" || ns[0].Stall == nil || ns[0].Path != "round-3.replaced-1" {
				t.Fatalf("re-run notes %+v, want round 3's, head's\n%s", ns, log)
			}
			// 4.5× less the rounds' own 2% noise.
			line := regexp.MustCompile(`loadgate: round 3 re-run: head's stack 4\.[2-7]× slower on every workload at once \(2 workloads, against the other [3-5] rounds' median\); the stalled round is kept as round-3\.replaced-1\n`)
			if !line.MatchString(log) {
				t.Errorf("log lacks %q:\n%s", line, log)
			}
			if !strings.Contains(strings.Join(report.NoteTexts(gr.Notes), "\n"), "round 3 re-run: head's stack") {
				t.Errorf("report notes %q lack the re-run", report.NoteTexts(gr.Notes))
			}
			if runsOf(3) != 2 {
				t.Errorf("head ran round 3 %d times, want 2", runsOf(3))
			}
			if gr.Verdict.Value != verdict.Pass || (!duet && (gr.Verdict.Sequential == nil || !gr.Verdict.Sequential.Decided())) {
				t.Errorf("verdict %s (%+v), want a decided pass on the quiet rounds\n%s", gr.Verdict.Value, gr.Verdict.Sequential, log)
			}
			for _, side := range []string{"base", "head"} {
				dir := filepath.Join(f.cfg.Out, side, "round-3.replaced-1")
				old, err := result.ReadFile(filepath.Join(dir, "result.json"))
				if err != nil {
					t.Fatalf("%s: the replaced round is not kept: %v", side, err)
				}
				b, err := os.ReadFile(filepath.Join(dir, "replaced.json"))
				var st verdict.Stall
				if err != nil || json.Unmarshal(b, &st) != nil || st.Round != 3 || st.Side != "head" || st.Factor < 4 {
					t.Errorf("%s/replaced.json: %s (%v), want the rule's numbers", side, b, err)
				}
				now, err := result.ReadFile(filepath.Join(f.cfg.Out, side, "round-3", "result.json"))
				if err != nil || old.Round.Number != 3 || now.Round.Number != 3 || now.StartedAt.Before(old.StartedAt) {
					t.Errorf("%s round-3: %v: want the re-run in round-3, the stalled one beside it", side, err)
				}
			}
			// The rounds as they ran, stall included, would not have passed.
			base, head := slices3(gr.Base.Results), slices3(gr.Head.Results)
			old, _ := result.ReadFile(filepath.Join(f.cfg.Out, "head", "round-3.replaced-1", "result.json"))
			head[2] = old
			oldBase, _ := result.ReadFile(filepath.Join(f.cfg.Out, "base", "round-3.replaced-1", "result.json"))
			base[2] = oldBase
			if v, err := verdict.Gate(base, head, verdict.CompareOptions{}); err != nil || v.Value == verdict.Pass {
				t.Errorf("with the stalled round kept: %s (%v), want no pass (else this test proves nothing)", v.Value, err)
			}
		})
	}
}

func slices3(rs []*result.Result) []*result.Result { return append([]*result.Result(nil), rs...) }

// The cap: a gate of at most 10 rounds re-runs one stalled round; the
// next stalled round is judged, and a note says the cap was spent.
func TestStallReRunsAreCapped(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.MaxRounds = 10
	stallOn(t, f, "head", 5, 1, 2, 6)
	f.runner.block = nil
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	reruns, capped := notesOf(gr, verdict.NoteStallRerun), notesOf(gr, verdict.NoteStallCapped)
	if len(reruns) != 1 || reruns[0].Round != 2 || len(capped) != 1 || capped[0].Round != 6 || capped[0].Rounds != 1 {
		t.Fatalf("re-runs %+v, capped %+v, want round 2 re-run and round 6 judged (cap 1)\n%s", reruns, capped, log)
	}
	if !regexp.MustCompile(`round 6 is judged although head's stack [45]\.[0-9]× slower on every workload at once`).MatchString(log) || !strings.Contains(log, "re-runs at most 1 stalled round(s)") {
		t.Errorf("log lacks the capped round:\n%s", log)
	}
	dirs, _ := filepath.Glob(filepath.Join(f.cfg.Out, "head", "round-*.replaced-*"))
	if len(dirs) != 1 {
		t.Errorf("replaced rounds kept %q, want one", dirs)
	}
	if gr.Verdict.Value == verdict.Unusable || gr.Verdict.Sequential == nil {
		t.Errorf("verdict %s, want a judgment", gr.Verdict.Value)
	}
}

// A head simply 4× slower on every workload in every round is no stall
// (no round stands apart): nothing is re-run and it is a regression.
func TestUniformlySlowerHeadStillFails(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	stallOn(t, f, "head", 1, 4)
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ns := append(notesOf(gr, verdict.NoteStallRerun), notesOf(gr, verdict.NoteStallCapped)...); len(ns) > 0 {
		t.Errorf("stall notes %+v, want none", ns)
	}
	if gr.Verdict.Value != verdict.Regression {
		t.Errorf("verdict %s, want a regression\n%s", gr.Verdict.Value, log)
	}
}

// An A/A gate without stalls re-runs nothing: ten rounds of noisy,
// heavy-ish rounds (2% and the fixture's own) keep every round.
func TestAAWithoutStallReRunsNothing(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.MaxRounds = 10
	aaNoise(t, f, 0.1)
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []verdict.NoteCode{verdict.NoteStallRerun, verdict.NoteStallCapped, verdict.NoteStallNoBudget} {
		if ns := notesOf(gr, c); len(ns) > 0 {
			t.Errorf("%s notes %+v, want none\n%s", c, ns, log)
		}
	}
	if dirs, _ := filepath.Glob(filepath.Join(f.cfg.Out, "*", "round-*.replaced-*")); len(dirs) > 0 {
		t.Errorf("replaced rounds %q, want none", dirs)
	}
	if gr.Verdict.Value == verdict.Regression {
		t.Errorf("an A/A gate called a regression")
	}
}

// A stalled round is run again only while the budget fits a round: with
// 70 s a side-round, after four rounds of fixed five nothing more fits
// 10 minutes, so the stalled round 2 is judged and a note says why.
func TestStallKeptWhenTheBudgetIsSpent(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds, f.cfg.Budget = 5, 10*time.Minute
	runsOf := stallOn(t, f, "head", 4.5, 1, 2)
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var log strings.Builder
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Log: &log, Words: report.GateWords{},
		Now: func() time.Time { return t0.Add(time.Duration(f.runner.runs()) * 70 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	kept := notesOf(gr, verdict.NoteStallNoBudget)
	if len(kept) != 1 || kept[0].Round != 2 || len(notesOf(gr, verdict.NoteStallRerun)) != 0 || runsOf(2) != 1 {
		t.Fatalf("no-budget notes %+v, round 2 run %d time(s), want round 2 judged once with a note\n%s", kept, runsOf(2), log.String())
	}
	if !strings.Contains(log.String(), "round 2 is judged although head's stack") || !strings.Contains(log.String(), "no further round fits the budget to re-run it") {
		t.Errorf("log:\n%s", log.String())
	}
	if len(gr.Head.Results) != 5 {
		t.Errorf("%d rounds, want the 5 asked for", len(gr.Head.Results))
	}
}
