package rounds_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// scaleLatency multiplies every latency of r (its histograms) by f.
func scaleLatency(t *testing.T, r *result.Result, f float64) { reshape(t, r, f, 1) }

// reshape multiplies every latency of r by f and every count by k.
func reshape(t *testing.T, r *result.Result, f float64, k int64) {
	t.Helper()
	for i := range r.Phases {
		for j := range r.Phases[i].Workloads {
			w := &r.Phases[i].Workloads[j]
			for _, hs := range []*string{&w.Histogram, &w.ServiceH} {
				if *hs == "" {
					continue
				}
				h, err := result.DecodeHistogram(*hs)
				if err != nil {
					t.Fatal(err)
				}
				out := result.NewHistogram()
				for _, b := range h.Distribution() {
					if b.Count > 0 {
						if err := out.RecordValues(max(1, int64(math.Round(float64(b.From)*f))), b.Count*k); err != nil {
							t.Fatal(err)
						}
					}
				}
				if *hs, err = result.EncodeHistogram(out); err != nil {
					t.Fatal(err)
				}
			}
			if k != 1 {
				w.Offered, w.Succeeded, w.Failed, w.Abandoned, w.Late, w.Completed = w.Offered*k, w.Succeeded*k, w.Failed*k, w.Abandoned*k, w.Late*k, w.Completed*k
				w.LatencyMS.Count, w.ServiceMS.Count = w.LatencyMS.Count*k, w.ServiceMS.Count*k
				for n, c := range w.Failures {
					w.Failures[n] = c * k
				}
			}
		}
	}
}

// clean makes the fixture's result one a sequential gate can decide on:
// its generator on schedule, no thresholds of its own, 40× the samples
// (5 000 a workload: the percentiles' sampling noise small).
func clean(t *testing.T, r *result.Result) {
	r.Generator, r.Late, r.Scenario.Thresholds = nil, 0, nil
	reshape(t, r, 1, 40)
	r.Offered, r.Recorded = r.Offered*40, r.Recorded*40
}

// seqRun runs f's gate with sequential rounds; the clock advances step
// per round of one side.
func seqRun(t *testing.T, f *fixture, step time.Duration) (rounds.Outcome, string, error) {
	t.Helper()
	return seqRunClock(t, f, func(runs int) time.Duration { return time.Duration(runs) * step })
}

// A head 1.5× slower than base stops at the first look, a regression.
func TestSequentialStopsAtFirstLookOnARegression(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.runner.editSide = func(side string, _ int, r *result.Result) {
		clean(t, r)
		if side == "head" {
			scaleLatency(t, r, 1.5)
		}
	}
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d := gr.Verdict.Sequential
	if d == nil || d.Look != 1 || d.Rounds != verdict.DefaultSeqMinRounds || d.Stop != verdict.StopDecided || gr.Verdict.Value != verdict.Regression {
		for _, wv := range report.Explain(gr.Verdict).Workloads {
			for _, c := range wv.Comparisons {
				t.Logf("%s/%s %s %s: %s", c.Phase, c.Workload, c.Metric, c.Value, c.Why)
			}
		}
		t.Fatalf("verdict %s %+v, sequential %+v, want a regression decided at look 1\n%s", gr.Verdict.Value, gr.Verdict.Notes, d, log)
	}
	if gr.Rounds != 4 || len(gr.Head.Results) != 4 || len(gr.Base.Results) != 4 {
		t.Errorf("report rounds %d (%d/%d results), want 4", gr.Rounds, len(gr.Base.Results), len(gr.Head.Results))
	}
	if n := report.SequentialNote(gr.Verdict); !strings.Contains(n, "after 4 rounds") || !strings.Contains(n, "every judged comparison is decided") {
		t.Errorf("note %q", n)
	}
}

// aaNoise makes every round of an A/A gate swing by e^N(0, sd), seeded.
func aaNoise(t *testing.T, f *fixture, sd float64) {
	rng := rand.New(rand.NewPCG(14, 3))
	f.runner.editSide = func(_ string, _ int, r *result.Result) {
		clean(t, r)
		scaleLatency(t, r, math.Exp(sd*rng.NormFloat64()))
	}
}

