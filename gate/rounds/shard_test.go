package rounds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// runShard runs shard k/n of the fixture's gate into its own directory,
// each round's results edited by edit (side, round from 0).
func runShard(t *testing.T, k, n, rounds_ int, edit func(side string, i int, r *result.Result)) (string, rounds.Outcome) {
	t.Helper()
	f := newFixture(t, scenarioWithStack)
	f.cfg.Rounds, f.cfg.Duet, f.cfg.Shard, f.cfg.ToolVersion = rounds_, true, rounds.Shard{K: k, N: n}, "test"
	seen := map[string]int{}
	f.runner.editSide = func(side string, _ int, r *result.Result) {
		i := seen[side]
		seen[side]++
		r.Late, r.LatenessMS.P99 = 0, 0 // the stored result's generator fell behind; these rounds' did not
		if edit != nil {
			edit(side, i, r)
		}
	}
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, LookupEnv: func(string) (string, bool) { return "", false }, Words: report.GateWords{}})
	if err != nil {
		t.Fatal(err)
	}
	return f.cfg.Out, gr
}

// scale multiplies every latency of r's workloads named in only (all when
// empty) by f, as a runner that much slower would record them.
func scale(t *testing.T, r *result.Result, f float64, only ...string) {
	t.Helper()
	for i := range r.Phases {
		for j := range r.Phases[i].Workloads {
			w := &r.Phases[i].Workloads[j]
			if len(only) > 0 && w.Name != only[0] {
				continue
			}
			for _, hs := range []struct {
				enc *string
				sum *result.Summary
			}{{&w.Histogram, &w.LatencyMS}, {&w.ServiceH, &w.ServiceMS}} {
				if *hs.enc == "" {
					continue
				}
				h, err := result.DecodeHistogram(*hs.enc)
				if err != nil {
					t.Fatal(err)
				}
				out := result.NewHistogram()
				for _, b := range h.Distribution() {
					if b.Count > 0 {
						if err := out.RecordValues(max(int64(math.Round(float64(b.From+b.To)/2*f)), 1), b.Count); err != nil {
							t.Fatal(err)
						}
					}
				}
				if *hs.enc, err = result.EncodeHistogram(out); err != nil {
					t.Fatal(err)
				}
				*hs.sum = result.Summarize(out)
			}
		}
	}
}

// noisy is round i's noise, the same on both sides of a round (a duet's
// shared noise) plus a little of each side's own.
func noisy(side string, i int) float64 {
	own := []float64{0.01, -0.012, 0.008, -0.004, 0.006, -0.01, 0.003, -0.002}
	shared := []float64{0.05, -0.03, 0.08, -0.06, 0.02, 0.0, -0.04, 0.07}
	f := 1 + shared[i%len(shared)]
	if side == "head" {
		f *= 1 + own[i%len(own)]
	}
	return f
}

// A fixed --rounds is split over the shards (the first R mod N one more);
// each shard writes shard.json with its rounds, machine, topology and
// policy, and no verdict.
func TestShardRunsItsShareAndWritesNoVerdict(t *testing.T) {
	for _, tc := range []struct{ k, n, total, want int }{{1, 2, 5, 3}, {2, 2, 5, 2}, {3, 4, 8, 2}} {
		out, gr := runShard(t, tc.k, tc.n, tc.total, nil)
		if gr.Verdict.Value != "" || len(gr.Head.Results) != tc.want || len(gr.Base.Results) != tc.want {
			t.Errorf("shard %d/%d of %d: verdict %q, %d/%d rounds; want no verdict and %d rounds", tc.k, tc.n, tc.total, gr.Verdict.Value, len(gr.Base.Results), len(gr.Head.Results), tc.want)
		}
		rec, err := rounds.ReadShard(out)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Shard != fmt.Sprintf("%d/%d", tc.k, tc.n) || rec.Status != rounds.ShardOK || rec.Rounds != tc.want || rec.Policy.Rounds != tc.want ||
			rec.Head.Commit != "h1" || rec.Base.Commit != "b1" || rec.Scenario.Hash == "" || rec.Topology.StackCPUs != "0" || rec.ToolVersion != "test" || !rec.Policy.Duet {
			t.Errorf("shard.json: %+v", rec)
		}
		for _, f := range []string{"report.md", "verdict.json", "comment.md"} {
			if _, err := os.Stat(filepath.Join(out, f)); err == nil {
				t.Errorf("a shard wrote %s: it has no verdict", f)
			}
		}
	}
}

