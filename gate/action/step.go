package action

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// Gate runs the gate with in applied, writing under out ("" when it stopped
// first). err is only for no verdict (ErrUsage, ErrUnusable); gr is returned anyway.
type Gate interface {
	Run(ctx context.Context, in Inputs) (gr rounds.Outcome, out string, err error)
}

// GateFunc is a function as a Gate.
type GateFunc func(ctx context.Context, in Inputs) (rounds.Outcome, string, error)

func (f GateFunc) Run(ctx context.Context, in Inputs) (rounds.Outcome, string, error) {
	return f(ctx, in)
}

// Step is `loadgate gate --github`: read inputs and event, mask the scenario's
// ${ENV} values, run the Gate, render once and Publish. It has no token, as
// the Gate runs the pull request's code. Used once, by one goroutine.
type Step struct {
	Gate Gate
	// Reports renders gr into out and returns comment.md's bytes, reused by the summary and comment.
	Reports func(out string, gr rounds.Outcome) ([]byte, error)
	// Trend, when set, is the head's line against the branch's history ("": none).
	Trend     func(ctx context.Context, dir string, gr rounds.Outcome) string
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	Stdout    io.Writer // workflow commands (masks, annotations, outputs' notices)
	Stderr    io.Writer // the log
	Dir       string    // the workspace ("": the current directory), which the scenario input is relative to
	Merge     Gate      // the merge input's gate (MergeGate); nil refuses the input
}

// StepResult is what a step decided.
type StepResult struct {
	Verdict  verdict.Verdict // the gate's, or the unusable verdict of a gate that stopped
	FailOn   FailOn          // the fail-on input
	ExitCode int             // the step's exit code: ExitCode(Verdict, FailOn)
	Outcome  *Outcome        // what Publish did; nil when nothing was published
}

// Run runs the step. Bad inputs are ErrUsage; an unusable gate is published (exit 3), not an
// error; a report not written is. A failure to publish does not change the exit code.
func (s Step) Run(ctx context.Context) (StepResult, error) {
	a := githubactions.New(githubactions.WithWriter(s.Stdout), githubactions.WithGetenv(s.Getenv))
	env, ev, in, err := s.inputs(a)
	if err != nil {
		return StepResult{}, err
	}
	dir := s.Dir
	if dir == "" {
		dir = "."
	}
	onDemandHead(ctx, dir, &ev)
	if keys := PersistedCredentials(ctx, dir); len(keys) > 0 {
		a.Warningf("loadgate: the checkout keeps a token in its git config (%s), within reach of the pull request's code the gate runs; check out with persist-credentials: false", strings.Join(keys, ", "))
	}
	sc := s.maskScenarioEnv(dir, in)
	gate := s.Gate
	if in.Merge != "" { // shard.go
		if gate = s.Merge; gate == nil {
			return StepResult{FailOn: in.FailOn}, rounds.Usagef("gate --github: the merge input needs the merge gate")
		}
	}
	// The stacks' builds and the rounds fold into one group of the log.
	a.Group("loadgate gate: " + in.Scenario + " (stacks and rounds)")
	gr, out, err := gate.Run(ctx, in)
	a.EndGroup()
	if in.Shard.On() {
		return s.shardDone(a, in, gr, out, err)
	}
	if err != nil {
		if rounds.KindOf(err) != rounds.ErrUnusable {
			a.Errorf("%v", err)
			return StepResult{FailOn: in.FailOn}, err
		}
		out = publishUnusable(ctx, dir, &gr, out, err, sc, in, env)
	}
	res := StepResult{Verdict: gr.Verdict, FailOn: in.FailOn, ExitCode: ExitCode(gr.Verdict, in.FailOn)}
	name := scenarioName(gr, sc)
	if code := res.ExitCode; code != gr.Verdict.ExitCode() {
		gr.Notes = append(gr.Notes, verdict.Note{Code: verdict.NoteFailOn, FailOn: string(in.FailOn), ExitCode: code, VerdictExitCode: gr.Verdict.ExitCode()})
	}
	s.accept(ctx, a, dir, env, ev, &gr, &res)
	if gr.Verdict.Value == verdict.Inconclusive {
		a.Warningf("loadgate %s: inconclusive: the difference is within the noise; the report says what would decide it (more rounds, a longer sustain)", name)
	}
	md, err := s.render(ctx, dir, out, gr)
	if err != nil {
		return res, err
	}
	outcome, err := Publish(a, env, ev, in, Publication{
		Scenario: name, ScenarioFile: in.Scenario, Verdict: gr.Verdict, Accepted: gr.Accepted, Markdown: string(md),
		ReportPath: filepath.Join(out, "report.md"), CommentPath: filepath.Join(out, "comment.md"), ResultsDir: out,
		Baseline: BaselineUse(gr.Notes, gr.Verdict.Notes),
	})
	if err != nil {
		fmt.Fprintln(s.Stderr, "loadgate:", err)
	}
	res.Outcome, res.ExitCode = outcome, outcome.ExitCode
	return res, nil
}

