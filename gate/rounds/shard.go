package rounds

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// A shard is one runner's share of a gate's rounds (--shard K/N), with no
// verdict; Merge pools the shards' rounds. A round's head/base ratio is
// measured on one runner, so a runner faster or slower as a whole cancels.

// ShardSchema is the schema of shard.json.
const ShardSchema = "loadgate/shard/v1"

const ShardFile = "shard.json"

// Shard is K of N (1 ≤ K ≤ N); the zero Shard is no shard.
type Shard struct {
	K, N int
}

// MaxShards bounds N: more runners than rounds split nothing.
const MaxShards = 64

func (s Shard) On() bool { return s.N > 0 }

func (s Shard) String() string {
	if !s.On() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// ParseShard reads "K/N" ("" is no shard), for --shard and the Action alike.
func ParseShard(v string) (Shard, error) {
	if v == "" {
		return Shard{}, nil
	}
	ks, ns, ok := strings.Cut(v, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil || n < 1 || n > MaxShards || k < 1 || k > n {
		return Shard{}, fmt.Errorf("want K/N with 1 ≤ K ≤ N ≤ %d, e.g. 1/2, not %q", MaxShards, v)
	}
	return Shard{K: k, N: n}, nil
}

// Set and String make *Shard a flag.Value.
func (s *Shard) Set(v string) error {
	p, err := ParseShard(v)
	if err == nil {
		*s = p
	}
	return err
}

func (s Shard) share(total int) int {
	n := total / s.N
	if s.K <= total%s.N {
		n++
	}
	return n
}

// validateShard splits the rounds among the shards (sequential: ⌈MaxRounds/N⌉,
// even, each). A shard takes no looks: only the merge judges.
func (c *Config) validateShard() error {
	if !c.Shard.On() || c.shardSplit {
		return nil
	}
	if _, isBaseline := c.baseline(); isBaseline {
		return Usagef("gate: --shard splits a gate of base and head rounds, not --against %s", c.Against)
	}
	if !c.Auto {
		if c.Rounds < c.Shard.N {
			return Usagef("gate: --rounds %d cannot be split over %d shards: give each shard at least one round", c.Rounds, c.Shard.N)
		}
		c.Rounds, c.shardSplit = c.Shard.share(c.Rounds), true
		return nil
	}
	m := (c.MaxRounds + c.Shard.N - 1) / c.Shard.N
	c.MaxRounds, c.shardSplit = max(m+m%2, 2), true
	return nil
}

// ShardPolicy is what every shard of one gate must share, besides the
// scenario's hash and the commits.
type ShardPolicy struct {
	Tolerance        float64 `json:"tolerance"`
	ToleranceFloorMs float64 `json:"tolerance_floor_ms,omitempty"`
	Confidence       float64 `json:"confidence"`
	Percentile       string  `json:"percentile"`
	Estimator        string  `json:"estimator"`
	Duet             bool    `json:"duet"`
	Auto             bool    `json:"auto"`
	Rounds           int     `json:"rounds,omitempty"`     // fixed rounds: this shard's share
	MaxRounds        int     `json:"max_rounds,omitempty"` // sequential: this shard's most
	Scale            float64 `json:"scale"`
}

func (p ShardPolicy) same(o ShardPolicy) string {
	switch {
	case p.Tolerance != o.Tolerance:
		return fmt.Sprintf("tolerance %g vs %g", p.Tolerance, o.Tolerance)
	case p.ToleranceFloorMs != o.ToleranceFloorMs:
		return fmt.Sprintf("tolerance floor %g ms vs %g ms", p.ToleranceFloorMs, o.ToleranceFloorMs)
	case p.Confidence != o.Confidence:
		return fmt.Sprintf("confidence %g vs %g", p.Confidence, o.Confidence)
	case p.Percentile != o.Percentile:
		return fmt.Sprintf("percentile %q vs %q", p.Percentile, o.Percentile)
	case p.Estimator != o.Estimator:
		return fmt.Sprintf("estimator %q vs %q", p.Estimator, o.Estimator)
	case p.Duet != o.Duet:
		return fmt.Sprintf("duet %t vs %t", p.Duet, o.Duet)
	case p.Auto != o.Auto:
		return fmt.Sprintf("sequential rounds %t vs %t", p.Auto, o.Auto)
	case p.Scale != o.Scale:
		return fmt.Sprintf("scale %g vs %g", p.Scale, o.Scale)
	}
	return ""
}

// Shard statuses.
const (
	ShardOK      = "ok"      // its rounds completed
	ShardFailed  = "failed"  // it stopped with an error; its rounds are not used
	ShardMissing = "missing" // no record of it arrived (Merge only)
)

type ShardSide struct {
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
}

// ShardNoise is the shard's own round-to-round spread of one comparison (verdict.RoundSD).
type ShardNoise struct {
	Phase    string  `json:"phase"`
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	RoundSD  float64 `json:"round_sd"`
}

// ShardRecord is shard.json; its rounds are OUT/<side>/round-<i>/result.json.
type ShardRecord struct {
	Schema      string          `json:"schema"`
	Shard       string          `json:"shard"` // "K/N"
	Status      string          `json:"status"`
	Error       string          `json:"error,omitempty"`
	ToolVersion string          `json:"tool_version"`
	Scenario    result.Scenario `json:"scenario"`
	Base        ShardSide       `json:"base"`
	Head        ShardSide       `json:"head"`
	Policy      ShardPolicy     `json:"policy"`
	Rounds      int             `json:"rounds"` // paired rounds complete on both sides
	Started     time.Time       `json:"started"`
	WallS       float64         `json:"wall_s"`
	Machine     result.Machine  `json:"machine"`
	Topology    result.Topology `json:"topology"`
	Noise       []ShardNoise    `json:"noise"`
	Notes       []verdict.Note  `json:"notes"`
	// Unusable: the workflow change the shard's gate found (head's, so the
	// merge is unusable too); any other unusable gate is a failed shard.
	Unusable []verdict.Note `json:"unusable,omitempty"`
}

// ShardInfo is one shard as a merged gate states it.
type ShardInfo struct {
	Shard    Shard           `json:"-"`
	Name     string          `json:"shard"` // "K/N"
	Status   string          `json:"status"`
	Error    string          `json:"error,omitempty"`
	Rounds   int             `json:"rounds"` // paired rounds it gave the merge
	WallS    float64         `json:"wall_s,omitempty"`
	Machine  result.Machine  `json:"machine"`
	Topology result.Topology `json:"topology"`
	Dir      string          `json:"-"`
}

// ToolVersion is version with the build's VCS revision, so shards of
// different "dev" builds are told apart.
func ToolVersion(version string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return version + "+" + result.ShortHash(s.Value)
			}
		}
	}
	return version
}

