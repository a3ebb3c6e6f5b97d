package action_test

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sethvargo/go-githubactions"
	"gopkg.in/yaml.v3"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

func actionWith(env map[string]string) (*githubactions.Action, *bytes.Buffer) {
	var out bytes.Buffer
	return githubactions.New(githubactions.WithWriter(&out), githubactions.WithGetenv(func(k string) string { return env[k] })), &out
}

func TestReadInputs(t *testing.T) {
	env := map[string]string{
		"GITHUB_ACTIONS":      "true",
		"INPUT_SCENARIO":      " examples/demo/scenario.yaml ",
		"INPUT_COMPOSE":       "examples/demo/compose.yaml\n  more.yaml, third.yaml\n",
		"INPUT_AGAINST":       "baseline:main-2024",
		"INPUT_STACK-CPUS":    "0-1",
		"INPUT_LOAD-CPUS":     "2,3",
		"INPUT_ROUNDS":        "4",
		"INPUT_TOLERANCE":     "5%",
		"INPUT_SCALE":         "0.25",
		"INPUT_FAIL-ON":       "threshold",
		"INPUT_COMMENT":       "false",
		"INPUT_GITHUB-TOKEN":  "tok-secret",
		"INPUT_RESULTS-DIR":   "out/lg",
		"INPUT_ARTIFACT-URL":  "https://github.com/o/r/actions/runs/1/artifacts/9",
		"INPUT_MAX-RATE":      "250.5",
		"INPUT_MAX-DURATION":  "90s",
		"INPUT_MAX-IN-FLIGHT": "64",
		"INPUT_SCENARIO-FROM": "head",
		"INPUT_DUET":          "true",
		"INPUT_LOAD-PRIORITY": "rt",
		"INPUT_CONTINUE":      "false",
	}
	a, out := actionWith(env)
	in, err := action.ReadInputs(a)
	if err != nil {
		t.Fatal(err)
	}
	want := action.Inputs{
		Scenario: "examples/demo/scenario.yaml", Compose: []string{"examples/demo/compose.yaml", "more.yaml", "third.yaml"},
		Against: "baseline:main-2024", Baseline: "main-2024", StackCPUs: "0-1", LoadCPUs: "2,3", Rounds: 4,
		Tolerance: 0.05, Scale: 0.25, FailOn: action.FailOnThreshold, Comment: false, ResultsDir: "out/lg",
		ArtifactURL:  "https://github.com/o/r/actions/runs/1/artifacts/9",
		Limits:       scenario.OperatorLimits{Rate: 250.5, Duration: 90 * time.Second, InFlight: 64},
		ScenarioFrom: "head",
		Duet:         true,
		LoadPriority: pin.ModeRealtime,
	}
	if !equalInputs(in, want) {
		t.Errorf("ReadInputs =\n%+v\nwant\n%+v", in, want)
	}
	if out.String() != "" {
		t.Errorf("stdout %q: the gate step reads no token", out.String())
	}
	// The comment step's inputs: the token.
	a, _ = actionWith(env)
	in, err = action.ReadCommentInputs(a)
	if err != nil || in.Token != "tok-secret" || in.Comment || in.ArtifactURL != want.ArtifactURL {
		t.Errorf("ReadCommentInputs = %+v, %v", in, err)
	}

	// Defaults, and the base from the pull request.
	a, _ = actionWith(map[string]string{"INPUT_SCENARIO": "s.yaml"})
	in, err = action.ReadInputs(a)
	if err != nil {
		t.Fatal(err)
	}
	if in.Against != "base" || in.FailOn != action.FailOnRegression || !in.Comment || in.ResultsDir != action.DefaultResultsDir || in.Rounds != 0 || in.Base != "" || in.ScenarioFrom != "" || !in.Duet || in.LoadPriority != pin.ModeAuto {
		t.Errorf("defaults %+v", in)
	}
	// The operator ceilings are bounded by default: never "no limit".
	if want := (scenario.OperatorLimits{Rate: action.DefaultMaxRate, Duration: action.DefaultMaxDuration, InFlight: action.DefaultMaxInFlight}); in.Limits != want || want.Rate <= 0 || want.Duration <= 0 || want.InFlight <= 0 {
		t.Errorf("default ceilings %+v, want %+v", in.Limits, want)
	}
	// rounds: auto, with a budget.
	a, _ = actionWith(map[string]string{"INPUT_SCENARIO": "s.yaml", "INPUT_ROUNDS": "auto", "INPUT_BUDGET": "8m"})
	if in2, err := action.ReadInputs(a); err != nil || !in2.AutoRounds || in2.Rounds != 0 || in2.Budget != 8*time.Minute {
		t.Errorf("rounds auto, budget 8m: %+v, %v", in2, err)
	}
	if err := in.Resolve(action.Event{Name: "pull_request", BaseSHA: "f95f852b"}); err != nil || in.Base != "f95f852b" {
		t.Errorf("Resolve: %v, base %q", err, in.Base)
	}
	in.Base = ""
	var ie *action.InputError
	if err := in.Resolve(action.Event{Name: "workflow_dispatch"}); !errors.As(err, &ie) || ie.Input != "base" {
		t.Errorf("Resolve without a base: %v", err)
	}
	// pull_request_target is refused unless the operator says base-only.
	if err := in.Resolve(action.Event{Name: "pull_request_target", BaseSHA: "f95f852b"}); !errors.As(err, &ie) || ie.Input != "pull-request-target" {
		t.Errorf("Resolve on pull_request_target: %v", err)
	}
	in.PullRequestTargetBaseOnly = true
	if err := in.Resolve(action.Event{Name: "pull_request_target", BaseSHA: "f95f852b"}); err != nil {
		t.Errorf("Resolve on pull_request_target, base-only: %v", err)
	}
	// A manual run or a push compares against the default branch's tip.
	in.Base = ""
	if err := in.Resolve(action.Event{Name: "workflow_dispatch", DefaultBranch: "main"}); err != nil || in.Base != "origin/main" || !in.BaseDefaulted {
		t.Errorf("Resolve on workflow_dispatch: %v, base %q, defaulted %v", err, in.Base, in.BaseDefaulted)
	}
}

