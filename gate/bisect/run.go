package bisect

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Schema versions bisect.json.
const Schema = "loadgate/bisect/v1"

// gitBound bounds each git call of Range.
const gitBound = time.Minute

// Commit is one commit of the range.
type Commit struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject"`
}

// Gate is one gate a bisection ran.
type Gate struct {
	K       int                 `json:"k"` // 1-based
	Pair    Pair                `json:"pair"`
	Base    Commit              `json:"base"`
	Head    Commit              `json:"head"`
	Dir     string              `json:"dir"` // its results directory (report.md, verdict.json, rounds)
	Verdict verdict.Value       `json:"verdict"`
	Call    Call                `json:"call"`
	Lead    *verdict.Comparison `json:"lead,omitempty"` // the comparison that decided it
	Seconds float64             `json:"seconds"`
	Error   string              `json:"error,omitempty"` // the gate ended without a verdict
}

// Outcome is a bisection: its range, its gates and its answer.
type Outcome struct {
	Schema    string   `json:"schema"`
	Good      Commit   `json:"good"`
	Bad       Commit   `json:"bad"`
	N         int      `json:"commits"`             // commits after good, bad included
	Estimate  int      `json:"estimate"`            // the most gates it could take
	Workloads []string `json:"workloads,omitempty"` // the workloads a call looks at (all when empty)
	Gates     []Gate   `json:"gates"`
	Answer    Answer   `json:"answer,omitempty"` // empty: stopped by an error (Error)
	// Commit: Found, NotAttributable (the first commit whose cumulative change is a regression).
	Commit *Commit `json:"commit,omitempty"`
	// Lo and Hi bound the range left: the first regressed commit is after Lo, at most Hi.
	Lo    Commit `json:"lo"`
	Hi    Commit `json:"hi"`
	Left  int    `json:"left"`            // commits in (Lo, Hi]
	Error string `json:"error,omitempty"` // what stopped it: interrupted, a gate unusable
	// commits: good, then the range oldest first (first parents); not written.
	commits []Commit
}

// GateFunc runs one ordinary gate of head against base with its results in
// dir; the error is for no verdict (its kind decides the exit code).
type GateFunc func(ctx context.Context, base, head, dir string) (verdict.Verdict, error)

// Config is one bisection.
type Config struct {
	Good      Commit
	Commits   []Commit // after Good, oldest first, the bad commit last (Range)
	Out       string   // gate k's results go to Out/gate-<k>-<head12>
	Workloads []string // the workloads a gate's call looks at; all when empty
	Now       func() time.Time
	// Progress is told of each gate as it starts (no verdict yet) and ends.
	Progress func(g Gate, est int, done bool)
}