// accept applies the accept step's checked label (AcceptedEnv) to a failing verdict of
// the accepted head: the step exits 0 and the reports say who accepted it; the verdict
// is unchanged.
func (s Step) accept(ctx context.Context, a *githubactions.Action, dir string, env *Env, ev Event, gr *rounds.Outcome, res *StepResult) {
	acc, why := acceptedFor(s.Getenv, ev)
	if acc != nil && why == "" {
		why = measuredHead(ctx, dir, env, *gr, acc.HeadSHA)
	}
	switch {
	case why != "":
		a.Warningf("loadgate: %s: not accepted", why)
	case acc == nil:
	case !verdict.Acceptable(gr.Verdict, res.ExitCode):
		a.Infof("loadgate: %s by @%s: nothing to accept (verdict %s, exit %d); only a failing verdict that measured something is accepted", acc.Label, acc.By, gr.Verdict.Value, res.ExitCode)
	default:
		acc.ExitCode, acc.VerdictExitCode = 0, res.ExitCode
		gr.Accepted, res.ExitCode = acc, 0
		a.Noticef("loadgate: %s", report.AcceptedText(*acc))
	}
}

// measuredHead says why the commit the gate measured is not head ("" when it is): the
// gate's head commit (else the checkout's HEAD) must be head, or a merge commit whose
// second parent is head (a pull_request checkout of refs/pull/N/merge). Where git has
// no such commit (a merge job without a checkout), it must be GITHUB_SHA, the merge
// commit GitHub made of this event's head.
func measuredHead(ctx context.Context, dir string, env *Env, gr rounds.Outcome, head string) string {
	measured := gr.Head.Commit
	if measured == "" {
		c, err := rounds.Git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
		if err != nil {
			return fmt.Sprintf("the commit measured is unknown (git rev-parse HEAD: %v)", oneLineReason(err))
		}
		measured = c
	}
	switch {
	case strings.HasSuffix(measured, "+dirty"):
		return fmt.Sprintf("the head measured, %s, had uncommitted changes", result.ShortHash(strings.TrimSuffix(measured, "+dirty")))
	case !shaRE.MatchString(measured):
		return fmt.Sprintf("the commit measured, %q, is not a commit hash", clipName(measured))
	case strings.EqualFold(measured, head):
		return ""
	}
	if p2, err := rounds.Git(ctx, dir, "rev-parse", "--verify", "--end-of-options", measured+"^2"); err == nil {
		if strings.EqualFold(p2, head) {
			return ""
		}
		return fmt.Sprintf("the commit measured, %s, merges %s, not the accepted head %s", result.ShortHash(measured), result.ShortHash(p2), result.ShortHash(head))
	}
	if _, err := rounds.Git(ctx, dir, "cat-file", "-e", "--end-of-options", measured+"^{commit}"); err != nil && env != nil && strings.EqualFold(measured, env.SHA) {
		return "" // GITHUB_SHA: GitHub's merge commit of the event's head, not in this job's git
	}
	return fmt.Sprintf("the commit measured, %s, is not the accepted head %s nor a merge of it", result.ShortHash(measured), result.ShortHash(head))
}

// inputs reads the environment, event and inputs, warning of a token given to this step.
func (s Step) inputs(a *githubactions.Action) (*Env, Event, Inputs, error) {
	if tok := a.GetInput(InToken); tok != "" {
		MaskSecrets(a, tok)
		a.Warningf("loadgate: the gate step was given a github-token, within reach of the pull request's code it runs; give it only to the comment step (loadgate comment --github)")
	}
	env, err := FromEnv(s.Getenv)
	if err != nil {
		return nil, Event{}, Inputs{}, rounds.Usagef("gate --github: %w", err)
	}
	ev, err := ReadEvent(env)
	if err != nil {
		return nil, Event{}, Inputs{}, rounds.Usagef("gate --github: %w", err)
	}
	in, err := ReadInputs(a)
	if err == nil {
		err = in.Resolve(ev)
	}
	if err != nil {
		a.Errorf("%v", err)
		return nil, Event{}, Inputs{}, rounds.Usagef("gate --github: %w", err)
	}
	if in.BaseDefaulted {
		a.Noticef("base: %s, the default branch's tip (no pull request; set the base input to choose another)", in.Base)
	}
	if in.BaseOfPush {
		a.Noticef("base: %s, the branch before this push: the baseline and scenario are read from it (set the base input to choose another)", in.Base)
	}
	return env, ev, in, nil
}

