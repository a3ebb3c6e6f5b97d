package bisect_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/bisect"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// fakeGates gates commit i of a history whose p95 is level[i], with a 10%
// tolerance and an interval of ±1%: what a decided gate would say.
func fakeGates(t *testing.T, commits []bisect.Commit, level []float64, ran *[]string) bisect.GateFunc {
	idx := map[string]int{}
	for i, c := range commits {
		idx[c.SHA] = i
	}
	return func(ctx context.Context, base, head, dir string) (verdict.Verdict, error) {
		*ran = append(*ran, fmt.Sprintf("%d..%d", idx[base], idx[head]))
		r := level[idx[head]] / level[idx[base]]
		v := verdict.Pass
		if r > 1.10*1.01 {
			v = verdict.Regression
		}
		c := verdict.Comparison{Phase: "sustain", Workload: "api_read", Metric: "p95", Ratio: r, CILow: r / 1.01, CIHigh: r * 1.01, Value: v, Interval: verdict.IntervalDuet}
		return verdict.Verdict{Value: v, Workloads: []verdict.WorkloadVerdict{{Phase: "sustain", Workload: "api_read", Value: v, Comparisons: []verdict.Comparison{c}}}}, nil
	}
}

func history(n int) (bisect.Commit, []bisect.Commit) {
	all := make([]bisect.Commit, n+1)
	for i := range all {
		all[i] = bisect.Commit{SHA: fmt.Sprintf("%040x", i+1), Subject: fmt.Sprintf("commit %d", i)}
	}
	return all[0], all[1:]
}

// One +25% commit among six is named, in at most Estimate gates, each in
// its own directory, with a progress call as each starts and ends.
func TestRunFindsTheCommit(t *testing.T) {
	good, cs := history(6)
	level := []float64{10, 10.2, 10.1, 12.6, 12.7, 12.6, 12.8} // commit 3 is +25%
	var ran []string
	var progress []string
	o, err := bisect.Run(context.Background(), bisect.Config{Good: good, Commits: cs, Out: "/out",
		Progress: func(g bisect.Gate, est int, done bool) {
			progress = append(progress, fmt.Sprintf("%d/%d %v %s", g.K, est, done, g.Call))
		}}, fakeGates(t, append([]bisect.Commit{good}, cs...), level, &ran))
	if err != nil {
		t.Fatal(err)
	}
	if o.Answer != bisect.Found || o.Commit == nil || o.Commit.Subject != "commit 3" {
		t.Fatalf("answer %s %+v, want found commit 3", o.Answer, o.Commit)
	}
	if len(ran) > o.Estimate || strings.Join(ran, " ") != "0..3 0..1 0..2 2..3" {
		t.Errorf("gates %v (estimate %d), want 0..3 0..1 0..2 2..3", ran, o.Estimate)
	}
	if g := o.Gates[0]; g.Dir != filepath.Join("/out", "gate-1-"+cs[2].SHA[:12]) || g.Call != bisect.Regressed || g.Lead == nil || math.Abs(g.Lead.Ratio-1.26) > 1e-9 {
		t.Errorf("gate 1: %+v", g)
	}
	if len(progress) != 2*len(ran) || progress[0] != "1/4 false " || progress[1] != "1/4 true regressed" {
		t.Errorf("progress %v", progress)
	}
}

// Creep: five +4% commits against a 10% tolerance are not attributable.
func TestRunCreepIsNotAttributable(t *testing.T) {
	good, cs := history(5)
	level := []float64{100, 104, 108.2, 112.5, 117, 121.7}
	var ran []string
	o, err := bisect.Run(context.Background(), bisect.Config{Good: good, Commits: cs}, fakeGates(t, append([]bisect.Commit{good}, cs...), level, &ran))
	if err != nil {
		t.Fatal(err)
	}
	if o.Answer != bisect.NotAttributable || o.Commit.Subject != "commit 3" || len(o.Gates) != 3 {
		t.Fatalf("answer %s at %+v after %d gates (%v), want not attributable at commit 3 after 3", o.Answer, o.Commit, len(o.Gates), ran)
	}
	if p, ok := o.Parent(*o.Commit); !ok || p.Subject != "commit 2" {
		t.Errorf("parent %+v %v", p, ok)
	}
}

