package action

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Input names, as in action.yml.
const (
	InScenario  = "scenario"
	InCompose   = "compose"
	InBase      = "base"
	InAgainst   = "against"
	InStackCPUs = "stack-cpus"
	InLoadCPUs  = "load-cpus"
	// InLoadPriority is the generator's scheduling during a load
	// (--load-priority): auto (the default), rt or normal.
	InLoadPriority = "load-priority"
	InRounds       = "rounds"
	InBudget       = "budget"
	InTolerance    = "tolerance"
	InScale        = "scale"
	InFailOn       = "fail-on"
	InComment      = "comment"
	InToken        = "github-token"
	InResultsDir   = "results-dir"
	// InArtifactURL is the results artifact's URL for the comment's footer
	// (actions/upload-artifact v4's artifact-url output); empty: the run's
	// artifacts list.
	InArtifactURL = "artifact-url"
	// The operator's ceilings (scenario.OperatorLimits): a scenario, base's
	// or head's, cannot raise them.
	InMaxRate     = "max-rate"
	InMaxDuration = "max-duration"
	InMaxInFlight = "max-in-flight"
	// InScenarioFrom is whose scenario file the gate applies: base (the
	// default) or head, the unsafe opt-in (--scenario-from).
	InScenarioFrom = "scenario-from"
	// InAllowWorkflowChanges is the opt-in for a gate whose workflow is
	// enforced from the protected branch (a ruleset's "require workflows
	// to pass"): head's changes to the workflows then do not make a
	// pull_request gate unusable.
	InAllowWorkflowChanges = "allow-workflow-changes"
	// InDuet runs both sides at the same instants each round, both stacks
	// up (--duet): true (the default, as action.yml's) or false.
	InDuet = "duet"
)

// The operator ceilings' defaults, action.yml's too (a test checks they
// agree): bounded, so that no scenario file runs an unbounded load on a
// runner by default. Sized for a hosted runner (2 to 4 cores, a 10m gate
// budget): the demo's gate asks for 100 req/s over 38 s with 256 in
// flight. A workflow raises them deliberately, in its own file.
const (
	DefaultMaxRate     = 2000             // req/s, the peak of any phase
	DefaultMaxDuration = 10 * time.Minute // warm-up and phases of one round
	DefaultMaxInFlight = 1024
)

// InputNames are the inputs ReadInputs reads: exactly action.yml's inputs
// (a test checks it).
var InputNames = []string{
	InScenario, InCompose, InBase, InAgainst, InStackCPUs, InLoadCPUs, InLoadPriority,
	InRounds, InBudget, InTolerance, InScale, InFailOn, InComment, InToken, InResultsDir, InArtifactURL,
	InMaxRate, InMaxDuration, InMaxInFlight, InScenarioFrom, InAllowWorkflowChanges, InDuet,
}

// InputEnv is the environment variable the runner (or action.yml's env
// passthrough) sets for an input, as go-githubactions' GetInput reads it:
// "INPUT_" + the name upper-cased, spaces turned into underscores, hyphens
// kept.
func InputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// FailOn says which verdicts fail the step (see ExitCode).
type FailOn string

const (
	FailOnRegression FailOn = "regression" // the default: any worse workload, threshold or relative
	FailOnThreshold  FailOn = "threshold"  // absolute thresholds only; a regression is a warning
	FailOnNever      FailOn = "never"      // report only
)

// AgainstBase compares the head with the base checkout; the other form is
// "baseline:<name>" (a stored baseline).
const AgainstBase = "base"

// DefaultResultsDir is results-dir's default.
const DefaultResultsDir = "loadgate-results"

