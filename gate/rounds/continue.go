package rounds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// A re-run of a gate of the same base, head, scenario and policy
// (Config.Continue) continues the earlier attempt's rounds as the first looks
// of one sequential test instead of starting a fresh one: a regression cannot
// be re-run until one attempt's fresh data alone reads inconclusive.
//
// The continued test is the group-sequential plan of the earlier rounds plus
// what this attempt's budget allows, its looks at the same rounds (4, 6, …):
// its boundaries spend α over all of them, the earlier looks included, so
// combined it is one test at the gate's confidence. Its earlier looks are
// replayed first at this plan's (stricter) levels, and a look that decides
// there ends the gate with no new round. The earlier attempt's own verdict,
// judged at the levels of its smaller plan, is superseded, not added to.

// AttemptSchema is the schema of attempt.json.
const AttemptSchema = "loadgate/attempt/v1"

// AttemptFile is the record of the rounds in a Continue directory; the
// rounds are DIR/<side>/round-<i>/result.json.
const AttemptFile = "attempt.json"

// AttemptRecord is attempt.json: what the rounds in its directory are of.
type AttemptRecord struct {
	Schema      string          `json:"schema"`
	ToolVersion string          `json:"tool_version"`
	Scenario    result.Scenario `json:"scenario"`
	Base        ShardSide       `json:"base"`
	Head        ShardSide       `json:"head"`
	Policy      ShardPolicy     `json:"policy"`
	RunID       string          `json:"run_id,omitempty"` // the CI run of every attempt (Config.RunID)
	Rounds      int             `json:"rounds"`           // paired rounds, complete on both sides
	Attempts    int             `json:"attempts"`         // the gate attempts they span
	Value       verdict.Value   `json:"value"`            // the last attempt's verdict
}

// Continued is what a gate took from an earlier attempt (Outcome.Continued).
type Continued struct {
	Rounds   int    `json:"rounds"`   // the earlier paired rounds, the first of this gate
	Attempts int    `json:"attempts"` // the earlier attempts they span
	Dir      string `json:"-"`
	Replayed bool   `json:"replayed"` // an earlier look decided: no new round ran
}

// loadEarlier reads the earlier attempt's rounds from cfg.Continue when they
// are of this gate's base, head, scenario and policy; otherwise it notes why
// not and the gate starts afresh. A missing directory is a first attempt.
func (g *gate) loadEarlier(ctx context.Context) error {
	dir := g.cfg.Continue
	if dir == "" || g.base == nil || !g.cfg.Auto || g.cfg.Shard.On() {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, AttemptFile))
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(g.d.Log, "loadgate: no earlier attempt in %s: a fresh sequential test\n", dir)
		return nil
	}
	why := ""
	var rec AttemptRecord
	switch {
	case err != nil:
		why = err.Error()
	case json.Unmarshal(b, &rec) != nil || rec.Schema != AttemptSchema:
		why = fmt.Sprintf("%s is not a %s record", AttemptFile, AttemptSchema)
	default:
		why = g.sameGate(rec)
	}
	var base, head []*result.Result
	if why == "" {
		base, head, err = readShardRounds(ctx, dir, rec.Rounds, 0, 0)
		if err != nil {
			why = err.Error()
		}
	}
	if why == "" {
		why = g.sameRounds(base, head)
	}
	if why != "" {
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteNotContinued, Detail: why})
		fmt.Fprintf(g.d.Log, "loadgate: earlier attempt in %s not continued: %s\n", dir, why)
		return nil
	}
	for i := range base {
		for _, s := range []struct {
			name string
			r    *result.Result
		}{{"base", base[i]}, {"head", head[i]}} {
			p := filepath.Join(g.cfg.Out, s.name, fmt.Sprintf("round-%d", i+1), "result.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return Unusable(err)
			}
			if err := s.r.WriteFile(p); err != nil {
				return Unusable(err)
			}
		}
	}
	g.base.Results, g.head.Results = base, head
	g.earlier = &Continued{Rounds: rec.Rounds, Attempts: rec.Attempts, Dir: dir}
	fmt.Fprintf(g.d.Log, "loadgate: continuing %d paired round(s) of %d earlier attempt(s) from %s as the first looks of one sequential test\n", rec.Rounds, rec.Attempts, dir)
	return nil
}

