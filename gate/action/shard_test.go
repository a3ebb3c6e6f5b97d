package action_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/session"
)

// A shard job runs its share with the shard input applied, writes no
// manifest (so no comment step can post one), says in its summary that the
// merge judges, and sets the step output that skips the comment step.
func TestShardStepPublishesNoVerdict(t *testing.T) {
	g := &fakeGate{gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"},
		Base: rounds.SideResults{Results: []*result.Result{{}, {}}}, Head: rounds.SideResults{Results: []*result.Result{{}, {}}}}}
	s := newStep(t, nil, "", g)
	s.r.env[action.InputEnv(action.InShard)] = "2/3"
	g.out = s.r.env[action.InputEnv(action.InResultsDir)]
	if err := os.MkdirAll(g.out, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := s.step.Run(context.Background())
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("shard step: exit %d, %v", res.ExitCode, err)
	}
	if len(g.runs) != 1 || g.runs[0].Shard != (rounds.Shard{K: 2, N: 3}) {
		t.Fatalf("gate run with %+v", g.runs)
	}
	if cfg, _ := g.runs[0].Apply(rounds.Config{}, session.StackOptions{}); cfg.Shard != (rounds.Shard{K: 2, N: 3}) {
		t.Errorf("Apply: shard %v", cfg.Shard)
	}
	if _, err := os.Stat(filepath.Join(g.out, action.ManifestFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shard wrote %s (%v): a comment step could post it", action.ManifestFile, err)
	}
	if len(s.rendered) != 0 {
		t.Errorf("a shard rendered a report")
	}
	if sum := s.r.read(t, s.r.summary); !strings.Contains(sum, "shard 2/3 of demo-api: 2 paired rounds") || !strings.Contains(sum, "no verdict here") {
		t.Errorf("summary:\n%s", sum)
	}
	if out := s.r.outputs(t); out["shard"] != "2/3" || out[action.OutVerdict] != "" {
		t.Errorf("outputs %v: want shard 2/3 and no verdict", out)
	}
}

// A failed shard exits 3 with its error; the merge job states it.
func TestShardStepFailedExitsUnusable(t *testing.T) {
	g := &fakeGate{err: rounds.Unusablef("gate: head side is unusable: build failed")}
	s := newStep(t, nil, "", g)
	s.r.env[action.InputEnv(action.InShard)] = "1/2"
	res, err := s.step.Run(context.Background())
	if rounds.KindOf(err) != rounds.ErrUnusable || res.ExitCode != 3 {
		t.Errorf("failed shard: exit %d, %v; want 3, unusable", res.ExitCode, err)
	}
}

func TestShardAndMergeInputs(t *testing.T) {
	for _, tc := range []struct{ shard, merge, want string }{
		{"1/2", "shards", "not both"},
		{"0/2", "", "want K/N"},
		{"2", "", "want K/N"},
	} {
		s := newStep(t, nil, "", &fakeGate{})
		s.r.env[action.InputEnv(action.InShard)] = tc.shard
		s.r.env[action.InputEnv(action.InMerge)] = tc.merge
		_, err := s.step.Run(context.Background())
		var ie *action.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("shard %q merge %q: %v, want an input error with %q", tc.shard, tc.merge, err, tc.want)
		}
	}
}

// The merge job needs no scenario input: its gate is the merge, published
// as a gate step publishes, and its comment step comments.
func TestMergeStepPublishesAndComments(t *testing.T) {
	f := newFake(t)
	merged := &fakeGate{gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: passing(),
		Shards: []rounds.ShardInfo{{Name: "1/2", Status: rounds.ShardOK, Rounds: 3}, {Name: "2/2", Status: rounds.ShardMissing}}}}
	gate := &fakeGate{}
	s := newStep(t, f, "", gate)
	delete(s.r.env, action.InputEnv(action.InScenario))
	s.r.env[action.InputEnv(action.InMerge)] = t.TempDir()
	merged.out = s.r.env[action.InputEnv(action.InResultsDir)]
	if err := os.MkdirAll(merged.out, 0o755); err != nil {
		t.Fatal(err)
	}
	s.step.Merge = merged
	res := s.run(t)
	if len(gate.runs) != 0 || len(merged.runs) != 1 {
		t.Fatalf("gate ran %d times, merge %d; want the merge only", len(gate.runs), len(merged.runs))
	}
	if res.ExitCode != 0 || res.Outcome.CommentAction != action.Created {
		t.Errorf("merge step: exit %d, comment %q; want 0, created", res.ExitCode, res.Outcome.CommentAction)
	}
	if len(s.rendered) != 1 || len(s.rendered[0].Shards) != 2 {
		t.Errorf("rendered %+v", s.rendered)
	}
}

// The fork commenter's comment, rendered from the merge job's verdict.json,
// says how many runners gave the rounds.
func TestForkCommentOfAMergedGate(t *testing.T) {
	f := &report.GateVerdictFile{VerdictFile: report.VerdictFile{Value: "pass"}, Rounds: 12,
		Shards: []rounds.ShardInfo{{Name: "1/3", Status: rounds.ShardOK, Rounds: 6}, {Name: "2/3", Status: rounds.ShardOK, Rounds: 6}, {Name: "3/3", Status: rounds.ShardFailed}}}
	if c := action.ForkComment(f, "", "", ""); !strings.Contains(c, "over 12 round(s) from 2 of 3 runners") {
		t.Errorf("fork comment:\n%s", c)
	}
}
