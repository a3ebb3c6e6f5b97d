package action

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Input names, as in action.yml.
const (
	InScenario             = "scenario"
	InCompose              = "compose"
	InBase                 = "base"
	InAgainst              = "against"
	InBaselineMissing      = "baseline-missing"
	InStackCPUs            = "stack-cpus"
	InLoadCPUs             = "load-cpus"
	InLoadPriority         = "load-priority"
	InRounds               = "rounds"
	InBudget               = "budget"
	InTolerance            = "tolerance"
	InToleranceFloor       = "tolerance-floor"
	InScale                = "scale"
	InFailOn               = "fail-on"
	InComment              = "comment"
	InToken                = "github-token"
	InResultsDir           = "results-dir"
	InArtifactURL          = "artifact-url"
	InMaxRate              = "max-rate"
	InMaxDuration          = "max-duration"
	InMaxInFlight          = "max-in-flight"
	InScenarioFrom         = "scenario-from"
	InAllowWorkflowChanges = "allow-workflow-changes"
	InPullRequestTarget    = "pull-request-target"
	InDuet                 = "duet"
	InContinue             = "continue"
	InShard                = "shard" // shard.go
	InMerge                = "merge" // shard.go
)

// The operator ceilings' defaults, as in action.yml: no unbounded load by default.
const (
	DefaultMaxRate     = 2000             // req/s, the peak of any phase
	DefaultMaxDuration = 10 * time.Minute // warm-up and phases of one round
	DefaultMaxInFlight = 1024
)

// InputNames are exactly action.yml's inputs (a test checks it).
var InputNames = []string{
	InScenario, InCompose, InBase, InAgainst, InBaselineMissing, InStackCPUs, InLoadCPUs, InLoadPriority,
	InRounds, InBudget, InTolerance, InToleranceFloor, InScale, InFailOn, InComment, InToken, InResultsDir, InArtifactURL,
	InMaxRate, InMaxDuration, InMaxInFlight, InScenarioFrom, InAllowWorkflowChanges, InDuet,
	InPullRequestTarget, InShard, InMerge, InContinue,
}

// EnvAttemptDir is where action.yml restores and saves an attempt's rounds
// (actions/cache, keyed by the run): a re-run continues them.
const EnvAttemptDir = "LOADGATE_ATTEMPT_DIR"

// InputEnv is the variable GetInput reads: INPUT_ and the name upper-cased, spaces as _, hyphens kept.
func InputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// FailOn says which verdicts fail the step (see ExitCode).
type FailOn string

const (
	FailOnRegression FailOn = "regression" // the default: any worse workload, threshold or relative
	FailOnThreshold  FailOn = "threshold"  // absolute thresholds only; a regression is a warning
	FailOnNever      FailOn = "never"      // report only
	// FailOnInconclusive: as regression, and an inconclusive verdict fails too
	// (exit 1): for a required check that must decide, not stay green undecided.
	FailOnInconclusive FailOn = "inconclusive"
)

// ParseFailOn reads a fail-on value, for the input and the CLI's --fail-on alike.
func ParseFailOn(s string) (FailOn, error) {
	switch f := FailOn(s); f {
	case FailOnRegression, FailOnThreshold, FailOnNever, FailOnInconclusive:
		return f, nil
	}
	return "", fmt.Errorf("want regression, inconclusive, threshold or never")
}

// AgainstBase compares head with the base checkout; the other form is "baseline:<name>".
const AgainstBase = "base"

const DefaultResultsDir = "loadgate-results"

// Inputs are the action's inputs, validated; a zero value means the command's default.
type Inputs struct {
	Scenario      string        // path of the scenario file; required
	Compose       []string      // compose files, one per line or comma-separated; empty: the scenario's stack.compose
	Base          string        // git ref of the base side; empty: the pull request's base commit (Resolve)
	BaseDefaulted bool          // Resolve took the default branch's tip
	Against       string        // "base" or "baseline:<name>"
	Baseline      string        // <name> of against: baseline:<name>, else ""
	RecordMissing bool          // baseline-missing: record (head alone, to be stored as the baseline)
	BaseOfPush    bool          // Resolve took the branch as it was before the push (or the pushed commit's parent)
	StackCPUs     string        // cpu list ("0-1"), "" for the command's split
	LoadCPUs      string        // cpu list, "" for the command's split
	Rounds        int           // 0: the command's default
	AutoRounds    bool          // rounds: auto (sequential rounds)
	Budget        time.Duration // the gate's wall time, 0: the command's default
	Tolerance     float64       // fraction (0.05 for "5%"), 0: the command's default
	// ToleranceFloor (ToleranceFloorSet: given): can only tighten base's scenario's.
	ToleranceFloor    time.Duration
	ToleranceFloorSet bool
	Scale             float64 // 0 < scale <= 1, 0: unscaled
	FailOn            FailOn
	Comment           bool
	Token             string // the comment step's; PublishComment masks it before any output
	ResultsDir        string
	ArtifactURL       string

	Limits       scenario.OperatorLimits // never zero: the defaults fill empty inputs
	ScenarioFrom string

	// GuardWorkflows is set by Resolve for pull_request: head's workflow changes make the gate
	// unusable unless AllowWorkflowChanges.
	GuardWorkflows       bool
	AllowWorkflowChanges bool

	PullRequestTargetBaseOnly bool // a pull_request_target workflow checks out the base alone
	Duet                      bool
	LoadPriority              pin.Mode

	// Continue: a re-run of this workflow run (GITHUB_RUN_ATTEMPT > 1)
	// continues the earlier attempt's rounds in AttemptDir (EnvAttemptDir).
	Continue   bool
	AttemptDir string
	RunID      string // GITHUB_RUN_ID

	Shard rounds.Shard // this job's share of the rounds, no verdict (shard.go)
	Merge string       // the shards' downloaded results, judged as one gate
}

