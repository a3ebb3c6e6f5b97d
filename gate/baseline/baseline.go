// Package baseline stores results as named baselines beside a repository's
// code and reads result files for `loadgate compare`. Errors carry
// rounds.ErrUsage or ErrUnusable for the exit code.
package baseline

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// SaveOptions is a baseline to store.
type SaveOptions struct {
	Root    string   // the repository root that holds baselines/
	Name    string   // the baseline's name (scenario.ValidName)
	Results []string // result.json files, one per round: merged exactly
	Commit  string   // the commit measured; "": the result's, else git HEAD of Root
}

// Save stores opt.Results, merged, as baseline opt.Name and returns its
// path and content; nothing is written on error.
func Save(ctx context.Context, opt SaveOptions) (path string, saved *result.Result, err error) {
	if len(opt.Results) == 0 || opt.Name == "" {
		return "", nil, rounds.Usagef("--result and --name are required")
	}
	if !scenario.ValidName(opt.Name) {
		return "", nil, rounds.Usagef("--name %q: use %s", clip(opt.Name), scenario.NameRule)
	}
	var merged *result.Result
	for _, p := range opt.Results {
		r, err := result.ReadFile(p)
		if err != nil {
			return "", nil, rounds.Usage(err)
		}
		if r.Round != nil && r.Round.Mode == result.RoundDuet {
			return "", nil, rounds.Usagef("%s: round.mode: %s: a duet round is not comparable with a head run alone, so it cannot be a baseline; store a gate run without --duet, or loadgate run", p, r.Round.Mode)
		}
		if notes := rounds.BrokenResult(r); notes != nil {
			return "", nil, rounds.Unusable(&rounds.NotesError{Op: p + " cannot be a baseline", Notes: notes})
		}
		if !scenario.ValidName(r.Scenario.Name) {
			return "", nil, rounds.Usagef("%s: scenario name %q is not a valid scenario name (%s): refused", p, clip(r.Scenario.Name), scenario.NameRule)
		}
		if merged == nil {
			merged = r
		} else if merged, err = result.Merge(merged, r); err != nil {
			return "", nil, rounds.Usage(err)
		}
	}
	if notes := rounds.BrokenResult(merged); notes != nil {
		return "", nil, rounds.Unusable(&rounds.NotesError{Op: "the merged rounds cannot be a baseline", Notes: notes})
	}
	if opt.Commit != "" {
		merged.Commit = opt.Commit
	} else if merged.Commit == "" {
		if c, err := rounds.Git(ctx, opt.Root, "rev-parse", "HEAD"); err == nil {
			merged.Commit = c
		}
	}
	path, err = rounds.BaselinePath(opt.Root, merged.Scenario.Name, opt.Name)
	if err != nil {
		return "", nil, rounds.Usage(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", nil, rounds.Usage(err)
	}
	if err := rounds.InsideDir(rounds.BaselinesDir(opt.Root), path); err != nil { // now that the directories exist
		return "", nil, rounds.Usage(err)
	}
	if err := merged.WriteFile(path); err != nil {
		return "", nil, rounds.Usage(err)
	}
	return path, merged, nil
}

// CompareOptions are result files to compare: paired rounds, in order.
type CompareOptions struct {
	Bases, Heads []string               // result.json files
	Compare      verdict.CompareOptions // tolerance, confidence, percentile (Noise: read by Compare)
	Dir          string                 // where the calibration is looked for: its repository's root ("": the current directory)
	Log          io.Writer              // told which calibration is used; nil: not told
}

// Compare judges head against base with the gate's statistics and the
// scenario's calibration; a broken result is an unusable verdict.
func Compare(ctx context.Context, opt CompareOptions) (rounds.Outcome, error) {
	if len(opt.Bases) == 0 || len(opt.Heads) == 0 {
		return rounds.Outcome{}, rounds.Usagef("give BASE.json HEAD.json, or --base and --head files")
	}
	b, err := readResults(opt.Bases)
	if err != nil {
		return rounds.Outcome{}, err
	}
	h, err := readResults(opt.Heads)
	if err != nil {
		return rounds.Outcome{}, err
	}
	noise, p, err := Noise(ctx, opt.Dir, b[0].Scenario.Name)
	if err != nil {
		return rounds.Outcome{}, rounds.Usage(err)
	}
	if noise != nil && opt.Log != nil {
		fmt.Fprintf(opt.Log, "loadgate: noise calibration %s (%d pairs)\n", p, noise.Pairs)
	}
	co := opt.Compare
	co.Noise = noise
	v, err := verdict.Gate(b, h, co)
	if err != nil {
		return rounds.Outcome{}, rounds.Usage(err)
	}
	return rounds.Outcome{
		Base:    rounds.SideResults{Name: "base", Ref: strings.Join(opt.Bases, ", "), Commit: b[0].Commit, Results: b},
		Head:    rounds.SideResults{Name: "head", Ref: strings.Join(opt.Heads, ", "), Commit: h[0].Commit, Results: h},
		Verdict: v, // the order of rounds is read from the results (rounds.Outcome.order)
	}, nil
}

func readResults(paths []string) ([]*result.Result, error) {
	var rs []*result.Result
	for _, p := range paths {
		r, err := result.ReadFile(p)
		if err != nil {
			return nil, rounds.Usage(err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// Noise reads dir's repository's calibration of scenarioName and its path (nil: none).
func Noise(ctx context.Context, dir, scenarioName string) (*verdict.Noise, string, error) {
	if dir == "" {
		dir = "."
	}
	root := dir
	if top, err := rounds.Git(ctx, dir, "rev-parse", "--show-toplevel"); err == nil && strings.TrimSpace(top) != "" {
		root = strings.TrimSpace(top)
	}
	if !scenario.ValidName(scenarioName) {
		return nil, "", nil
	}
	n, p, err := rounds.LoadNoise(root, scenarioName)
	if err != nil {
		return nil, p, fmt.Errorf("noise calibration: %w", err)
	}
	return n, p, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
