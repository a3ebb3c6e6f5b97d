package rounds

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// MergeConfig is `loadgate merge DIR...`: the shards' results directories.
type MergeConfig struct {
	Dirs []string
	// Out is the merged gate's results directory (default
	// loadgate-out/merge-<time>); one holding a result needs Replace.
	Out       string
	Replace   bool
	MinShards int // fewer shards with rounds than this make the merge unusable (0: DefaultMinShards(N))
	Log       io.Writer
}

// DefaultMinShards is the fewest shards a merge judges on: half of N, rounded
// up, so that what little arrived is never a pass.
func DefaultMinShards(n int) int { return (n + 1) / 2 }

// Merge pools the shards' paired rounds into one gate and judges it once
// (verdict.Gate), so no α was spent on earlier looks. Shards of other
// scenarios, commits, policies or tool versions are refused (ErrUsage); a
// failed or missing shard is noted and the gate judged on the others, or
// unusable below MinShards.
func Merge(ctx context.Context, cfg MergeConfig) (Outcome, string, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if len(cfg.Dirs) == 0 {
		return Outcome{}, "", Usagef("merge: no shard directories given (loadgate merge DIR...)")
	}
	if cfg.Out == "" {
		cfg.Out = filepath.Join("loadgate-out", "merge-"+time.Now().Format("20060102-150405"))
	}
	if err := outfile.Dir(cfg.Out, cfg.Replace, "--force"); err != nil {
		return Outcome{}, "", Usagef("merge: --out %w", err)
	}
	gr, err := merge(ctx, cfg)
	return gr, cfg.Out, err
}

// ShardDirs is root when it holds a shard's record, else its subdirectories
// that do (one per downloaded artifact); none is ErrUnusable.
func ShardDirs(root string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(root, ShardFile)); err == nil {
		return []string{root}, nil
	}
	dirs, err := filepath.Glob(filepath.Join(root, "*", ShardFile))
	if err != nil || len(dirs) == 0 {
		return nil, Unusablef("merge: no shard's results (%s) in %s: every shard failed before writing them, or their artifacts were not downloaded there", ShardFile, root)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs, nil
}

func merge(ctx context.Context, cfg MergeConfig) (Outcome, error) {
	recs, err := readShards(cfg.Dirs)
	if err != nil {
		return Outcome{}, err
	}
	shards, err := checkShards(cfg.Dirs, recs)
	if err != nil {
		return Outcome{}, err
	}
	n := shards[0].N
	minShards := cfg.MinShards
	if minShards == 0 {
		minShards = DefaultMinShards(n)
	}
	if minShards < 1 || minShards > n {
		return Outcome{}, Usagef("merge: --min-shards must be from 1 to %d (the shards' N), not %d", n, cfg.MinShards)
	}
	ref := recs[0]
	for _, r := range recs {
		if r.Status == ShardOK {
			ref = r
			break
		}
	}
	gr := Outcome{Scenario: ref.Scenario,
		Base: SideResults{Name: "base", Ref: ref.Base.Ref, Commit: ref.Base.Commit},
		Head: SideResults{Name: "head", Ref: ref.Head.Ref, Commit: ref.Head.Commit}}
	unusable := gr.addShards(ctx, cfg.Dirs, recs, shards, n)
	gr.Rounds = len(gr.Head.Results)
	given := 0
	for _, s := range gr.Shards {
		if s.Status == ShardOK && s.Rounds > 0 {
			given++
		}
	}
	fmt.Fprintf(cfg.Log, "loadgate: merge: %d of %d shard(s) gave %d paired round(s)\n", given, n, gr.Rounds)
	switch {
	case given < minShards:
		gr.Verdict = UnusableVerdict(verdict.Note{Code: verdict.NoteShardsTooFew, Shards: given, MinShards: minShards, Rounds: gr.Rounds, Shard: fmt.Sprintf("%d", n)})
	default:
		p := ref.Policy
		v, err := verdict.Gate(gr.Base.Results, gr.Head.Results, verdict.CompareOptions{Tolerance: p.Tolerance, ToleranceFloor: time.Duration(p.ToleranceFloorMs * float64(time.Millisecond)), Confidence: p.Confidence, Percentile: p.Percentile, Estimator: p.Estimator})
		if err != nil {
			return gr, Usagef("merge: %w", err)
		}
		gr.Verdict = v
	}
	gr.unusableFromShards(unusable)
	return gr, nil
}

func readShards(dirs []string) ([]*ShardRecord, error) {
	recs := make([]*ShardRecord, len(dirs))
	for i, d := range dirs {
		r, err := ReadShard(d)
		if err != nil {
			return nil, err
		}
		recs[i] = r
	}
	return recs, nil
}