// Sequential rounds: each shard runs at most ⌈max-rounds/N⌉ (even) rounds
// and takes no look, so a decided comparison does not stop it early.
func TestShardOfSequentialRoundsTakesNoLooks(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Auto, f.cfg.MaxRounds, f.cfg.Duet, f.cfg.Shard = true, 20, true, rounds.Shard{K: 1, N: 4}
	var log strings.Builder
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner, Log: &log, Words: report.GateWords{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Head.Results) != 6 || strings.Contains(log.String(), "loadgate: look ") {
		t.Errorf("%d rounds (want 6 = ⌈20/4⌉ made even), log:\n%s", len(gr.Head.Results), log.String())
	}
}

func TestShardRefusals(t *testing.T) {
	for _, s := range []string{"0/2", "3/2", "1", "a/b", "1/0", "1/65"} {
		if _, err := rounds.ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted", s)
		}
	}
	for _, tc := range []struct {
		cfg  rounds.Config
		want string
	}{
		{rounds.Config{Scenario: "s.yaml", Base: "main", Rounds: 1, Shard: rounds.Shard{K: 1, N: 2}}, "cannot be split over 2 shards"},
		{rounds.Config{Scenario: "s.yaml", Against: "baseline:rel", Rounds: 4, Shard: rounds.Shard{K: 1, N: 2}}, "not --against baseline:rel"},
	} {
		err := tc.cfg.Validate()
		if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate %+v: %v, want a usage error with %q", tc.cfg.Shard, err, tc.want)
		}
	}
}

// mergeOf merges dirs into a fresh directory.
func mergeOf(t *testing.T, min int, dirs ...string) (rounds.Outcome, error) {
	t.Helper()
	gr, _, err := rounds.Merge(context.Background(), rounds.MergeConfig{Dirs: dirs, Out: t.TempDir(), Replace: true, MinShards: min})
	return gr, err
}

// Two shards' rounds are pooled into one gate of all their rounds,
// numbered in turn, judged by verdict.Gate, stating each shard's rounds.
func TestMergePoolsTheShardsRounds(t *testing.T) {
	slow := func(side string, i int, r *result.Result) {
		f := noisy(side, i)
		if side == "head" {
			f *= 1.3
		}
		scale(t, r, f, "api_read")
	}
	a, _ := runShard(t, 1, 2, 7, slow)
	b, _ := runShard(t, 2, 2, 7, func(side string, i int, r *result.Result) { slow(side, i+4, r) })
	gr, err := mergeOf(t, 0, b, a) // any order
	if err != nil {
		t.Fatal(err)
	}
	if gr.Rounds != 7 || len(gr.Shards) != 2 || gr.Shards[0].Rounds != 4 || gr.Shards[1].Rounds != 3 {
		t.Fatalf("rounds %d, shards %+v", gr.Rounds, gr.Shards)
	}
	for i, r := range gr.Head.Results {
		if r.Round.Number != i+1 || gr.Base.Results[i].Round.Number != i+1 {
			t.Errorf("pooled round %d numbered %d/%d", i+1, gr.Base.Results[i].Round.Number, r.Round.Number)
		}
	}
	if c := comparisons(gr.Verdict)["sustain/api_read/p95"]; c.Value != verdict.Regression || c.Rounds != 7 {
		t.Errorf("api_read +30%%: %s over %d rounds, want a regression over 7: %q", c.Value, c.Rounds, report.NoteTexts(gr.Verdict.Notes))
	}
}