// Inputs are the action's inputs, validated. Zero values mean "the
// command's default" where the input is optional.
type Inputs struct {
	Scenario string   // path of the scenario file; required
	Compose  []string // compose files, one per line or comma-separated; empty: the scenario's stack.compose
	Base     string   // git ref of the base side; empty: the pull request's base commit (Resolve)
	// BaseDefaulted: Resolve took the default branch's tip as the base.
	BaseDefaulted bool
	Against       string        // "base" or "baseline:<name>"
	Baseline      string        // <name> of against: baseline:<name>, else ""
	StackCPUs     string        // cpu list ("0-1"), "" for the command's split
	LoadCPUs      string        // cpu list, "" for the command's split
	Rounds        int           // 0: the command's default
	AutoRounds    bool          // rounds: auto (sequential rounds)
	Budget        time.Duration // the gate's wall time, 0: the command's default
	Tolerance     float64       // fraction (0.05 for "5%"), 0: the command's default
	Scale         float64       // 0 < scale <= 1, 0: unscaled
	FailOn        FailOn
	Comment       bool
	Token         string // masked as soon as read
	ResultsDir    string
	// ArtifactURL is the results artifact's link for the comment's footer,
	// "" for the run's artifacts list (ArtifactURL).
	ArtifactURL string
	// Limits are the operator's ceilings (max-rate, max-duration,
	// max-in-flight): never zero, the defaults when an input is empty.
	Limits scenario.OperatorLimits
	// ScenarioFrom is "" (base's scenario: the protected side sets the
	// bar) or "head": head's scenario applied, unsafe for a required check.
	ScenarioFrom string
	// GuardWorkflows: the event runs the pull request's own workflow file
	// (pull_request; not pull_request_target, whose workflow is base's), so
	// head's changes to .github/workflows or action.yml make the gate
	// unusable unless AllowWorkflowChanges (Resolve sets it).
	GuardWorkflows       bool
	AllowWorkflowChanges bool
	// Duet: both sides' loads at the same instants each round, both
	// stacks up (--duet; the default); off against a baseline (one side).
	Duet bool
	// LoadPriority is --load-priority: auto unless the input says rt or
	// normal.
	LoadPriority pin.Mode
}

// InputError is a bad input: the command refuses (exit 2). Its message names
// the input.
type InputError struct {
	Input string
	Value string
	Err   error
}