// On a push, a baseline is read from the branch as it was before the push
// (the pushed commit's parent when the push created the branch), never from
// the pushed commit itself: the change cannot replace its own bar.
func TestPushAgainstBaselineReadsTheBranchBeforeIt(t *testing.T) {
	a, _ := actionWith(map[string]string{"INPUT_SCENARIO": "s.yaml", "INPUT_AGAINST": "baseline:release", "INPUT_BASELINE-MISSING": "record"})
	in, err := action.ReadInputs(a)
	if err != nil || !in.RecordMissing {
		t.Fatalf("%+v, %v: want baseline-missing record read", in, err)
	}
	for _, c := range []struct {
		ev   action.Event
		want string
	}{
		{action.Event{Name: "push", Before: "aaaa", HeadSHA: "bbbb", DefaultBranch: "main"}, "aaaa"},
		{action.Event{Name: "push", HeadSHA: "bbbb", DefaultBranch: "main"}, "bbbb^"}, // the push created the branch
		{action.Event{Name: "pull_request", BaseSHA: "f95f852b", HeadSHA: "bbbb"}, "f95f852b"},
	} {
		in := in
		if err := in.Resolve(c.ev); err != nil || in.Base != c.want || in.BaseOfPush != (c.ev.Name == "push") {
			t.Errorf("%s before %q: base %q (of push %v), %v; want %q", c.ev.Name, c.ev.Before, in.Base, in.BaseOfPush, err, c.want)
		}
		cfg, _ := in.Apply(rounds.Config{}, session.StackOptions{})
		if cfg.Base != c.want || cfg.Against != "baseline:release" || !cfg.RecordMissing {
			t.Errorf("%s: config base %q against %q record %v", c.ev.Name, cfg.Base, cfg.Against, cfg.RecordMissing)
		}
	}
	in.Base = "v1.4.0" // given: kept
	if err := in.Resolve(action.Event{Name: "push", Before: "aaaa"}); err != nil || in.Base != "v1.4.0" || in.BaseOfPush {
		t.Errorf("base input on a push: %q, %v", in.Base, err)
	}
}