// InputError is a bad input, named in its message: the command exits 2.
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

// ReadInputs reads the gate step's inputs (no github-token); a bad one is an *InputError.
func ReadInputs(a *githubactions.Action) (Inputs, error) {
	in := Inputs{
		Against:    AgainstBase,
		FailOn:     FailOnRegression,
		Comment:    true,
		ResultsDir: DefaultResultsDir,
		Limits:     scenario.OperatorLimits{Rate: DefaultMaxRate, Duration: DefaultMaxDuration, InFlight: DefaultMaxInFlight},
	}
	get := a.GetInput
	for _, read := range []func(*Inputs, func(string) string) error{
		readShards, readSides, readCPUs, readRun, readOutput, readLimits, readSwitches,
	} {
		if err := read(&in, get); err != nil {
			return in, err
		}
	}
	in.AttemptDir, in.RunID = a.Getenv(EnvAttemptDir), a.Getenv("GITHUB_RUN_ID")
	return in, nil
}

func readSides(in *Inputs, get func(string) string) error {
	in.Scenario = get(InScenario)
	if in.Scenario == "" && in.Merge == "" { // a merge reads the shards' scenario
		return inputErr(InScenario, "", "required: the scenario file, e.g. examples/demo/scenario.yaml")
	}
	in.Compose = splitList(get(InCompose))
	in.Base = get(InBase)
	if strings.HasPrefix(in.Base, "-") {
		return inputErr(InBase, in.Base, "not a git ref")
	}
	if s := get(InAgainst); s != "" {
		switch name, isBaseline := strings.CutPrefix(s, "baseline:"); {
		case s == AgainstBase:
		case isBaseline && validName(name):
			in.Baseline = name
		default:
			return inputErr(InAgainst, s, "want %q or \"baseline:<name>\" (letters, digits, . _ -)", AgainstBase)
		}
		in.Against = s
	}
	switch s := get(InBaselineMissing); s {
	case "", "refuse":
	case "record":
		if in.Baseline == "" {
			return inputErr(InBaselineMissing, s, "record needs against: baseline:<name>")
		}
		in.RecordMissing = true
	default:
		return inputErr(InBaselineMissing, s, "want refuse (the default) or record")
	}
	return nil
}

// readCPUs reads stack-cpus and load-cpus, which must not overlap.
func readCPUs(in *Inputs, get func(string) string) error {
	var sets [2]pin.Set
	for i, name := range []string{InStackCPUs, InLoadCPUs} {
		s := get(name)
		set, err := pin.Parse(s)
		if err != nil {
			return &InputError{Input: name, Value: s, Err: err}
		}
		sets[i] = set
		if i == 0 {
			in.StackCPUs = s
		} else {
			in.LoadCPUs = s
		}
	}
	if in.StackCPUs != "" && in.LoadCPUs != "" && pin.Overlaps(sets[0], sets[1]) {
		return inputErr(InLoadCPUs, in.LoadCPUs, "overlaps stack-cpus %q: the stack and the load generator need disjoint cores", in.StackCPUs)
	}
	return nil
}