// Regression test of the runner as a block: one runner 30% faster as a
// whole (both sides of each of its rounds) changes no comparison, since
// only the ratio within a round is compared.
func TestMergeRunnerFasterAsAWholeChangesNothing(t *testing.T) {
	edit := func(off int, runner float64) func(string, int, *result.Result) {
		return func(side string, i int, r *result.Result) {
			f := noisy(side, i+off) * runner
			if side == "head" {
				scale(t, r, 1.25, "api_read") // beyond what two shards' instances may sit apart (verdict.DefaultInstanceSD)
			}
			scale(t, r, f)
		}
	}
	a, _ := runShard(t, 1, 2, 12, edit(0, 1))
	b, _ := runShard(t, 2, 2, 12, edit(6, 1))
	fast, _ := runShard(t, 2, 2, 12, edit(6, 0.7))
	same, err := mergeOf(t, 0, a, b)
	if err != nil {
		t.Fatal(err)
	}
	faster, err := mergeOf(t, 0, a, fast)
	if err != nil {
		t.Fatal(err)
	}
	cs, cf := comparisons(same.Verdict), comparisons(faster.Verdict)
	if len(cs) == 0 || len(cs) != len(cf) {
		t.Fatalf("%d and %d comparisons", len(cs), len(cf))
	}
	for k, c := range cs {
		d := cf[k]
		if c.Metric == verdict.MetricErrorRate {
			continue
		}
		if c.Value != d.Value || math.Abs(c.Ratio-d.Ratio) > 0.005*c.Ratio || math.Abs(c.CIHigh-d.CIHigh) > 0.01 || math.Abs(c.CILow-d.CILow) > 0.01 {
			t.Errorf("%s: %s %.4f [%.4f, %.4f] with equal runners, %s %.4f [%.4f, %.4f] with one 30%% faster", k, c.Value, c.Ratio, c.CILow, c.CIHigh, d.Value, d.Ratio, d.CILow, d.CIHigh)
		}
	}
	if c := cs["sustain/api_read/p95"]; c.Value != verdict.Regression {
		t.Errorf("api_read +25%%: %s, want regression", c.Value)
	}
}

func comparisons(v verdict.Verdict) map[string]verdict.Comparison {
	out := map[string]verdict.Comparison{}
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			out[c.Phase+"/"+c.Workload+"/"+c.Metric] = c
		}
	}
	return out
}