func equalInputs(a, b action.Inputs) bool {
	return reflect.DeepEqual(a, b)
}

func TestReadInputsErrorsNameTheInput(t *testing.T) {
	cases := []struct {
		input, value, want string
	}{
		{"scenario", "", "input scenario: required"},
		{"against", "main", `input against: "main": want "base" or "baseline:<name>"`},
		{"against", "baseline:", "input against"},
		{"against", "baseline:../x", "input against"},
		{"stack-cpus", "0-", "input stack-cpus"},
		{"load-cpus", "1-2", "input load-cpus: \"1-2\": overlaps stack-cpus"},
		{"rounds", "0", "input rounds: \"0\": want a whole number"},
		{"rounds", "two", "input rounds"},
		{"rounds", "Auto", "input rounds"},
		{"budget", "10", "input budget"},
		{"budget", "-1m", "input budget"},
		{"budget", "7h", "input budget"},
		{"tolerance", "5", "input tolerance: \"5\": a bare number must be a fraction below 1: write 5% for a percentage"},
		{"tolerance", "-1%", "input tolerance"},
		{"tolerance", "150%", "input tolerance"},
		{"scale", "2", "input scale"},
		{"scale", "0", "input scale"},
		{"fail-on", "always", "input fail-on: \"always\": want regression, inconclusive, threshold or never"},
		{"comment", "yes", "input comment: \"yes\": want true or false"},
		{"base", "--upload-pack=x", "input base"},
		{"artifact-url", "javascript:alert(1)", "input artifact-url: \"javascript:alert(1)\": want an http(s) URL"},
		{"artifact-url", "artifacts/9", "input artifact-url"},
		{"max-rate", "0", "input max-rate: \"0\": want a positive number"},
		{"max-rate", "-5", "input max-rate"},
		{"max-rate", "NaN", "input max-rate"},
		{"max-rate", "+Inf", "input max-rate"},
		{"max-rate", "fast", "input max-rate"},
		{"max-duration", "10", "input max-duration: \"10\": want a duration"},
		{"max-duration", "0s", "input max-duration"},
		{"max-duration", "7h", "input max-duration"},
		{"max-in-flight", "0", "input max-in-flight: \"0\": want a whole number"},
		{"max-in-flight", "1.5", "input max-in-flight"},
		{"scenario-from", "pr", "input scenario-from: \"pr\": want base (the default) or head"},
		{"duet", "yes", "input duet: \"yes\": want true (the default) or false"},
		{"baseline-missing", "store", "input baseline-missing: \"store\": want refuse (the default) or record"},
		{"baseline-missing", "record", "record needs against: baseline:<name>"},
		{"load-priority", "fifo", "input load-priority: \"fifo\": want auto (the default), rt or normal"},
	}
	for _, c := range cases {
		env := map[string]string{"INPUT_SCENARIO": "s.yaml", "INPUT_STACK-CPUS": "0-1"}
		env[action.InputEnv(c.input)] = c.value
		a, _ := actionWith(env)
		_, err := action.ReadInputs(a)
		var ie *action.InputError
		if !errors.As(err, &ie) || ie.Input != c.input || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: %v, want an InputError containing %q", c.input, c.value, err, c.want)
		}
	}
}

