package action

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// A gate over a CI matrix: each job runs shard: K/N (its share of the rounds,
// no verdict) and uploads its results; one merge job judges them as one gate.

// readShards reads shard and merge; a job is one or the other.
func readShards(in *Inputs, get func(string) string) error {
	s, err := rounds.ParseShard(get(InShard))
	if err != nil {
		return &InputError{Input: InShard, Value: get(InShard), Err: err}
	}
	in.Shard, in.Merge = s, get(InMerge)
	if in.Shard.On() && in.Merge != "" {
		return inputErr(InMerge, in.Merge, "a job either runs a shard (shard: %s) or merges the shards' results, not both", in.Shard)
	}
	return nil
}

// MergeGate is the merge job's gate: the shards' results under in.Merge (one directory per
// shard, as download-artifact writes them) merged into ResultsDir.
func MergeGate(log io.Writer) GateFunc {
	return func(ctx context.Context, in Inputs) (rounds.Outcome, string, error) {
		dirs, err := rounds.ShardDirs(in.Merge)
		if err != nil {
			return rounds.Outcome{}, "", err
		}
		return rounds.Merge(ctx, rounds.MergeConfig{Dirs: dirs, Out: in.ResultsDir, Replace: true, Log: log})
	}
}

// shardDone ends a shard's step: summary, log and results-dir output, but no
// verdict nor manifest, so nothing is commented. A shard that was unusable exits 3;
// other errors are returned (exit 2).
func (s Step) shardDone(a *githubactions.Action, in Inputs, gr rounds.Outcome, out string, runErr error) (StepResult, error) {
	res := StepResult{FailOn: in.FailOn}
	if runErr != nil && rounds.KindOf(runErr) != rounds.ErrUnusable {
		a.Errorf("%v", runErr)
		return res, runErr
	}
	o := &Outcome{}
	var b bytes.Buffer
	if out != "" {
		report.ShardText(&b, gr, out, in.Shard)
		fmt.Fprint(s.Stderr, b.String())
		if err := writeSummary(a, b.String(), o); err != nil {
			fmt.Fprintln(s.Stderr, "loadgate:", err)
		}
	}
	// The step output shard keeps action.yml's comment step from running.
	if err := setOutputs(a, o, [][2]string{{OutResultsDir, out}, {"shard", in.Shard.String()}}); err != nil {
		fmt.Fprintln(s.Stderr, "loadgate:", err)
	}
	if runErr != nil {
		a.Errorf("loadgate shard %s failed: %v", in.Shard, runErr)
		res.ExitCode = 3
		return res, runErr
	}
	return res, nil
}