// editShard rewrites dir's shard.json through edit.
func editShard(t *testing.T, dir string, edit func(*rounds.ShardRecord)) {
	t.Helper()
	rec, err := rounds.ReadShard(dir)
	if err != nil {
		t.Fatal(err)
	}
	edit(rec)
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(filepath.Join(dir, rounds.ShardFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Shards of different scenarios, commits, policies, tool versions or N,
// or one shard twice, are refused (exit 2), naming the shard and the
// difference.
func TestMergeRefusesMismatchedShards(t *testing.T) {
	for _, tc := range []struct {
		edit func(*rounds.ShardRecord)
		want string
	}{
		{func(r *rounds.ShardRecord) { r.Scenario.Hash = "sha256:other" }, "scenario hash sha256:other, not sha256:"},
		{func(r *rounds.ShardRecord) { r.Head.Commit = "h2" }, "head commit h2, not h1"},
		{func(r *rounds.ShardRecord) { r.Base.Commit = "b2" }, "base commit b2, not b1"},
		{func(r *rounds.ShardRecord) { r.Policy.Tolerance = 0.05 }, "policy: tolerance 0.05 vs"},
		{func(r *rounds.ShardRecord) { r.Policy.Duet = false }, "policy: duet false vs true"},
		{func(r *rounds.ShardRecord) { r.ToolVersion = "v1.2.0" }, "loadgate v1.2.0, not test"},
		{func(r *rounds.ShardRecord) { r.Shard = "2/3" }, "a gate of 3 shards, not 2"},
		{func(r *rounds.ShardRecord) { r.Shard = "1/2" }, "is given twice"},
	} {
		a, _ := runShard(t, 1, 2, 4, nil)
		b, _ := runShard(t, 2, 2, 4, nil)
		editShard(t, b, tc.edit)
		_, err := mergeOf(t, 0, a, b)
		if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), b) {
			t.Errorf("merge: %v; want a usage error naming %s and %q", err, b, tc.want)
		}
	}
}

// A shard that did not arrive, or failed, is stated and the gate judged on
// the others; below the minimum the gate is unusable, never a pass.
func TestMergeMissingOrFailedShard(t *testing.T) {
	a, _ := runShard(t, 1, 3, 12, noisyEdit(t, 0))
	b, _ := runShard(t, 2, 3, 12, noisyEdit(t, 4))
	c, _ := runShard(t, 3, 3, 12, noisyEdit(t, 8))
	editShard(t, c, func(r *rounds.ShardRecord) {
		r.Status, r.Error = rounds.ShardFailed, "gate: head side is unusable: build failed"
	})

	gr, err := mergeOf(t, 1, a, c) // --min-shards 1
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
	notes += "\n" + strings.Join(report.NoteTexts(gr.Verdict.Notes), "\n")
	if gr.Verdict.Value == verdict.Unusable || gr.Rounds != 4 ||
		!strings.Contains(notes, "shard 2/3: no result arrived") || !strings.Contains(notes, "shard 3/3 failed (gate: head side is unusable: build failed)") {
		t.Errorf("verdict %s on %d rounds, notes:\n%s", gr.Verdict.Value, gr.Rounds, notes)
	}

	gr, err = mergeOf(t, 0, a, c) // the default minimum, 2 of 3
	if err != nil {
		t.Fatal(err)
	}
	if gr.Verdict.Value != verdict.Unusable {
		t.Errorf("1 of 3 shards under the default minimum: %s, want unusable", gr.Verdict.Value)
	}
	gr, err = mergeOf(t, 3, a, b)
	if err != nil {
		t.Fatal(err)
	}
	why := strings.Join(report.NoteTexts(gr.Verdict.Notes), "\n")
	if gr.Verdict.Value != verdict.Unusable || !strings.Contains(why, "2 of 3 shards gave rounds (8 paired rounds), fewer than the 3") || gr.Verdict.ExitCode() != 3 {
		t.Errorf("--min-shards 3 with 2: verdict %s (%s)", gr.Verdict.Value, why)
	}

	// A shard whose round files do not read is a failed shard, stated.
	if err := os.Remove(filepath.Join(b, "head", "round-2", "result.json")); err != nil {
		t.Fatal(err)
	}
	gr, err = mergeOf(t, 0, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if gr.Rounds != 4 || gr.Shards[1].Status != rounds.ShardFailed {
		t.Errorf("unreadable shard: %d rounds, %+v", gr.Rounds, gr.Shards[1])
	}
}

// Regression: one interrupted shard made the whole merge unusable; it is a
// failed shard, stated, and the gate is judged on the others.
func TestRegression_InterruptedShardFailsOnlyItself(t *testing.T) {
	a, _ := runShard(t, 1, 3, 12, noisyEdit(t, 0))
	b, _ := runShard(t, 2, 3, 12, noisyEdit(t, 4))
	c, _ := runShard(t, 3, 3, 12, func(side string, i int, r *result.Result) {
		scale(t, r, noisy(side, i+8))
		r.Interrupted = i == 2
	})
	gr, err := mergeOf(t, 0, a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
	if gr.Verdict.Value == verdict.Unusable || gr.Rounds != 8 || gr.Shards[2].Status != rounds.ShardFailed ||
		!strings.Contains(notes, "shard 3/3 failed (the gate was interrupted before its rounds ended): its rounds are not used") {
		t.Errorf("verdict %s on %d rounds, shard 3 %+v, notes:\n%s", gr.Verdict.Value, gr.Rounds, gr.Shards[2], notes)
	}
}

func noisyEdit(t *testing.T, off int) func(string, int, *result.Result) {
	return func(side string, i int, r *result.Result) { scale(t, r, noisy(side, i+off)) }
}

// No shard's results at all: unusable (exit 3), not a usage error, so the
// Action still publishes an unusable gate.
func TestShardDirsNoneIsUnusable(t *testing.T) {
	if _, err := rounds.ShardDirs(t.TempDir()); rounds.KindOf(err) != rounds.ErrUnusable {
		t.Errorf("ShardDirs of an empty directory: %v, want unusable", err)
	}
	a, _ := runShard(t, 1, 2, 2, nil)
	root := filepath.Dir(a)
	dirs, err := rounds.ShardDirs(root)
	if err != nil || len(dirs) != 1 || dirs[0] != a {
		t.Errorf("ShardDirs(%s) = %q, %v", root, dirs, err)
	}
}

// A shard whose gate found head changing the workflows that run it makes
// the merged gate unusable, saying what the verdict would have been.
func TestMergeKeepsTheWorkflowGuard(t *testing.T) {
	a, _ := runShard(t, 1, 2, 8, noisyEdit(t, 0))
	b, _ := runShard(t, 2, 2, 8, noisyEdit(t, 4))
	for _, d := range []string{a, b} {
		editShard(t, d, func(r *rounds.ShardRecord) {
			r.Unusable = []verdict.Note{{Code: verdict.NoteWorkflowChanged, Paths: []string{".github/workflows/load-gate.yml"}}}
		})
	}
	gr, err := mergeOf(t, 0, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if v := gr.Verdict; v.Value != verdict.Unusable || len(v.Notes) != 1 || v.Notes[0].Code != verdict.NoteWorkflowChanged || v.Notes[0].Was == "" || v.Notes[0].Was == verdict.Unusable {
		t.Errorf("verdict %s, notes %+v: want unusable by the workflow change, with what it would have been", v.Value, v.Notes)
	}
}