// InputEnv is what go-githubactions' GetInput reads: hyphens kept.
func TestInputEnvMatchesGetInput(t *testing.T) {
	for _, name := range action.InputNames {
		key := action.InputEnv(name)
		if strings.Contains(name, "-") && !strings.Contains(key, "-") {
			t.Errorf("InputEnv(%q) = %q: the runner keeps hyphens", name, key)
		}
		a, _ := actionWith(map[string]string{key: "v"})
		if got := a.GetInput(name); got != "v" {
			t.Errorf("GetInput(%q) with %s set = %q", name, key, got)
		}
	}
	if got := action.InputEnv("stack-cpus"); got != "INPUT_STACK-CPUS" {
		t.Errorf("InputEnv(stack-cpus) = %q", got)
	}
}

// action.yml's inputs and outputs are exactly the ones the code reads and
// writes, every ${{ inputs.X }} is an input, and the run step passes every
// input through env as INPUT_<NAME>.
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var yml struct {
		Name   string
		Inputs map[string]struct {
			Description, Default string
			Required             bool
		}
		Outputs map[string]struct{ Description, Value string }
		Runs    struct {
			Using string
			Steps []struct {
				ID   string
				Uses string
				Run  string
				If   string
				Env  map[string]string
				With map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(data, &yml); err != nil {
		t.Fatal(err)
	}
	if yml.Runs.Using != "composite" {
		t.Errorf("runs.using %q", yml.Runs.Using)
	}
	if got, want := keys(yml.Inputs), sorted(action.InputNames); !slices.Equal(got, want) {
		t.Errorf("action.yml inputs %v\nthe code reads   %v", got, want)
	}
	// binary is the action's own: the path of the loadgate it ran.
	if got, want := keys(yml.Outputs), sorted(append(slices.Clone(action.OutputNames), "binary")); !slices.Equal(got, want) {
		t.Errorf("action.yml outputs %v\nthe code writes   %v", got, want)
	}
	for name, o := range yml.Outputs {
		want := "${{ steps.gate.outputs." + name + " }}"
		if name == "binary" {
			want = "${{ steps.bin.outputs.path }}"
		}
		if o.Value != want {
			t.Errorf("output %s: value %q, want %q", name, o.Value, want)
		}
	}
	for name, in := range yml.Inputs {
		if in.Description == "" {
			t.Errorf("input %s has no description", name)
		}
	}
	if !yml.Inputs["scenario"].Required {
		t.Error("scenario is not required")
	}
	// The operator ceilings' defaults are the code's, and bounded.
	for name, want := range map[string]string{
		"max-rate":      strconv.Itoa(action.DefaultMaxRate),
		"max-in-flight": strconv.Itoa(action.DefaultMaxInFlight),
	} {
		if got := yml.Inputs[name].Default; got != want {
			t.Errorf("input %s: default %q, the code's is %q", name, got, want)
		}
	}
	if d, err := time.ParseDuration(yml.Inputs["max-duration"].Default); err != nil || d != action.DefaultMaxDuration {
		t.Errorf("input max-duration: default %q, the code's is %v", yml.Inputs["max-duration"].Default, action.DefaultMaxDuration)
	}

	// Every ${{ inputs.X }} anywhere is an input.
	ref := regexp.MustCompile(`inputs\.([A-Za-z0-9_-]+)`)
	for _, m := range ref.FindAllStringSubmatch(string(data), -1) {
		if _, ok := yml.Inputs[m[1]]; !ok {
			t.Errorf("action.yml uses inputs.%s, which is not an input", m[1])
		}
	}

	// The gate step gets every input but the token, the comment step after
	// it the token and what the comment needs; each as INPUT_<NAME>.
	steps := map[string]int{}
	for i, st := range yml.Runs.Steps {
		steps[st.ID] = i
	}
	gi, ok := steps["gate"]
	if !ok {
		t.Fatal("no step with id gate")
	}
	ci, ok := steps["comment"]
	if !ok || ci < gi {
		t.Fatal("no step with id comment after the gate step")
	}
	gate, cm := yml.Runs.Steps[gi], yml.Runs.Steps[ci]
	if !strings.Contains(gate.Run, "gate --github") {
		t.Errorf("the gate step runs %q", gate.Run)
	}
	if !strings.Contains(cm.Run, "comment --github") || !strings.Contains(cm.If, "!cancelled()") {
		t.Errorf("the comment step runs %q if %q; want comment --github after a failing gate too", cm.Run, cm.If)
	}
	passedTo := func(env map[string]string) map[string]bool {
		passed := map[string]bool{}
		for k, v := range env {
			if !strings.HasPrefix(k, "INPUT_") || v == "" { // "": blanked
				continue
			}
			m := regexp.MustCompile(`^\$\{\{ inputs\.([A-Za-z0-9_-]+) \}\}$`).FindStringSubmatch(v)
			if m == nil {
				t.Errorf("env %s = %q, want ${{ inputs.<name> }}", k, v)
				continue
			}
			if want := action.InputEnv(m[1]); k != want {
				t.Errorf("env %s carries inputs.%s, but GetInput(%q) reads %s", k, m[1], m[1], want)
			}
			passed[m[1]] = true
		}
		return passed
	}
	passed := passedTo(gate.Env)
	for _, name := range action.InputNames {
		if passed[name] == (name == action.InToken) {
			t.Errorf("input %s: passed to the gate step %v", name, passed[name])
		}
	}
	if got := keys(passedTo(cm.Env)); !slices.Equal(got, sorted([]string{action.InComment, action.InToken, action.InArtifactURL})) {
		t.Errorf("the comment step gets inputs %v", got)
	}
	// No credential reaches the gate step, where the pull request's code
	// runs: none passed, and any the job's env sets blanked.
	for k, v := range gate.Env {
		if strings.Contains(v, "token") || strings.Contains(v, "secrets.") {
			t.Errorf("the gate step's env %s = %q: a credential where the pull request's code runs", k, v)
		}
	}
	for _, k := range []string{"INPUT_GITHUB-TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"} {
		if v, ok := gate.Env[k]; !ok || v != "" {
			t.Errorf("the gate step's env does not blank %s (a job's env would reach the pull request's code)", k)
		}
	}
	// Expressions are never pasted into scripts (template injection).
	for _, s := range yml.Runs.Steps {
		if strings.Contains(s.Run, "${{") {
			t.Errorf("step %q: ${{ }} inside run: pass it through env", s.ID)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// A re-run continues the earlier attempt's rounds kept in action.yml's
// attempt directory, tied to this run; continue: false, or no run id, does not.
func TestContinueInput(t *testing.T) {
	for _, c := range []struct {
		cont, dir, run string
		want           bool
	}{
		{"", "/t/loadgate-attempt", "77", true},
		{"true", "/t/loadgate-attempt", "77", true},
		{"false", "/t/loadgate-attempt", "77", false},
		{"", "", "77", false},
		{"", "/t/loadgate-attempt", "", false},
	} {
		a, _ := actionWith(map[string]string{"INPUT_SCENARIO": "s.yaml", "INPUT_CONTINUE": c.cont,
			action.EnvAttemptDir: c.dir, "GITHUB_RUN_ID": c.run})
		in, err := action.ReadInputs(a)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := in.Apply(rounds.Config{}, session.StackOptions{})
		if (cfg.Continue != "") != c.want || (c.want && (cfg.Continue != c.dir || cfg.RunID != c.run)) {
			t.Errorf("%+v: Continue %q run %q", c, cfg.Continue, cfg.RunID)
		}
	}
	a, _ := actionWith(map[string]string{"INPUT_SCENARIO": "s.yaml", "INPUT_CONTINUE": "yes"})
	if _, err := action.ReadInputs(a); err == nil || !strings.Contains(err.Error(), "input continue") {
		t.Errorf("continue: yes: %v", err)
	}
}