// An A/A gate whose rounds swing runs to the maximum and says so.
func TestSequentialAARunsToTheMaximum(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.MaxRounds = 8
	aaNoise(t, f, 0.4)
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d := gr.Verdict.Sequential
	if d == nil || d.Rounds != 8 || d.MaxRounds != 8 || d.Stop != verdict.StopMaxRounds || d.Looks != 3 || d.Spent != 1-d.Nominal {
		t.Fatalf("verdict %s, sequential %+v, want stopped at the maximum of 8\n%s", gr.Verdict.Value, d, log)
	}
	if gr.Verdict.Value == verdict.Regression {
		t.Errorf("an A/A gate called a regression")
	}
	if gr.Rounds != 8 || !strings.Contains(report.SequentialNote(gr.Verdict), "stopped at the maximum of rounds") {
		t.Errorf("rounds %d, note %q", gr.Rounds, report.SequentialNote(gr.Verdict))
	}
	if !strings.Contains(strings.Join(report.NoteTexts(gr.Notes), "\n"), "at most 8 paired rounds (--max-rounds 8)") {
		t.Errorf("notes %q", report.NoteTexts(gr.Notes))
	}
}

// The budget: round 1 takes 2 s (the re-plan after it allows the 20 of
// --max-rounds), the rounds after it 80 s (40 s a side): after 8 rounds
// (562 s) the next pair would overrun 10 minutes, so that look is the
// last, spends all the error rate that is left and says the budget
// stopped it.
func TestSequentialBudgetStopsTheGate(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.MaxRounds, f.cfg.Budget = 20, 10*time.Minute
	aaNoise(t, f, 0.4)
	gr, log, err := seqRunClock(t, f, func(runs int) time.Duration {
		if runs <= 2 {
			return time.Duration(runs) * time.Second
		}
		return 2*time.Second + time.Duration(runs-2)*40*time.Second
	})
	if err != nil {
		t.Fatal(err)
	}
	d := gr.Verdict.Sequential
	if d == nil || d.Stop != verdict.StopBudget || d.Rounds != 8 || d.MaxRounds != 20 || d.Spent != 1-d.Nominal {
		t.Fatalf("verdict %s, sequential %+v, want stopped by the budget after 8 rounds of a plan of 20\n%s", gr.Verdict.Value, d, log)
	}
	if n := report.SequentialNote(gr.Verdict); !strings.Contains(n, "the budget allows no further look") {
		t.Errorf("note %q", n)
	}
	// A budget too small for one pair is refused before round 1.
	f = newFixture(t, scenarioWithStack)
	f.cfg.Budget = 20 * time.Second
	if _, _, err := seqRun(t, f, time.Second); rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "--budget") {
		t.Errorf("budget of 20s: %v, want a usage error naming --budget", err)
	}
}

// seqRunClock is seqRun on a clock that reads at(runs) past the start,
// runs being how many side-rounds the runner has returned.
func seqRunClock(t *testing.T, f *fixture, at func(runs int) time.Duration) (rounds.Outcome, string, error) {
	t.Helper()
	f.cfg.Auto, f.cfg.Rounds = true, 0
	if f.cfg.MaxRounds == 0 {
		// These tests' plans are of 10 rounds (the looks and the error
		// rate they spend follow from it); the default's own plan is
		// TestSequentialDefaultPlan's.
		f.cfg.MaxRounds = 10
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var log strings.Builder
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner,
		LookupEnv: func(string) (string, bool) { return "", false }, Log: &log, Words: report.GateWords{},
		Now: func() time.Time { return t0.Add(at(f.runner.runs())) }})
	return gr, log.String(), err
}

// scenarioOf is scenarioWithStack's load with its phases, warm-up and
// drain replaced.
func scenarioOf(warmup, drain string, phases ...string) string {
	s := "name: demo-api\nstack: {compose: [compose.yaml], target: api:8080}\n"
	if warmup != "" {
		s += "warmup: " + warmup + "\n"
	}
	if drain != "" {
		s += "drain: " + drain + "\n"
	}
	s += "phases:\n"
	for i, d := range phases {
		s += fmt.Sprintf("  - {name: %s, rate: 10, duration: %s}\n", []string{"sustain", "recover", "p2"}[i], d)
	}
	return s + "workloads:\n  - {name: api_read, http: {path: /}}\n"
}