func (e *InputError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("input %s: %v", e.Input, e.Err)
	}
	return fmt.Sprintf("input %s: %q: %v", e.Input, e.Value, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

func inputErr(name, value, format string, a ...any) error {
	return &InputError{Input: name, Value: value, Err: fmt.Errorf(format, a...)}
}

// ReadInputs reads and validates the inputs through a.GetInput (INPUT_*
// variables). The token, when set, is masked before anything else is
// printed. The first bad input gives an *InputError.
func ReadInputs(a *githubactions.Action) (Inputs, error) {
	in := Inputs{
		Against:    AgainstBase,
		FailOn:     FailOnRegression,
		Comment:    true,
		ResultsDir: DefaultResultsDir,
		Limits:     scenario.OperatorLimits{Rate: DefaultMaxRate, Duration: DefaultMaxDuration, InFlight: DefaultMaxInFlight},
	}
	get := a.GetInput
	if tok := get(InToken); tok != "" {
		MaskSecrets(a, tok)
		in.Token = tok
	}

	in.Scenario = get(InScenario)
	if in.Scenario == "" {
		return in, inputErr(InScenario, "", "required: the scenario file, e.g. examples/demo/scenario.yaml")
	}
	in.Compose = splitList(get(InCompose))
	in.Base = get(InBase)
	if strings.HasPrefix(in.Base, "-") {
		return in, inputErr(InBase, in.Base, "not a git ref")
	}

	if s := get(InAgainst); s != "" {
		switch name, isBaseline := strings.CutPrefix(s, "baseline:"); {
		case s == AgainstBase:
		case isBaseline && validName(name):
			in.Baseline = name
		default:
			return in, inputErr(InAgainst, s, "want %q or \"baseline:<name>\" (letters, digits, . _ -)", AgainstBase)
		}
		in.Against = s
	}

	var sets [2]pin.Set
	for i, name := range []string{InStackCPUs, InLoadCPUs} {
		s := get(name)
		set, err := pin.Parse(s)
		if err != nil {
			return in, &InputError{Input: name, Value: s, Err: err}
		}
		sets[i] = set
		if i == 0 {
			in.StackCPUs = s
		} else {
			in.LoadCPUs = s
		}
	}
	if in.StackCPUs != "" && in.LoadCPUs != "" && pin.Overlaps(sets[0], sets[1]) {
		return in, inputErr(InLoadCPUs, in.LoadCPUs, "overlaps stack-cpus %q: the stack and the load generator need disjoint cores", in.StackCPUs)
	}

	if s := get(InRounds); s == "auto" {
		in.AutoRounds = true
	} else if s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return in, inputErr(InRounds, s, "want a whole number from 1 to 1000, or auto")
		}
		in.Rounds = n
	}
	if s := get(InBudget); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 6*time.Hour {
			return in, inputErr(InBudget, s, "want a duration such as 10m (at most 6h, a job's limit)")
		}
		in.Budget = d
	}
	if s := get(InTolerance); s != "" {
		f, err := parseTolerance(s)
		if err != nil {
			return in, &InputError{Input: InTolerance, Value: s, Err: err}
		}
		in.Tolerance = f
	}
	if s := get(InScale); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > 1 {
			return in, inputErr(InScale, s, "want a number with 0 < scale <= 1")
		}
		in.Scale = f
	}
	if s := get(InFailOn); s != "" {
		switch f := FailOn(s); f {
		case FailOnRegression, FailOnThreshold, FailOnNever:
			in.FailOn = f
		default:
			return in, inputErr(InFailOn, s, "want regression, threshold or never")
		}
	}
	if s := get(InComment); s != "" {
		switch s {
		case "true", "True", "TRUE":
			in.Comment = true
		case "false", "False", "FALSE":
			in.Comment = false
		default:
			return in, inputErr(InComment, s, "want true or false")
		}
	}
	if s := get(InResultsDir); s != "" {
		in.ResultsDir = s
	}
	if s := get(InArtifactURL); s != "" {
		if linkURL(s) == "" {
			return in, inputErr(InArtifactURL, s, "want an http(s) URL, such as actions/upload-artifact's artifact-url output")
		}
		in.ArtifactURL = s
	}
	if s := get(InMaxRate); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return in, inputErr(InMaxRate, s, "want a positive number of requests per second, such as %d", DefaultMaxRate)
		}
		in.Limits.Rate = f
	}
	if s := get(InMaxDuration); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 6*time.Hour {
			return in, inputErr(InMaxDuration, s, "want a duration such as %v (at most 6h, a job's limit)", DefaultMaxDuration)
		}
		in.Limits.Duration = d
	}
	if s := get(InMaxInFlight); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return in, inputErr(InMaxInFlight, s, "want a whole number of at least 1, such as %d", DefaultMaxInFlight)
		}
		in.Limits.InFlight = n
	}
	switch s := get(InAllowWorkflowChanges); s {
	case "", "false":
	case "true":
		in.AllowWorkflowChanges = true
	default:
		return in, inputErr(InAllowWorkflowChanges, s, "want true or false (the default)")
	}
	switch s := get(InDuet); s {
	case "", "true":
		in.Duet = true
	case "false":
	default:
		return in, inputErr(InDuet, s, "want true (the default) or false")
	}
	in.LoadPriority = pin.ModeAuto
	if s := get(InLoadPriority); s != "" {
		m, err := pin.ParseMode(s)
		if err != nil {
			return in, inputErr(InLoadPriority, s, "want auto (the default), rt or normal")
		}
		in.LoadPriority = m
	}
	switch s := get(InScenarioFrom); s {
	case "", "base":
	case "head":
		in.ScenarioFrom = s
	default:
		return in, inputErr(InScenarioFrom, s, "want base (the default) or head (unsafe for a required check)")
	}
	return in, nil
}