func readRun(in *Inputs, get func(string) string) error {
	if s := get(InRounds); s != "" {
		n, auto, err := rounds.ParseCount(s)
		if err != nil || !auto && (n < 1 || n > 1000) {
			return inputErr(InRounds, s, "want a whole number from 1 to 1000, or auto")
		}
		in.Rounds, in.AutoRounds = n, auto
	}
	if s := get(InBudget); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 6*time.Hour {
			return inputErr(InBudget, s, "want a duration such as 10m (at most 6h, a job's limit)")
		}
		in.Budget = d
	}
	if s := get(InTolerance); s != "" {
		f, err := verdict.ParseTolerance(s)
		if err != nil {
			return &InputError{Input: InTolerance, Value: s, Err: err}
		}
		in.Tolerance = f
	}
	if s := get(InToleranceFloor); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d > verdict.MaxToleranceFloor {
			return inputErr(InToleranceFloor, s, "want a duration such as 50us or 1ms, from 0 to %s", verdict.MaxToleranceFloor)
		}
		in.ToleranceFloor, in.ToleranceFloorSet = d, true
	}
	if s := get(InScale); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > 1 {
			return inputErr(InScale, s, "want a number with 0 < scale <= 1")
		}
		in.Scale = f
	}
	return nil
}

// ReadCommentInputs reads the comment step's inputs: github-token (unmasked: PublishComment
// masks it first), comment and artifact-url.
func ReadCommentInputs(a *githubactions.Action) (Inputs, error) {
	in := Inputs{Comment: true, Token: a.GetInput(InToken)}
	return in, readComment(&in, a.GetInput)
}

func readOutput(in *Inputs, get func(string) string) error {
	if s := get(InFailOn); s != "" {
		f, err := ParseFailOn(s)
		if err != nil {
			return &InputError{Input: InFailOn, Value: s, Err: err}
		}
		in.FailOn = f
	}
	if s := get(InResultsDir); s != "" {
		in.ResultsDir = s
	}
	return readComment(in, get)
}

func readComment(in *Inputs, get func(string) string) error {
	if s := get(InComment); s != "" {
		switch s {
		case "true", "True", "TRUE":
			in.Comment = true
		case "false", "False", "FALSE":
			in.Comment = false
		default:
			return inputErr(InComment, s, "want true or false")
		}
	}
	if s := get(InArtifactURL); s != "" {
		if linkURL(s) == "" {
			return inputErr(InArtifactURL, s, "want an http(s) URL, such as actions/upload-artifact's artifact-url output")
		}
		in.ArtifactURL = s
	}
	return nil
}

func readLimits(in *Inputs, get func(string) string) error {
	if s := get(InMaxRate); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
			return inputErr(InMaxRate, s, "want a positive number of requests per second, such as %d", DefaultMaxRate)
		}
		in.Limits.Rate = f
	}
	if s := get(InMaxDuration); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 6*time.Hour {
			return inputErr(InMaxDuration, s, "want a duration such as %v (at most 6h, a job's limit)", DefaultMaxDuration)
		}
		in.Limits.Duration = d
	}
	if s := get(InMaxInFlight); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return inputErr(InMaxInFlight, s, "want a whole number of at least 1, such as %d", DefaultMaxInFlight)
		}
		in.Limits.InFlight = n
	}
	return nil
}

func readSwitches(in *Inputs, get func(string) string) error {
	switch s := get(InContinue); s {
	case "", "true":
		in.Continue = true
	case "false":
	default:
		return inputErr(InContinue, s, "want true (the default) or false")
	}
	switch s := get(InPullRequestTarget); s {
	case "", "refuse":
	case "base-only":
		in.PullRequestTargetBaseOnly = true
	default:
		return inputErr(InPullRequestTarget, s, "want refuse (the default) or base-only")
	}
	switch s := get(InAllowWorkflowChanges); s {
	case "", "false":
	case "true":
		in.AllowWorkflowChanges = true
	default:
		return inputErr(InAllowWorkflowChanges, s, "want true or false (the default)")
	}
	switch s := get(InDuet); s {
	case "", "true":
		in.Duet = true
	case "false":
	default:
		return inputErr(InDuet, s, "want true (the default) or false")
	}
	in.LoadPriority = pin.ModeAuto
	if s := get(InLoadPriority); s != "" {
		m, err := pin.ParseMode(s)
		if err != nil {
			return inputErr(InLoadPriority, s, "want auto (the default), rt or normal")
		}
		in.LoadPriority = m
	}
	switch s := get(InScenarioFrom); s {
	case "", "base":
	case "head":
		in.ScenarioFrom = s
	default:
		return inputErr(InScenarioFrom, s, "want base (the default) or head (unsafe for a required check)")
	}
	return nil
}