// The estimate before round 1: per side the schedule, the drain as the
// margin it costs (0.5 s at most: it ends when the last response is in)
// and 0.5 s of overhead; sides such lengths a round, one in a duet.
func TestRoundEstimate(t *testing.T) {
	for _, c := range []struct {
		name   string
		body   string
		sides  int
		duet   bool
		want   time.Duration
		reason string
	}{
		{"demo gate (2 s + 15 s, drain 5 s)", scenarioOf("2s", "5s", "15s"), 2, false, 36 * time.Second, "17 s a side scheduled + 1 s"},
		{"demo gate, duet", scenarioOf("2s", "5s", "15s"), 2, true, 18 * time.Second, "one side's length"},
		{"against a baseline", scenarioOf("2s", "5s", "15s"), 1, false, 18 * time.Second, "head alone"},
		{"no drain", scenarioOf("", "0s", "10s", "5s"), 2, false, 31 * time.Second, "15.5 s a side"},
		{"short drain", scenarioOf("1s", "200ms", "4s"), 2, false, 11400 * time.Millisecond, "5.7 s a side"},
		{"a minute's drain costs what it really takes", scenarioOf("", "1m", "10s"), 2, false, 22 * time.Second, "not 70 s a side"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := scenario.Parse([]byte(c.body), "s.yaml", scenario.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := rounds.RoundEstimate(sc, c.sides, c.duet); got != c.want {
				t.Errorf("RoundEstimate = %s, want %s (%s)", got, c.want, c.reason)
			}
		})
	}
}

// The re-plan after round 1: the scheduled estimate (≈122 s a pair: two
// 60 s phases a side) would allow 4 rounds in 10 minutes, but round 1
// takes 2 s: the maximum becomes --max-rounds' 10, and an A/A gate runs
// to it. The other way, an estimate that allows 10 (6 s a pair) but a
// round 1 of 80 s lowers the maximum to the 6 that fit.
func TestSequentialReplansAfterRoundOne(t *testing.T) {
	f := newFixture(t, scenarioOf("", "", "30s", "30s"))
	aaNoise(t, f, 0.4)
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "at most 4 (the budget 10m0s allows 4 at ≈2m2s a round as scheduled") || !strings.Contains(log, "re-planned after round 1 (2s measured): at most 10") {
		t.Errorf("log does not show the plan of 4 re-planned to 10:\n%s", log)
	}
	if d := gr.Verdict.Sequential; d == nil || d.MaxRounds != 10 || d.Rounds != 10 || d.Stop != verdict.StopMaxRounds {
		t.Fatalf("sequential %+v, want a plan of 10 run to its maximum\n%s", d, log)
	}
	if notes := strings.Join(report.NoteTexts(gr.Notes), "\n"); !strings.Contains(notes, "at most 10 paired rounds (--max-rounds 10; the budget 10m0s allows 285 at 2s a round as measured in round 1)") {
		t.Errorf("notes %q", report.NoteTexts(gr.Notes))
	}

	f = newFixture(t, scenarioWithStack)
	aaNoise(t, f, 0.4)
	gr, log, err = seqRun(t, f, 40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := gr.Verdict.Sequential; d == nil || d.MaxRounds != 6 || d.Rounds != 6 {
		t.Fatalf("sequential %+v, want a plan of 6 (7 fit at 80 s a round)\n%s", d, log)
	}
	if notes := strings.Join(report.NoteTexts(gr.Notes), "\n"); !strings.Contains(notes, "at most 6 paired rounds (the budget 10m0s allows 7 at 1m20s a round as measured in round 1; --max-rounds 10)") {
		t.Errorf("notes %q", report.NoteTexts(gr.Notes))
	}
}

// Fixed rounds keep verdict.Gate, with no sequential look.
func TestFixedRoundsAreNotSequential(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds = 2
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if gr.Verdict.Sequential != nil || gr.Rounds != 2 {
		t.Errorf("sequential %+v, rounds %d", gr.Verdict.Sequential, gr.Rounds)
	}
}