// Resolve fills what the inputs leave to the event: the base defaults to
// the pull request's base commit, else to the default branch's tip
// (origin/<branch>: BaseDefaulted). No base at all is an *InputError.
func (in *Inputs) Resolve(ev Event) error {
	if in.Base == "" {
		in.Base = ev.BaseSHA
	}
	if in.Base == "" && ev.DefaultBranch != "" && in.Against == AgainstBase {
		in.Base, in.BaseDefaulted = "origin/"+ev.DefaultBranch, true
	}
	in.GuardWorkflows = ev.Name == "pull_request"
	if in.Against == AgainstBase && in.Base == "" {
		return inputErr(InBase, "", "required when against is %q, the event (%s) is not a pull request and names no default branch", AgainstBase, orNone(ev.Name))
	}
	return nil
}

// splitList splits a list input: one item per line, or comma-separated;
// blank items are dropped.
func splitList(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for _, item := range strings.Split(line, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// parseTolerance reads "5%" or "0.05" as 0.05. A bare number of 1 or more
// is refused as ambiguous.
func parseTolerance(s string) (float64, error) {
	num, pct := strings.CutSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("want a percentage such as 5%% or a fraction such as 0.05")
	}
	if pct {
		f /= 100
	} else if f >= 1 {
		return 0, fmt.Errorf("a bare number must be a fraction below 1: write %s%% for a percentage", num)
	}
	if f >= 1 {
		return 0, fmt.Errorf("must be below 100%%")
	}
	return f, nil
}

// validName is scenario.ValidName: the one rule for scenario and baseline
// names, safe as is in a path, a marker, a log line and Markdown.
func validName(s string) bool { return scenario.ValidName(s) }

// MaskSecrets asks the runner to mask each value in the log, as
// MaskValues does, through a (its writer and environment).
func MaskSecrets(a *githubactions.Action, values ...string) {
	if a.Getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	for _, l := range maskLines(values) {
		a.AddMask(l) // escapes the data itself
	}
}

// MinMaskLen is the shortest value MaskValues masks: a value of one or two
// characters is no secret, and masking it would blank every such character
// string in the log.
const MinMaskLen = 3

// MaskValues writes `::add-mask::VALUE` to w for each value, before
// anything that may contain it is logged: the runner then shows *** for it
// in the job log (the log only: files written to the results directory are
// not masked by it). A multi-line value is masked line by line (the runner
// matches masks within a line); blank lines and values shorter than
// MinMaskLen are skipped, each distinct line once. Outside GitHub Actions
// (getenv("GITHUB_ACTIONS") is not "true") nothing is written: add-mask
// echoes the secret, and only the runner hides it.
//
// The values to mask are the token and every value a scenario's ${ENV}
// references resolved to (scenario.ResolveEnv's map): which of them are
// secret is not known, so all are masked.
func MaskValues(w io.Writer, getenv func(string) string, values ...string) {
	if getenv == nil || getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	for _, l := range maskLines(values) {
		fmt.Fprintf(w, "::add-mask::%s\n", escapeData(l))
	}
}

// maskLines are the distinct non-blank lines of values, trimmed, of at
// least MinMaskLen bytes.
func maskLines(values []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range values {
		for _, line := range strings.Split(strings.ReplaceAll(v, "\r\n", "\n"), "\n") {
			if line = strings.TrimSpace(line); len(line) < MinMaskLen || seen[line] {
				continue
			}
			seen[line] = true
			out = append(out, line)
		}
	}
	return out
}

// MaskEnv masks the values of env (a scenario's resolved ${ENV}
// references), in the order of their names (MaskValues).
func MaskEnv(w io.Writer, getenv func(string) string, env map[string]string) {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	vals := make([]string, 0, len(names))
	for _, k := range names {
		vals = append(vals, env[k])
	}
	MaskValues(w, getenv, vals...)
}

// escapeData escapes a workflow command's data as the runner unescapes it.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}