// addShards adds shards 1 to n in order (info, notes, rounds) and returns
// the workflow-change notes that make the merge unusable.
func (gr *Outcome) addShards(ctx context.Context, dirs []string, recs []*ShardRecord, shards []Shard, n int) []verdict.Note {
	byK := map[int]int{}
	for i, s := range shards {
		byK[s.K] = i
	}
	var unusable []verdict.Note
	instances := 0 // the instances of the shards merged so far
	for k := 1; k <= n; k++ {
		i, ok := byK[k]
		sh := Shard{K: k, N: n}
		if !ok {
			gr.Shards = append(gr.Shards, ShardInfo{Shard: sh, Name: sh.String(), Status: ShardMissing})
			gr.Notes = append(gr.Notes, verdict.Note{Code: verdict.NoteShardMissing, Shard: sh.String()})
			continue
		}
		rec := recs[i]
		info := ShardInfo{Shard: sh, Name: sh.String(), Status: rec.Status, Error: rec.Error, WallS: rec.WallS, Machine: rec.Machine, Topology: rec.Topology, Dir: dirs[i]}
		for _, note := range rec.Notes {
			gr.Notes = addNote(gr.Notes, note)
		}
		for _, n := range rec.Unusable {
			unusable = addNote(unusable, n)
		}
		if rec.Status == ShardOK {
			base, head, err := readShardRounds(ctx, dirs[i], rec.Rounds, len(gr.Head.Results), instances)
			if err != nil {
				info.Status, info.Error = ShardFailed, oneLine(err.Error())
			} else {
				gr.Base.Results = append(gr.Base.Results, base...)
				gr.Head.Results = append(gr.Head.Results, head...)
				instances = lastInstance(head, instances)
				info.Rounds = len(head)
			}
		}
		if info.Status != ShardOK {
			gr.Notes = append(gr.Notes, verdict.Note{Code: verdict.NoteShardFailed, Shard: sh.String(), Detail: info.Error})
		}
		gr.Shards = append(gr.Shards, info)
	}
	return unusable
}

// unusableFromShards makes the merged verdict unusable when a shard's gate
// found head changing its workflows, noting what it would have been.
func (gr *Outcome) unusableFromShards(unusable []verdict.Note) {
	if len(unusable) == 0 || gr.Verdict.Value == verdict.Unusable {
		return
	}
	for i := range unusable {
		if unusable[i].Code == verdict.NoteWorkflowChanged {
			unusable[i].Was = gr.Verdict.Value
		}
	}
	gr.Notes = append(gr.Notes, gr.Verdict.Notes...)
	gr.Verdict.Value, gr.Verdict.Notes = verdict.Unusable, unusable
}

// checkShards refuses records that cannot be one gate: another N, a shard
// twice, or another scenario, commit, policy or tool version than the first's.
func checkShards(dirs []string, recs []*ShardRecord) ([]Shard, error) {
	shards := make([]Shard, len(recs))
	for i, r := range recs {
		s, err := ParseShard(r.Shard)
		if err != nil || !s.On() {
			return nil, Usagef("merge: %s: shard %q: %v", filepath.Join(dirs[i], ShardFile), r.Shard, err)
		}
		shards[i] = s
	}
	name := func(i int) string { return fmt.Sprintf("shard %s (%s)", recs[i].Shard, dirs[i]) }
	for i := 1; i < len(recs); i++ {
		a, b := recs[0], recs[i]
		diff := ""
		switch {
		case shards[i].N != shards[0].N:
			diff = fmt.Sprintf("a gate of %d shards, not %d", shards[i].N, shards[0].N)
		case b.ToolVersion != a.ToolVersion:
			diff = fmt.Sprintf("loadgate %s, not %s", b.ToolVersion, a.ToolVersion)
		case differs(a.Scenario.Hash, b.Scenario.Hash):
			diff = fmt.Sprintf("scenario hash %s, not %s: same load or no comparison", b.Scenario.Hash, a.Scenario.Hash)
		case differs(a.Base.Commit, b.Base.Commit):
			diff = fmt.Sprintf("base commit %s, not %s", b.Base.Commit, a.Base.Commit)
		case differs(a.Head.Commit, b.Head.Commit):
			diff = fmt.Sprintf("head commit %s, not %s", b.Head.Commit, a.Head.Commit)
		case a.Status == ShardOK && b.Status == ShardOK && a.Policy.same(b.Policy) != "":
			diff = "policy: " + b.Policy.same(a.Policy)
		}
		if diff != "" {
			return nil, Usagef("merge: %s differs from %s: %s", name(i), name(0), diff)
		}
		for j := 0; j < i; j++ {
			if shards[j].K == shards[i].K {
				return nil, Usagef("merge: %s is given twice (also %s)", name(i), dirs[j])
			}
		}
	}
	return shards, nil
}

func differs(a, b string) bool { return a != "" && b != "" && a != b }

// lastInstance is the highest instance in rs, at least k.
func lastInstance(rs []*result.Result, k int) int {
	for _, r := range rs {
		if r.Round != nil {
			k = max(k, r.Round.Instance)
		}
	}
	return k
}

// readShardRounds reads a shard's n paired rounds, numbered from+1 on; its
// instances follow the earlier shards' (another runner's stacks are other
// instances: gate/verdict's instance model).
func readShardRounds(ctx context.Context, dir string, n, from, instFrom int) (base, head []*result.Result, err error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("no complete round")
	}
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		for _, side := range []string{"base", "head"} {
			r, err := result.ReadFile(filepath.Join(dir, side, fmt.Sprintf("round-%d", i), "result.json"))
			if err != nil {
				return nil, nil, err
			}
			if r.Round != nil {
				rd := *r.Round
				rd.Number = from + i
				if rd.Instance > 0 {
					rd.Instance += instFrom
				}
				r.Round = &rd
			}
			if side == "base" {
				base = append(base, r)
			} else {
				head = append(head, r)
			}
		}
	}
	return base, head, nil
}

// addNote appends n unless an equal note is there (every shard repeats the set-up's).
func addNote(ns []verdict.Note, n verdict.Note) []verdict.Note {
	for _, o := range ns {
		if reflect.DeepEqual(o, n) {
			return ns
		}
	}
	return append(ns, n)
}