// Run bisects: it runs the gates Next asks for until it answers, a gate
// fails or ctx ends. The outcome holds what was known even on error.
func Run(ctx context.Context, cfg Config, gate GateFunc) (Outcome, error) {
	n := len(cfg.Commits)
	if n == 0 {
		return Outcome{}, rounds.Usagef("bisect: no commit between good and bad")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	o := Outcome{Schema: Schema, Good: cfg.Good, Bad: cfg.Commits[n-1], N: n, Estimate: Estimate(n), Workloads: cfg.Workloads,
		commits: append([]Commit{cfg.Good}, cfg.Commits...)}
	var calls []Call
	for {
		d, err := Next(n, calls)
		if err != nil {
			return o, err
		}
		o.set(d)
		if d.Next == nil {
			return o, nil
		}
		if err := ctx.Err(); err != nil {
			o.Error = "interrupted"
			return o, rounds.Unusablef("bisect: interrupted before gate %d: %w", len(o.Gates)+1, err)
		}
		g := Gate{K: len(o.Gates) + 1, Pair: *d.Next, Base: o.commits[d.Next.Base], Head: o.commits[d.Next.Head]}
		g.Dir = filepath.Join(cfg.Out, fmt.Sprintf("gate-%d-%s", g.K, result.ShortHash(g.Head.SHA)))
		if cfg.Progress != nil {
			cfg.Progress(g, o.Estimate, false)
		}
		start := now()
		v, err := gate(ctx, g.Base.SHA, g.Head.SHA, g.Dir)
		g.Seconds = now().Sub(start).Seconds()
		if err == nil && v.Value == verdict.Unusable { // an interrupted or failed gate: exit 3, as loadgate gate's
			g.Verdict = v.Value
			err = rounds.Unusable(&rounds.NotesError{Op: "gate", Notes: v.Notes})
		}
		if err != nil {
			g.Error, o.Error = err.Error(), err.Error()
			o.Gates = append(o.Gates, g)
			if cfg.Progress != nil {
				cfg.Progress(g, o.Estimate, true)
			}
			return o, fmt.Errorf("bisect: gate %d (%s against %s): %w", g.K, result.ShortHash(g.Head.SHA), result.ShortHash(g.Base.SHA), err)
		}
		g.Verdict = v.Value
		g.Call, g.Lead = Classify(v, cfg.Workloads)
		o.Gates = append(o.Gates, g)
		calls = append(calls, g.Call)
		if cfg.Progress != nil {
			cfg.Progress(g, o.Estimate, true)
		}
	}
}

// set records d's answer and range.
func (o *Outcome) set(d Decision) {
	o.Answer, o.Lo, o.Hi, o.Left = d.Answer, o.commits[d.Lo], o.commits[d.Hi], d.Hi-d.Lo
	o.Commit = nil
	if d.Answer == Found || d.Answer == NotAttributable {
		c := o.commits[d.Commit]
		o.Commit = &c
	}
}

// Parent is the commit before c in the range (good for the first), if c is in it.
func (o Outcome) Parent(c Commit) (Commit, bool) {
	for i := 1; i < len(o.commits); i++ {
		if o.commits[i].SHA == c.SHA {
			return o.commits[i-1], true
		}
	}
	return Commit{}, false
}

// Range resolves good and bad in the repository at dir and lists the
// commits after good up to bad along bad's first parents, oldest first.
// Refusals (ErrUsage): a ref that is no commit, good not among bad's
// first-parent ancestors, good equal to bad.
func Range(ctx context.Context, dir, good, bad string) (Commit, []Commit, error) {
	ctx, cancel := context.WithTimeout(ctx, gitBound)
	defer cancel()
	resolve := func(flag, ref string) (string, error) {
		if ref == "" {
			return "", rounds.Usagef("bisect: %s REF is required (see loadgate bisect -h)", flag)
		}
		sha, err := rounds.Git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
		if err != nil || sha == "" {
			return "", rounds.Usagef("bisect: %s %q is not a commit of this repository (fetch it, or the tags, first: actions/checkout with fetch-depth: 0)", flag, ref)
		}
		return sha, nil
	}
	g, err := resolve("--good", good)
	if err != nil {
		return Commit{}, nil, err
	}
	b, err := resolve("--bad", bad)
	if err != nil {
		return Commit{}, nil, err
	}
	if g == b {
		return Commit{}, nil, rounds.Usagef("bisect: --good %s and --bad %s are the same commit %s: nothing to bisect", good, bad, result.ShortHash(g))
	}
	if _, err := rounds.Git(ctx, dir, "merge-base", "--is-ancestor", g, b); err != nil {
		return Commit{}, nil, rounds.Usagef("bisect: --good %s is not an ancestor of --bad %s: a bisection looks for the commit that made bad slower than good", good, bad)
	}
	out, err := rounds.Git(ctx, dir, "log", "--first-parent", "--reverse", "--format=%H%x1f%P%x1f%s", g+".."+b)
	if err != nil {
		return Commit{}, nil, rounds.Unusablef("bisect: %w", err)
	}
	var cs []Commit
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.SplitN(line, "\x1f", 3)
		if len(f) != 3 {
			continue
		}
		if parents := strings.Fields(f[1]); len(cs) == 0 && (len(parents) == 0 || parents[0] != g) {
			return Commit{}, nil, rounds.Usagef("bisect: --good %s is not on --bad %s's first-parent history (git log --first-parent %s): pick a good commit that is", good, bad, bad)
		}
		cs = append(cs, Commit{SHA: f[0], Subject: f[2]})
	}
	if len(cs) == 0 {
		return Commit{}, nil, rounds.Unusablef("bisect: git log %s..%s listed no commit", good, bad)
	}
	gs, _ := rounds.Git(ctx, dir, "log", "-1", "--format=%s", g)
	return Commit{SHA: g, Subject: gs}, cs, nil
}