// Resolve fills the base from the event (PR base, else origin/<default>: BaseDefaulted) and sets
// GuardWorkflows. No base, or pull_request_target without base-only, is an *InputError.
func (in *Inputs) Resolve(ev Event) error {
	if in.Base == "" {
		in.Base = ev.BaseSHA
	}
	if in.Base == "" && in.Baseline != "" && ev.Name == "push" { // the protected side: what this push cannot have changed
		in.Base, in.BaseOfPush = ev.Before, true
		if in.Base == "" && ev.HeadSHA != "" { // the push created the branch
			in.Base = ev.HeadSHA + "^"
		}
	}
	if in.Base == "" && ev.DefaultBranch != "" && in.Against == AgainstBase {
		in.Base, in.BaseDefaulted = "origin/"+ev.DefaultBranch, true
	}
	in.GuardWorkflows = ev.Name == "pull_request"
	if ev.Name == "pull_request_target" && !in.PullRequestTargetBaseOnly {
		return inputErr(InPullRequestTarget, "", "pull_request_target gives the pull request's code a write token and the secrets; use pull_request, or set base-only if this workflow checks out only the base")
	}
	if in.Against == AgainstBase && in.Base == "" && in.Merge == "" { // a merge reads the shards' commits
		return inputErr(InBase, "", "required when against is %q, the event (%s) is not a pull request and names no default branch", AgainstBase, orNone(ev.Name))
	}
	return nil
}

// splitList splits a list input on lines and commas, dropping blanks.
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

func validName(s string) bool { return scenario.ValidName(s) }

// MaskSecrets is MaskValues through a's writer and environment.
func MaskSecrets(a *githubactions.Action, values ...string) {
	if a.Getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	for _, l := range maskLines(values) {
		a.AddMask(l) // escapes the data itself
	}
}

// MinMaskLen is the shortest value masked: shorter ones would blank every such string in the log.
const MinMaskLen = 3

// MaskValues writes `::add-mask::LINE` to w for each value's lines, only in GitHub Actions.
// Call it before the values are logged; it masks the job log only, not result files.
func MaskValues(w io.Writer, getenv func(string) string, values ...string) {
	if getenv == nil || getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	for _, l := range maskLines(values) {
		fmt.Fprintf(w, "::add-mask::%s\n", escapeData(l))
	}
}

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

// ResolveEnv resolves a scenario's ${NAME} values without runner secrets and masks them on w.
func ResolveEnv(w io.Writer) func(*scenario.Scenario) (map[string]string, error) {
	return func(sc *scenario.Scenario) (map[string]string, error) {
		env, err := sc.ResolveEnv(WithoutRunnerSecrets(os.LookupEnv))
		if err != nil {
			return nil, rounds.Usagef("%w", err)
		}
		MaskEnv(w, os.Getenv, env)
		return env, nil
	}
}

// MaskEnv masks env's values (resolved ${ENV} references) in name order.
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

// Apply is the gate's flags (cfg, st) with the inputs in their place: an empty rounds, budget,
// tolerance, scale or scenario-from keeps cfg's; the rest are set even when empty.
// Against a baseline too, base's scenario and baseline are read, never head's.
func (in Inputs) Apply(cfg rounds.Config, st session.StackOptions) (rounds.Config, session.StackOptions) {
	cfg.Scenario, cfg.Compose, st.Compose = in.Scenario, in.Compose, in.Compose
	st.StackCPUs, st.LoadCPUs, st.Priority = in.StackCPUs, in.LoadCPUs, in.LoadPriority
	cfg.Out = in.ResultsDir
	cfg.Against, cfg.Base = "base", in.Base
	if in.Baseline != "" {
		cfg.Against = "baseline:" + in.Baseline
	}
	if in.Rounds > 0 { // a fixed number: not the default auto
		cfg.Rounds, cfg.Auto = in.Rounds, false
	}
	if in.AutoRounds {
		cfg.Rounds, cfg.Auto = 0, true
	}
	if in.Budget > 0 {
		cfg.Budget = in.Budget
	}
	if in.Tolerance > 0 {
		cfg.Compare.Tolerance = in.Tolerance // only tightens base's scenario's (rounds.ResolveTolerance)
	}
	if in.ToleranceFloorSet {
		cfg.Compare.ToleranceFloor, cfg.ToleranceFloorSet = in.ToleranceFloor, true
	}
	if in.Scale > 0 {
		cfg.Scale = in.Scale
	}
	cfg.Limits = in.Limits // the operator's ceilings, bounded by default
	cfg.GuardWorkflows, cfg.AllowWorkflowChanges = in.GuardWorkflows, in.AllowWorkflowChanges
	cfg.Duet = in.Duet // the duet input (action.yml's default "true"); off where a baseline's stored numbers stand alone
	cfg.RecordMissing = in.RecordMissing
	if in.ScenarioFrom != "" {
		cfg.ScenarioFrom = in.ScenarioFrom // the unsafe opt-in: the report warns
	}
	cfg.Shard = in.Shard
	if in.Continue && in.AttemptDir != "" && in.RunID != "" {
		cfg.Continue, cfg.RunID = in.AttemptDir, in.RunID
	}
	return cfg, st
}