func (g *gate) policy() ShardPolicy {
	p := ShardPolicy{Tolerance: g.cfg.Compare.Tolerance, ToleranceFloorMs: float64(g.cfg.Compare.ToleranceFloor) / float64(time.Millisecond), Confidence: g.cfg.Compare.Confidence, Percentile: g.cfg.Compare.Percentile,
		Estimator: g.cfg.Compare.Estimator, Duet: g.cfg.Duet, Auto: g.cfg.Auto, Scale: g.cfg.Scale}
	if g.cfg.Auto {
		p.MaxRounds = g.cfg.MaxRounds
	} else {
		p.Rounds = g.cfg.Rounds
	}
	return p
}

// writeShard writes OUT/shard.json; runErr is what ended the shard (nil: done).
func (g *gate) writeShard(gr Outcome, runErr error) error {
	if g.cfg.Out == "" {
		return runErr
	}
	rec := ShardRecord{Schema: ShardSchema, Shard: g.cfg.Shard.String(), Status: ShardOK, ToolVersion: g.cfg.ToolVersion,
		Scenario: gr.Scenario, Policy: g.policy(), Started: g.start, WallS: g.d.Now().Sub(g.start).Seconds(),
		Base: ShardSide{Ref: gr.Base.Ref, Commit: gr.Base.Commit}, Head: ShardSide{Ref: gr.Head.Ref, Commit: gr.Head.Commit},
		Noise: []ShardNoise{}, Notes: append([]verdict.Note{}, gr.Notes...)}
	rec.Rounds = min(len(gr.Base.Results), len(gr.Head.Results))
	if gr.Verdict.Value == verdict.Unusable {
		for _, n := range gr.Verdict.Notes {
			if n.Code == verdict.NoteWorkflowChanged {
				rec.Unusable = append(rec.Unusable, n)
			} else if rec.Error == "" { // interrupted, rounds incomplete: its own failure
				rec.Status, rec.Error = ShardFailed, oneLine(g.d.Words.Note(n))
			}
		}
	}
	if runErr != nil {
		rec.Status, rec.Error = ShardFailed, oneLine(runErr.Error())
	}
	if rec.Rounds > 0 {
		r := gr.Head.Results[0]
		rec.Machine, rec.Topology = r.Machine, r.Topology
	}
	if rec.Rounds >= 2 && runErr == nil {
		if v, err := verdict.Compare(gr.Base.Results[:rec.Rounds], gr.Head.Results[:rec.Rounds], g.compareOptions()); err == nil {
			for _, wv := range v.Workloads {
				for _, c := range wv.Comparisons {
					if sd := verdict.RoundSD(c); sd > 0 {
						rec.Noise = append(rec.Noise, ShardNoise{Phase: c.Phase, Workload: c.Workload, Metric: c.Metric, RoundSD: sd})
					}
				}
			}
		}
	}
	if err := outfile.Results(g.cfg.Out); err != nil {
		return errors.Join(runErr, Unusable(err))
	}
	err := outfile.Write(filepath.Join(g.cfg.Out, ShardFile), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rec)
	})
	if err != nil && runErr == nil {
		return Unusable(err)
	}
	return runErr
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ReadShard reads dir/shard.json (ErrUsage when it is not a shard record).
func ReadShard(dir string) (*ShardRecord, error) {
	b, err := os.ReadFile(filepath.Join(dir, ShardFile))
	if err != nil {
		return nil, Usagef("merge: %s: not a shard's results (no %s): %w", dir, ShardFile, err)
	}
	var rec ShardRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, Usagef("merge: %s: %w", filepath.Join(dir, ShardFile), err)
	}
	if rec.Schema != ShardSchema {
		return nil, Usagef("merge: %s: schema %q, want %q", filepath.Join(dir, ShardFile), rec.Schema, ShardSchema)
	}
	return &rec, nil
}
