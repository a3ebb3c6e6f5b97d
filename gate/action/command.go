package action

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// ParseFunc parses a command's flags as the program does (help, usage errors).
type ParseFunc func(fs *flag.FlagSet, args []string) error

// HistoryCommand is `loadgate history [record|previous]`; judged: v is the rendered history's
// verdict and sets the exit code.
func HistoryCommand(ctx context.Context, args []string, parse ParseFunc, stdout, stderr io.Writer) (v verdict.Verdict, judged bool, err error) {
	if len(args) > 0 {
		switch args[0] {
		case "record":
			return v, false, historyRecord(ctx, args[1:], parse, stdout)
		case "previous":
			return v, false, historyPrevious(ctx, args[1:], parse, stdout)
		}
	}
	fs, s := historyFlags("history")
	scenario := fs.String("scenario", "", "the scenario's `name` (its name: key, the data branch's directory)")
	var opt history.Options
	fs.StringVar(&opt.Since, "since", "", "measure the cumulative change from this entry's `commit` (e.g. the last release tag's; default the first entry)")
	fs.TextVar((*verdict.Tolerance)(&opt.Tolerance), "tolerance", verdict.Tolerance(history.DefaultTolerance), "cumulative tolerance since --since (15% or 0.15)")
	out := fs.String("out", "loadgate-out/history", "write history.md, history.json and one SVG per series to this `dir`")
	format := fs.String("format", "markdown", "stdout: markdown or json")
	direct := fs.String("direct", "", "the results `dir` of a gate of the last entry's commit against --since's: it, not the chain, decides the cumulative rule")
	if err := parse(fs, args); err != nil {
		return v, false, err
	}
	if *direct != "" {
		if opt.Since == "" {
			return v, false, rounds.Usagef("history: --direct needs --since, the commit the direct gate ran against")
		}
		o, err := report.ReadGate(*direct)
		if err != nil {
			return v, false, rounds.Usagef("history: --direct: %w", err)
		}
		d, err := history.DirectFromGate(o)
		if err != nil {
			return v, false, rounds.Usagef("history: --direct %s: %w", *direct, err)
		}
		opt.Direct = &d
	}
	if *scenario == "" {
		return v, false, rounds.Usagef("history: --scenario NAME is required")
	}
	if *format != "markdown" && *format != "json" {
		return v, false, rounds.Usagef("history: --format must be markdown or json, not %q", *format)
	}
	a, err := history.Read(ctx, s, *scenario, opt)
	if err != nil {
		return v, false, rounds.Usagef("%w", err)
	}
	if err := report.WriteHistory(*out, a, stderr); err != nil {
		return v, false, err
	}
	if *format == "json" {
		err = report.HistoryJSON(stdout, a)
	} else {
		err = report.HistoryMarkdown(stdout, a)
	}
	return verdict.Verdict{Value: a.Value()}, err == nil, err
}

// historyRecord appends a push's gate to the data branch.
func historyRecord(ctx context.Context, args []string, parse ParseFunc, stdout io.Writer) error {
	fs, s := historyFlags("history record")
	from := fs.String("from", "", "the gate's results `dir` (--out, or the Action's results-dir)")
	ref := fs.String("ref", os.Getenv("GITHUB_REF_NAME"), "the `branch` pushed (default $GITHUB_REF_NAME)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := HistoryWritable(os.Getenv("GITHUB_EVENT_NAME")); err != nil {
		return rounds.Usagef("history record: %w", err)
	}
	if *from == "" || *ref == "" {
		return rounds.Usagef("history record: --from DIR and --ref BRANCH are required")
	}
	o, err := report.ReadGate(*from)
	if err != nil {
		return rounds.Usagef("history record: %w", err)
	}
	path, err := history.Record(ctx, s, o, *ref, time.Now())
	if err != nil {
		return rounds.Usagef("%w", err)
	}
	fmt.Fprintf(stdout, "recorded %s on %s\n", path, s.Branch)
	return nil
}