// A gate that ends without a verdict (interrupted) stops the bisection with
// its error's kind, and the outcome keeps the gates before it.
func TestRunStopsOnAGateError(t *testing.T) {
	good, cs := history(4)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	o, err := bisect.Run(ctx, bisect.Config{Good: good, Commits: cs}, func(ctx context.Context, base, head, dir string) (verdict.Verdict, error) {
		n++
		if n == 2 {
			cancel()
			return verdict.Verdict{}, rounds.Unusablef("gate: interrupted: %w", ctx.Err())
		}
		c := verdict.Comparison{Workload: "a", Metric: "p95", Ratio: 1.3, Value: verdict.Regression}
		return verdict.Verdict{Value: verdict.Regression, Workloads: []verdict.WorkloadVerdict{{Workload: "a", Comparisons: []verdict.Comparison{c}}}}, nil
	})
	if !errors.Is(rounds.KindOf(err), rounds.ErrUnusable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want unusable and canceled", err)
	}
	if n != 2 || len(o.Gates) != 2 || o.Gates[1].Error == "" || o.Answer != "" || o.Error == "" {
		t.Errorf("%d gates run, outcome %+v", n, o)
	}
	// A context ended before a gate starts runs none.
	_, err = bisect.Run(ctx, bisect.Config{Good: good, Commits: cs}, func(context.Context, string, string, string) (verdict.Verdict, error) {
		t.Fatal("a gate ran after the context ended")
		return verdict.Verdict{}, nil
	})
	if !errors.Is(rounds.KindOf(err), rounds.ErrUnusable) {
		t.Errorf("err %v, want unusable", err)
	}
}

// Regression: a gate interrupted mid-load returns an unusable verdict and
// no error; the bisection went on as if it were inconclusive (exit 1). It
// stops as unusable (exit 3), as loadgate gate does.
func TestRunStopsOnAnUnusableVerdict(t *testing.T) {
	good, cs := history(4)
	o, err := bisect.Run(context.Background(), bisect.Config{Good: good, Commits: cs}, func(context.Context, string, string, string) (verdict.Verdict, error) {
		return verdict.Verdict{Value: verdict.Unusable, Notes: []verdict.Note{{Code: verdict.NoteInterrupted}}}, nil
	})
	if !errors.Is(rounds.KindOf(err), rounds.ErrUnusable) || len(o.Gates) != 1 || o.Gates[0].Verdict != verdict.Unusable || o.Answer != "" {
		t.Errorf("err %v, outcome %+v; want unusable after one gate, no answer", err, o)
	}
}

// The clock seam times each gate.
func TestRunTimesGates(t *testing.T) {
	good, cs := history(1)
	now := time.Unix(0, 0)
	o, _ := bisect.Run(context.Background(), bisect.Config{Good: good, Commits: cs, Now: func() time.Time { now = now.Add(90 * time.Second); return now }},
		func(context.Context, string, string, string) (verdict.Verdict, error) { return verdict.Verdict{}, nil })
	if len(o.Gates) != 1 || o.Gates[0].Seconds != 90 || o.Answer != bisect.Stopped {
		t.Errorf("%+v", o)
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "commit.gpgsign=false"}, args...)...)
	c.Dir = dir
	c.Env = append(c.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Range lists bad's first parents after good, oldest first, and refuses
// (exit 2) what cannot be bisected, naming the flag.
func TestRange(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	for i := 0; i < 4; i++ {
		git(t, dir, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("c%d", i))
	}
	git(t, dir, "tag", "v1", "HEAD~3")
	// A side branch merged into main: its commit is not a first parent.
	git(t, dir, "checkout", "-q", "-b", "side", "HEAD~1")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "side")
	git(t, dir, "checkout", "-q", "main")
	git(t, dir, "merge", "-q", "--no-ff", "-m", "merge side", "side")

	good, cs, err := bisect.Range(context.Background(), dir, "v1", "main")
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, c := range cs {
		subjects = append(subjects, c.Subject)
	}
	if good.Subject != "c0" || strings.Join(subjects, ",") != "c1,c2,c3,merge side" {
		t.Errorf("good %s, range %v; want c0, c1,c2,c3,merge side", good.Subject, subjects)
	}
	for _, c := range []struct{ good, bad, want string }{
		{"", "main", "--good REF is required"},
		{"v1", "", "--bad REF is required"},
		{"nope", "main", `--good "nope" is not a commit`},
		{"v1", "v1", "same commit"},
		{"main", "v1", "is not an ancestor"},
		{"side", "main", "first-parent history"},
	} {
		_, _, err := bisect.Range(context.Background(), dir, c.good, c.bad)
		if !errors.Is(rounds.KindOf(err), rounds.ErrUsage) || !strings.Contains(fmt.Sprint(err), c.want) {
			t.Errorf("Range(%q, %q): %v, want usage error with %q", c.good, c.bad, err, c.want)
		}
	}
}