// fakeCalibration is a noise.json of an A/A gate of 4 rounds on the
// fixture's fakes (one that matches their results).
func fakeCalibration(t *testing.T) string {
	t.Helper()
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds = 4
	aaNoise(t, f, 0.05)
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	n, err := verdict.Calibrate(gr.Base.Results, gr.Head.Results, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := n.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A matching calibration in base's baselines/<scenario>/noise.json moves
// the first look to round 2 (five looks up to 10 rounds); a calibration that does not decode is
// refused, naming the file.
func TestSequentialWithACalibration(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.repo.files["b1"]["baselines/demo-api/noise.json"] = fakeCalibration(t)
	f.runner.editSide = func(side string, _ int, r *result.Result) {
		clean(t, r)
		if side == "head" {
			scaleLatency(t, r, 1.5)
		}
	}
	gr, log, err := seqRun(t, f, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Looks after rounds 2, 4, … 10: five; the O'Brien–Fleming-type
	// spending keeps almost nothing for the first, so it decides at the 2nd.
	if d := gr.Verdict.Sequential; d == nil || d.Looks != 5 || d.Look > 2 || d.Stop != verdict.StopDecided || gr.Verdict.Value != verdict.Regression ||
		!strings.Contains(log, "look 1/5 after 2 rounds") {
		t.Fatalf("verdict %s, sequential %+v, want looks from round 2 on, a regression\n%s", gr.Verdict.Value, d, log)
	}
	if !strings.Contains(log, "noise calibration") {
		t.Errorf("log does not name the calibration:\n%s", log)
	}

	f = newFixture(t, scenarioWithStack)
	f.repo.files["b1"]["baselines/demo-api/noise.json"] = `{"schema": "loadgate/noise/v0"}`
	if _, _, err := seqRun(t, f, time.Second); rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), filepath.Join("baselines", "demo-api", "noise.json")) {
		t.Errorf("a bad noise.json: %v, want a usage error naming it", err)
	}
}

// Calibrate: both sides the one commit, the A/A rounds' noise per
// workload and percentile.
func TestCalibrateRunsAARoundsOfOneCheckout(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.repo.commits["HEAD"] = "b1"
	f.cfg.Base, f.cfg.Rounds = "", 4
	aaNoise(t, f, 0.1)
	at := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	n, gr, err := rounds.Calibrate(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner}, func() time.Time { return at })
	if err != nil {
		t.Fatal(err)
	}
	if gr.Base.Commit != "b1" || gr.Head.Commit != "b1" || len(gr.Head.Results) != 4 {
		t.Errorf("sides %s / %s, %d rounds: want both b1, 4 rounds", gr.Base.Commit, gr.Head.Commit, len(gr.Head.Results))
	}
	if ev := f.ev.String(); !strings.Contains(ev, "worktree base b1") || !strings.Contains(ev, "worktree head b1") {
		t.Errorf("events %s: want a worktree of b1 per side", ev)
	}
	e := n.Entry("sustain", "api_read", verdict.MetricP95)
	if n.Pairs != 4 || !n.Date.Equal(at) || e == nil || e.DF != 3 || !(e.SD > 0.02 && e.SD < 0.5) {
		t.Fatalf("noise %+v, p95 entry %+v", n, e)
	}
	if d1, d10 := e.Detectable(1, 0.1, 0.95, 0.8), e.Detectable(10, 0.1, 0.95, 0.8); !(d1 > d10 && d10 > 1.1) {
		t.Errorf("detectable R=1 %v, R=10 %v", d1, d10)
	}
	f = newFixture(t, scenarioWithStack)
	f.repo.commits["HEAD"] = "b1"
	f.cfg.Rounds = 1
	if _, _, err := rounds.Calibrate(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner}, time.Now); rounds.KindOf(err) != rounds.ErrUsage {
		t.Errorf("one pair: %v, want a usage error", err)
	}
}