// maskScenarioEnv masks the scenario's ${ENV} values before the gate logs anything.
func (s Step) maskScenarioEnv(dir string, in Inputs) *scenario.Scenario {
	sc, _ := scenario.Load(inDir(dir, in.Scenario), scenario.Options{})
	if sc != nil {
		if vals, err := sc.ResolveEnv(s.LookupEnv); err == nil {
			MaskEnv(s.Stdout, s.Getenv, vals)
		}
	}
	return sc
}

// publishUnusable makes a stopped gate's unusable verdict and returns the directory to publish.
func publishUnusable(ctx context.Context, dir string, gr *rounds.Outcome, out string, err error, sc *scenario.Scenario, in Inputs, env *Env) string {
	gr.Verdict = rounds.ErrorVerdict(oneLineReason(err))
	completeUnusable(ctx, dir, gr, sc, in, env)
	if out == "" {
		out = in.ResultsDir
	}
	_ = outfile.Results(out)
	return out
}

// render writes the reports and returns comment.md's bytes, with the trend line if any.
func (s Step) render(ctx context.Context, dir, out string, gr rounds.Outcome) ([]byte, error) {
	md, err := s.Reports(out, gr)
	if err != nil {
		return md, err
	}
	if s.Trend != nil && gr.Verdict.Value != verdict.Unusable {
		if line := s.Trend(ctx, dir, gr); line != "" {
			md = append(md, "\n"+line+"\n"...)
			if err := outfile.WriteFile(filepath.Join(out, "comment.md"), md); err != nil {
				return md, err
			}
		}
	}
	return md, nil
}

// inDir is p relative to dir, unless p is absolute.
func inDir(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// scenarioName is the comment marker's name whatever the outcome: the judged
// scenario's, else the file's name: field, never a file name; "" when unknown.
func scenarioName(gr rounds.Outcome, sc *scenario.Scenario) string {
	if gr.Scenario.Name != "" {
		return gr.Scenario.Name
	}
	for _, side := range []rounds.SideResults{gr.Head, gr.Base} {
		for _, r := range side.Results {
			if r != nil && r.Scenario.Name != "" {
				return r.Scenario.Name
			}
		}
	}
	if sc != nil {
		return sc.Name
	}
	return ""
}

// completeUnusable fills in the scenario and sides' commits a gate that stopped did not report.
func completeUnusable(ctx context.Context, dir string, gr *rounds.Outcome, sc *scenario.Scenario, in Inputs, env *Env) {
	if gr.Scenario.Name == "" && sc != nil {
		gr.Scenario = result.Scenario{Name: sc.Name, Hash: sc.Hash, File: filepath.ToSlash(in.Scenario)}
	}
	if gr.Head.Commit == "" && len(gr.Head.Results) == 0 {
		gr.Head.Name, gr.Head.Ref = "head", "working tree"
		if c, err := rounds.Git(ctx, dir, "rev-parse", "HEAD"); err == nil {
			gr.Head.Commit = c
		} else if env != nil {
			gr.Head.Commit = env.SHA
		}
	}
	if gr.Base.Commit == "" && len(gr.Base.Results) == 0 {
		switch {
		case in.Baseline != "":
			gr.Base.Name, gr.Base.Ref = "baseline", "baseline:"+in.Baseline
		case in.Base != "":
			gr.Base.Name, gr.Base.Ref, gr.Base.Commit = "base", in.Base, in.Base
			if c, err := rounds.Git(ctx, dir, "rev-parse", "--verify", "--end-of-options", in.Base+"^{commit}"); err == nil {
				gr.Base.Commit = c
			}
		}
	}
}

// oneLineReason is err's message on one line without a final period, for a banner.
func oneLineReason(err error) string {
	s := strings.Join(strings.Fields(report.ErrorText(err)), " ")
	return strings.TrimRight(s, ". ")
}

// PersistedCredentials are the git config keys of dir carrying an HTTP header (a persisted
// checkout token any gate process could read); keys only, none when git cannot tell.
func PersistedCredentials(ctx context.Context, dir string) []string {
	out, err := rounds.Git(ctx, dir, "config", "--includes", "--name-only", "--get-regexp", `^http\..*\.extraheader$`)
	if err != nil || out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}
