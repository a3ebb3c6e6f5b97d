package action

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Gate runs the gate the Action's inputs ask for: the command's gate
// (gate/rounds.Run, wired to git, Docker Compose and the engine) with in
// applied to its settings, its results written under out (in.ResultsDir
// unless the command chose another; "" when it stopped before it had one).
// An error is returned only when no verdict was reached (gate/rounds'
// ErrUsage or ErrUnusable); the report is returned anyway, with what is
// known.
type Gate interface {
	Run(ctx context.Context, in Inputs) (gr rounds.Outcome, out string, err error)
}

// Step is the Action's step, `loadgate gate --github`: the inputs (INPUT_*
// variables) and the event read, the scenario's ${ENV} values masked, the
// gate run (Gate), an unusable gate's report completed with what is known
// anyway (the scenario, both commits, the reason), the report rendered
// once (Reports), and the verdict published (Publish: summary, outputs,
// annotations, the pull request comment). The exit code follows fail-on.
//
// A Step is used once, by one goroutine; its fields are not changed while
// Run runs.
type Step struct {
	Gate Gate
	// Reports renders gr into out (report.md, comment.md, verdict.json,
	// latency.svg; the text report to the log) and returns comment.md's
	// bytes (report.CompareSummary): the step summary and the comment are
	// that rendering, never a re-read. An error is a file that could not
	// be written.
	Reports func(out string, gr rounds.Outcome) ([]byte, error)
	// Getenv and LookupEnv are the process's environment (os.Getenv,
	// os.LookupEnv): the runner's variables, the inputs, the scenario's
	// ${ENV} values.
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	Stdout    io.Writer // workflow commands (masks, annotations, outputs' notices)
	Stderr    io.Writer // the log
	// Dir is the workspace (the repository checked out; "": the current
	// directory): the scenario input is relative to it, and its HEAD is
	// head's commit when the gate stopped before it knew it.
	Dir  string
	HTTP *http.Client // GitHub's API; nil: the default client
}

// StepResult is what a step decided.
type StepResult struct {
	Verdict  verdict.Verdict // the gate's, or the unusable verdict of a gate that stopped
	FailOn   FailOn          // the fail-on input
	ExitCode int             // the step's exit code: ExitCode(Verdict, FailOn)
	Outcome  *Outcome        // what Publish did; nil when nothing was published
}

// Run runs the step. Bad inputs or event (an *InputError among them) are
// refused (ErrUsage, annotated as an error); a gate that stopped as
// refused is returned as is (annotated); an unusable gate is published as
// the unusable verdict (exit 3) and is not an error; a report that could
// not be written is. A failure to publish is logged and does not change
// the exit code.
func (s Step) Run(ctx context.Context) (StepResult, error) {
	a := githubactions.New(githubactions.WithWriter(s.Stdout), githubactions.WithGetenv(s.Getenv))
	env, err := FromEnv(s.Getenv)
	if err != nil {
		return StepResult{}, rounds.Usagef("gate --github: %w", err)
	}
	ev, err := ReadEvent(env)
	if err != nil {
		return StepResult{}, rounds.Usagef("gate --github: %w", err)
	}
	in, err := ReadInputs(a)
	if err == nil {
		err = in.Resolve(ev)
	}
	if err != nil {
		a.Errorf("%v", err)
		return StepResult{}, rounds.Usagef("gate --github: %w", err)
	}
	dir := s.Dir
	if dir == "" {
		dir = "."
	}

	// The scenario file as the workspace has it: the name of last resort
	// (scenarioName), and the ${ENV} values it resolves, masked before the
	// gate logs anything. (The gate masks the scenario it runs too.)
	sc, _ := scenario.Load(inDir(dir, in.Scenario), scenario.Options{})
	if sc != nil {
		if vals, err := sc.ResolveEnv(s.LookupEnv); err == nil {
			MaskEnv(s.Stdout, s.Getenv, vals)
		}
	}

	gr, out, err := s.Gate.Run(ctx, in)
	if err != nil {
		if rounds.KindOf(err) != rounds.ErrUnusable {
			a.Errorf("%v", err)
			return StepResult{FailOn: in.FailOn}, err
		}
		// An unusable gate is still published: the summary and the comment
		// name the scenario, both commits and the reason.
		gr.Verdict = rounds.ErrorVerdict(oneLineReason(err))
		completeUnusable(ctx, dir, &gr, sc, in, env)
		if out == "" {
			out = in.ResultsDir
		}
		_ = os.MkdirAll(out, 0o755)
	}
	res := StepResult{Verdict: gr.Verdict, FailOn: in.FailOn, ExitCode: ExitCode(gr.Verdict, in.FailOn)}
	name := scenarioName(gr, sc)
	if code := res.ExitCode; code != gr.Verdict.ExitCode() {
		gr.Notes = append(gr.Notes, verdict.Note{Code: verdict.NoteFailOn, FailOn: string(in.FailOn), ExitCode: code, VerdictExitCode: gr.Verdict.ExitCode()})
	}
	if gr.Verdict.Value == verdict.Inconclusive {
		a.Warningf("loadgate %s: inconclusive: the difference is within the noise; the report says what would decide it (more rounds, a longer sustain)", name)
	}
	md, err := s.Reports(out, gr)
	if err != nil {
		return res, err
	}
	outcome, err := Publish(ctx, a, env, ev, in, Publication{
		Scenario: name, ScenarioFile: in.Scenario, Verdict: gr.Verdict, Markdown: string(md),
		ReportPath: filepath.Join(out, "report.md"), CommentPath: filepath.Join(out, "comment.md"), ResultsDir: out,
	}, s.HTTP)
	if err != nil {
		fmt.Fprintln(s.Stderr, "loadgate:", err)
	}
	res.Outcome, res.ExitCode = outcome, outcome.ExitCode
	return res, nil
}

// inDir is p relative to dir, unless p is absolute.
func inDir(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// scenarioName is the scenario's name for the marker of its comment,
// derived the same way whatever the outcome: the name the gate judged (its
// report's scenario, else its results'), else the name: field of the
// scenario file (a gate that stopped before it loaded the scenario). Never
// the file's name: that would be another marker, so another comment. ""
// when none is known (Publish then does not comment).
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

// completeUnusable fills in what the report of a gate that stopped before
// its verdict lacks and is known anyway: the scenario (name, hash, file)
// and both sides' refs and commits (head: the workspace's HEAD, which is
// what head measures; base: the base input, resolved in the workspace).
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

// oneLineReason is err's message on one line, without a final period (the
// report adds its own): a reason must not end the banner line it is on.
func oneLineReason(err error) string {
	s := strings.Join(strings.Fields(report.ErrorText(err)), " ")
	return strings.TrimRight(s, ". ")
}