// historyPrevious prints the newest entry's commit (the next push's base), if any.
func historyPrevious(ctx context.Context, args []string, parse ParseFunc, stdout io.Writer) error {
	fs, s := historyFlags("history previous")
	scenario := fs.String("scenario", "", "the scenario's `name`")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *scenario == "" {
		return rounds.Usagef("history previous: --scenario NAME is required")
	}
	e, ok, err := history.Previous(ctx, s, *scenario)
	if err != nil {
		return rounds.Usagef("%w", err)
	}
	if ok {
		fmt.Fprintln(stdout, e.Commit)
	}
	return nil
}

// historyFlags is a history command's flag set with the data branch's Store.
func historyFlags(name string) (*flag.FlagSet, *history.Store) {
	s := &history.Store{}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&s.Dir, "dir", ".", "a clone of the repository (its data branch is fetched, never checked out)")
	fs.StringVar(&s.Remote, "remote", history.DefaultRemote, "the `remote` holding the data branch")
	fs.StringVar(&s.Branch, "branch", history.DefaultBranch, "the data `branch`")
	return fs, s
}

// CommentCommand is `loadgate comment`: Comment, or with --github CommentStep; notices to stderr.
func CommentCommand(ctx context.Context, args []string, parse ParseFunc, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("comment", flag.ContinueOnError)
	from := fs.String("from", "", "the downloaded results `dir` (load-gate-results)")
	pr := fs.Int("pr", 0, "the pull request `number` (default: from the event or the results)")
	artifact := fs.String("artifact-url", "", "the results artifact's `URL` for the footer (default: the run's artifacts list)")
	step := fs.Bool("github", false, "the Action's comment step: this run's results (--from, \"\" when the gate wrote none), the inputs from INPUT_*")
	if err := parse(fs, args); err != nil {
		return err
	}
	var out *Outcome
	var err error
	switch {
	case *step:
		out, err = CommentStep(ctx, stdout, os.Getenv, *from)
	case *from == "":
		return rounds.Usagef("comment: --from DIR is required")
	default:
		out, err = Comment(ctx, stdout, os.Getenv, *from, *pr, *artifact)
	}
	if err != nil {
		return rounds.Usagef("comment: %w", err)
	}
	for _, n := range out.Notices {
		fmt.Fprintln(stderr, "loadgate: notice:", n)
	}
	return nil
}

// apiTimeout bounds the API work of the accept and on-demand steps (and the on-demand
// commit status): GitHub answering slowly or not at all must not hold the job.
var apiTimeout = 2 * time.Minute

// AcceptCommand is `loadgate accept --github`, the Action's step before the gate (AcceptStep).
func AcceptCommand(ctx context.Context, args []string, parse ParseFunc, stdout io.Writer) error {
	fs := flag.NewFlagSet("accept", flag.ContinueOnError)
	step := fs.Bool("github", false, "the Action's accept step: check the "+verdict.AcceptLabel+" label of this pull_request event, with the github-token input")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !*step {
		return rounds.Usagef("accept: only the Action's step, --github, is implemented (see loadgate accept -h)")
	}
	if err := AcceptStep(ctx, stdout, os.Getenv, nil); err != nil {
		return rounds.Usagef("accept: %w", err)
	}
	return nil
}

// OnDemandCmd is `loadgate ondemand --github`, the on-demand workflow's first step (OnDemandStep).
func OnDemandCmd(ctx context.Context, args []string, parse ParseFunc, stdout io.Writer) error {
	fs := flag.NewFlagSet("ondemand", flag.ContinueOnError)
	step := fs.Bool("github", false, "the on-demand workflow's step: check this issue_comment event's "+SlashCommand+" and pin the pull request's commits, with the github-token input")
	if err := parse(fs, args); err != nil {
		return err
	}
	if !*step {
		return rounds.Usagef("ondemand: only the workflow's step, --github, is implemented (see loadgate ondemand -h)")
	}
	if err := OnDemandStep(ctx, stdout, os.Getenv, nil); err != nil {
		if rounds.KindOf(err) != nil { // an API that did not answer: unusable, exit 3
			return fmt.Errorf("ondemand: %w", err)
		}
		return rounds.Usagef("ondemand: %w", err)
	}
	return nil
}