// sameGate is why rec's rounds are not this gate's ("" when they are).
func (g *gate) sameGate(rec AttemptRecord) string {
	switch {
	case rec.Rounds < 1:
		return "no complete round"
	case rec.Scenario.Hash != g.sc.Hash:
		return fmt.Sprintf("scenario hash %s, this gate's is %s", result.ShortHash(rec.Scenario.Hash), result.ShortHash(g.sc.Hash))
	case rec.Base.Commit != g.base.Commit || rec.Head.Commit != g.head.Commit:
		return fmt.Sprintf("base %s and head %s, this gate's are %s and %s", result.ShortHash(rec.Base.Commit), result.ShortHash(rec.Head.Commit),
			result.ShortHash(g.base.Commit), result.ShortHash(g.head.Commit))
	case rec.RunID != g.cfg.RunID:
		return fmt.Sprintf("of run %q, this is run %q", rec.RunID, g.cfg.RunID)
	case rec.ToolVersion != g.cfg.ToolVersion:
		return fmt.Sprintf("loadgate %s, this is %s", rec.ToolVersion, g.cfg.ToolVersion)
	case g.headDirty():
		return "head is the working tree with uncommitted changes"
	}
	if d := rec.Policy.same(g.policy()); d != "" {
		return d
	}
	return ""
}

// sameRounds checks every earlier result against the gate's sides and load.
func (g *gate) sameRounds(base, head []*result.Result) string {
	for i := range base {
		for _, s := range []struct {
			side   *Side
			r      *result.Result
			commit string
		}{{g.base, base[i], g.base.Commit}, {g.head, head[i], g.head.Commit}} {
			if s.r.Scenario.Hash != g.roundScenario().Hash || (s.r.Commit != "" && s.r.Commit != s.commit) {
				return fmt.Sprintf("%s round %d is of another load or commit", s.side.Name, i+1)
			}
		}
	}
	return ""
}

func (g *gate) headDirty() bool {
	for _, n := range g.notes {
		if n.Code == verdict.NoteHeadDirty {
			return true
		}
	}
	return false
}

// replay takes the continued plan's looks at the earlier rounds, in order;
// true when one of them decides the gate (g.seq is set).
func (g *gate) replay(s *seqLoop) (bool, error) {
	if g.earlier == nil || s == nil {
		return false, nil
	}
	plan := s.plan
	for R := plan.MinRounds; R <= g.earlier.Rounds; R += 2 {
		v, err := verdict.Sequential(g.base.Results[:R], g.head.Results[:R], g.compareOptions(), plan)
		if err != nil {
			return false, Usagef("gate: %w", err)
		}
		d := v.Sequential
		fmt.Fprintf(g.d.Log, "loadgate: look %d/%d after %d earlier rounds (replayed): %s, %d undecided\n", d.Look, d.Looks, R, v.Value, d.Open)
		if d.Decided() {
			g.base.Results, g.head.Results = g.base.Results[:R], g.head.Results[:R]
			g.seq, g.earlier.Replayed = &v, true
			return true, nil
		}
	}
	return false, nil
}

// saveAttempt writes this gate's rounds and attempt.json into cfg.Continue,
// for the next attempt (the Action caches the directory).
func (g *gate) saveAttempt(gr Outcome) error {
	dir := g.cfg.Continue
	n := min(len(gr.Base.Results), len(gr.Head.Results))
	if dir == "" || g.base == nil || !g.cfg.Auto || g.cfg.Shard.On() || n == 0 || g.sc == nil || g.headDirty() {
		return nil
	}
	from, attempts := 0, 1
	if g.earlier != nil {
		from, attempts = g.earlier.Rounds, g.earlier.Attempts+1
	}
	for i := from; i < n; i++ {
		for _, s := range []struct {
			name string
			r    *result.Result
		}{{"base", gr.Base.Results[i]}, {"head", gr.Head.Results[i]}} {
			p := filepath.Join(dir, s.name, fmt.Sprintf("round-%d", i+1), "result.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := s.r.WriteFile(p); err != nil {
				return err
			}
		}
	}
	rec := AttemptRecord{Schema: AttemptSchema, ToolVersion: g.cfg.ToolVersion, Scenario: gr.Scenario, Policy: g.policy(),
		Base: ShardSide{Ref: gr.Base.Ref, Commit: gr.Base.Commit}, Head: ShardSide{Ref: gr.Head.Ref, Commit: gr.Head.Commit},
		RunID: g.cfg.RunID, Rounds: n, Attempts: attempts, Value: gr.Verdict.Value}
	rec.Scenario.Hash = g.sc.Hash
	return outfile.Write(filepath.Join(dir, AttemptFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	})
}