// The plan's note is stated from the plan on, and the re-plan replaces it;
// the re-plan never plans past the budget. On the fake clock (at: the time
// since the gate's start after so many side-rounds):
//   - a round 1 that fails or is interrupted leaves a report that still
//     states the plan;
//   - a round 1 that used the budget up stops the gate after it, unusable,
//     the budget the reason, rather than running round 2 past it;
//   - a round 1 that leaves room for exactly one more round runs it.
func TestSequentialPlanNoteAndReplanWithinTheBudget(t *testing.T) {
	const planned = "sequential rounds (--rounds auto): at most 10 paired rounds (--max-rounds 10), budget 10m0s"
	for _, c := range []struct {
		name     string
		scenario string // "": scenarioWithStack
		at       func(runs int) time.Duration
		edit     func(f *fixture)
		wantKind error // nil: a verdict
		wantErr  string
		rounds   int    // rounds in the report
		note     string // the one sequential_plan note
	}{
		{
			name: "round 1 fails", at: func(int) time.Duration { return 0 },
			edit:     func(f *fixture) { f.runner.err = fmt.Errorf("engine failed") },
			wantKind: rounds.ErrUnusable, wantErr: "engine failed", rounds: 0, note: planned,
		},
		{
			name: "round 1 interrupted", at: func(int) time.Duration { return 0 },
			edit: func(f *fixture) {
				f.runner.editSide = func(side string, n int, r *result.Result) { r.Interrupted = side == "base" }
			},
			rounds: 0, note: planned, // base's interrupted round has no head to pair with
		},
		{
			name: "round 1 uses the budget up",
			at:   func(runs int) time.Duration { return time.Duration(runs) * 295 * time.Second },
			edit: func(*fixture) {}, wantKind: rounds.ErrUnusable, wantErr: "--budget 10m0s is used up after round 1 (9m50s measured",
			rounds: 1, note: "at most 1 paired rounds (the budget 10m0s allows 1 at 9m50s a round as measured in round 1; --max-rounds 10)",
		},
		{
			name: "round 2 just fits",
			at: func(runs int) time.Duration {
				if runs <= 2 {
					return time.Duration(runs) * 142500 * time.Millisecond
				}
				return 285*time.Second + time.Duration(runs-2)*time.Second
			},
			edit:   func(f *fixture) { aaNoise(t, f, 0.4) },
			rounds: 2, note: "at most 2 paired rounds (the budget 10m0s allows 2 at 4m45s a round as measured in round 1; --max-rounds 10)",
		},
		{
			name: "re-planned", scenario: scenarioOf("", "", "30s", "30s"), // planned 4 as scheduled
			at:     func(runs int) time.Duration { return time.Duration(runs) * time.Second },
			edit:   func(f *fixture) { aaNoise(t, f, 0.4) },
			rounds: 10, note: "at most 10 paired rounds (--max-rounds 10; the budget 10m0s allows 285 at 2s a round as measured in round 1)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.scenario == "" {
				c.scenario = scenarioWithStack
			}
			f := newFixture(t, c.scenario)
			c.edit(f)
			gr, log, err := seqRunClock(t, f, c.at)
			if rounds.KindOf(err) != c.wantKind || (c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err %v, want kind %v with %q\n%s", err, c.wantKind, c.wantErr, log)
			}
			if len(gr.Head.Results) != c.rounds || len(gr.Base.Results) < c.rounds {
				t.Errorf("rounds base %d head %d, want %d", len(gr.Base.Results), len(gr.Head.Results), c.rounds)
			}
			var plans []string
			for _, n := range gr.Notes {
				if n.Code == verdict.NoteSequentialPlan {
					plans = append(plans, report.NoteText(n))
				}
			}
			if len(plans) != 1 || !strings.Contains(plans[0], c.note) {
				t.Errorf("plan notes %q, want one with %q", plans, c.note)
			}
		})
	}
}

// Without --max-rounds a sequential gate plans verdict.DefaultSeqMaxRounds
// (20, chosen by make gate-quality): an A/A gate of 1 s rounds, within the
// budget, plans 20 rounds.
func TestSequentialDefaultPlan(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	aaNoise(t, f, 0.4)
	f.cfg.Auto, f.cfg.Rounds, f.cfg.MaxRounds = true, 0, 0
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var log strings.Builder
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner,
		LookupEnv: func(string) (string, bool) { return "", false }, Log: &log, Words: report.GateWords{},
		Now: func() time.Time { return t0.Add(time.Duration(f.runner.runs()) * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	if rounds.DefaultMaxRounds != verdict.DefaultSeqMaxRounds || verdict.DefaultSeqMaxRounds != 20 {
		t.Errorf("DefaultMaxRounds %d, verdict.DefaultSeqMaxRounds %d, want both 20", rounds.DefaultMaxRounds, verdict.DefaultSeqMaxRounds)
	}
	if d := gr.Verdict.Sequential; d == nil || d.MaxRounds != verdict.DefaultSeqMaxRounds || !strings.Contains(log.String(), "--max-rounds 20") {
		t.Errorf("sequential %+v, want a plan of %d\n%s", d, verdict.DefaultSeqMaxRounds, log.String())
	}
}
