//go:build linux

package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

// TestActionEndToEnd runs action.yml's steps on this machine the way a
// runner runs a composite action: the GitHub environment variables set as
// a runner sets them, a pull_request event whose base and head are two
// commits of a throwaway repository holding the demo stack, the fake
// GitHub API (fake_test.go) for the comment. Then it checks what a user
// would notice: the step's exit code, the job summary, the outputs, the
// results directory, one sticky comment (edited, not duplicated, on a
// second run), and no Docker resource or git worktree left behind.
//
// It needs a Docker engine (skipped loudly without one, a failure under
// LOADGATE_REQUIRE_DOCKER=1) and Go (the action builds loadgate from its
// own checkout, this repository). About a minute; skipped with -short.
func TestActionEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestActionEndToEnd runs the action's steps against the demo stack (about a minute)")
	}
	testtier.Require(t, testtier.E2E) // by default: TestActionHarness and the fake API's tests
	e2eRequireEngine(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go on PATH: the action builds loadgate with it (setup-go is stood in for by this machine's Go): %v", err)
	}

	timeout := 8 * time.Minute
	if d, ok := t.Deadline(); ok {
		if left := time.Until(d) - 30*time.Second; left < timeout {
			timeout = left
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()

	root := e2eRepoRoot(t)
	act := loadActionFile(t, filepath.Join(root, "action.yml"))
	tmp := t.TempDir()
	ws, baseSHA, headSHA := e2eWorkspace(t, root, filepath.Join(tmp, "workspace"))

	fake := newFake(t)
	fake.Login = "loadgate-e2e" // a token whose user is known: GET /user answers

	h := &e2eHarness{
		t: t, act: act, root: root, ws: ws, tmp: tmp,
		runnerTemp: filepath.Join(tmp, "runner-temp"),
		summary:    filepath.Join(tmp, "runner-temp", "_runner_file_commands", "step_summary"),
		outputs:    map[string]map[string]string{},
	}
	for _, d := range []string{h.runnerTemp, filepath.Dir(h.summary)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(h.summary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eventPath := e2eEvent(t, filepath.Join(tmp, "event.json"), baseSHA, headSHA)
	resultsDir := filepath.Join(tmp, "results")

	h.contexts = map[string]string{
		"github.action_path":       root,
		"github.action_ref":        "", // empty for a local action (uses: ./): the build path
		"github.action_repository": "",
		"github.server_url":        "https://github.com",
		"github.token":             token,
		"github.event_name":        "pull_request",
		"runner.os":                "Linux",
		"runner.arch":              e2eRunnerArch(),
		"runner.temp":              h.runnerTemp,
	}
	h.env = map[string]string{
		"CI":                       "true",
		"GITHUB_ACTIONS":           "true",
		"GITHUB_EVENT_NAME":        "pull_request",
		"GITHUB_EVENT_PATH":        eventPath,
		"GITHUB_REPOSITORY":        owner + "/" + repo,
		"GITHUB_REPOSITORY_OWNER":  owner,
		"GITHUB_API_URL":           fake.URL(),
		"GITHUB_SERVER_URL":        "https://github.com",
		"GITHUB_STEP_SUMMARY":      h.summary,
		"GITHUB_SHA":               headSHA,
		"GITHUB_REF":               fmt.Sprintf("refs/pull/%d/merge", prNum),
		"GITHUB_HEAD_REF":          "changes",
		"GITHUB_BASE_REF":          "master",
		"GITHUB_RUN_ID":            "4242",
		"GITHUB_RUN_ATTEMPT":       "1",
		"GITHUB_WORKSPACE":         ws,
		"GITHUB_ACTION_PATH":       root,
		"GITHUB_ACTION_REF":        "",
		"GITHUB_ACTION_REPOSITORY": "",
		"RUNNER_OS":                "Linux",
		"RUNNER_ARCH":              e2eRunnerArch(),
		"RUNNER_TEMP":              h.runnerTemp,
	}
	// What the runner's own environment gives the steps: the tools and their
	// caches (setup-go's Go is this machine's), and the Docker engine.
	for _, k := range []string{
		"PATH", "HOME", "USER", "LANG", "TMPDIR", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS",
		"GOTOOLCHAIN", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOINSECURE",
		"DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_API_VERSION",
	} {
		if v, ok := os.LookupEnv(k); ok {
			h.env[k] = v
		}
	}
	if !strings.Contains(string(os.PathListSeparator)+h.env["PATH"]+string(os.PathListSeparator), string(os.PathListSeparator)+filepath.Dir(goBin)+string(os.PathListSeparator)) {
		h.env["PATH"] = filepath.Dir(goBin) + string(os.PathListSeparator) + h.env["PATH"]
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if h.env[k] == "" {
			if out, err := exec.Command(goBin, "env", k).Output(); err == nil {
				h.env[k] = strings.TrimSpace(string(out))
			}
		}
	}

	h.inputs = h.resolveInputs(map[string]string{
		"scenario":     "examples/demo/gate.yaml",
		"rounds":       "1",
		"scale":        "0.1",
		"comment":      "true",
		"github-token": token,
		"results-dir":  resultsDir,
	})
	t.Cleanup(h.cleanup)

	// The job: every step in order; after a failed step only those whose
	// if: has a status function run, as the runner does (no step has
	// continue-on-error). Only the gate may fail (its verdict).
	var gateStep, commentStep *actionStep
	for i := range act.Runs.Steps {
		st := &act.Runs.Steps[i]
		switch st.ID {
		case "gate":
			gateStep = st
		case "comment":
			commentStep = st
		}
		if code := h.step(ctx, st); code != 0 && st.ID != "gate" && !st.ContinueOnError {
			t.Fatalf("step %q exited %d", st.label(), code)
		}
	}
	if gateStep == nil || commentStep == nil {
		t.Fatal("action.yml has no step with id gate, or none with id comment")
	}
	if h.last["comment"] == nil {
		t.Fatalf("the comment step did not run after the gate step (exit %d)", h.last["gate"].code)
	}

	// The binary: built from this checkout into RUNNER_TEMP.
	bin := h.outputs["bin"]
	if want := filepath.Join(h.runnerTemp, "loadgate-bin", "loadgate"); bin["path"] != want || bin["build"] != "true" {
		t.Fatalf("step bin outputs %v, want path=%s build=true", bin, want)
	}
	if fi, err := os.Stat(bin["path"]); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("no executable loadgate at %s: %v", bin["path"], err)
	}
	h.bin = bin["path"]

	first := h.last["gate"]
	v := h.checkGate(first, resultsDir, baseSHA, headSHA, 1)

	// The action's own outputs, from outputs.*.value.
	actOut := map[string]string{}
	for name, o := range act.Outputs {
		actOut[name] = h.expand(o.Value, "outputs."+name)
	}
	for _, name := range action.OutputNames {
		// baseline is set only against a stored baseline; this gate is against base.
		if actOut[name] != h.outputs["gate"][name] || actOut[name] == "" && name != "baseline" {
			t.Errorf("action output %s = %q, the gate step's %q", name, actOut[name], h.outputs["gate"][name])
		}
	}

	// One comment on the pull request, carrying the marker and the verdict.
	scen := "demo-gate"
	cs := fake.ours(prNum, scen)
	if len(cs) != 1 || fake.Count("POST") != 1 {
		reqs := fake.Requests()
		t.Fatalf("after the first run: %d comments of ours, %d POSTs (requests %v); want 1 and 1", len(cs), fake.Count("POST"), reqs)
	}
	commentID := cs[0].ID
	h.checkComment(cs[0].Body, scen, v, headSHA)
	if cs[0].User.Login != fake.Login {
		t.Errorf("the comment is by %q, want the token's user %q", cs[0].User.Login, fake.Login)
	}

	// The gate and comment steps again (a re-run, same env): the same
	// comment is edited in place.
	h.failed = false
	h.step(ctx, gateStep)
	h.step(ctx, commentStep)
	second := h.last["gate"]
	v2 := h.checkGate(second, resultsDir, baseSHA, headSHA, 2)
	cs = fake.ours(prNum, scen)
	if len(cs) != 1 || cs[0].ID != commentID || fake.Count("POST") != 1 {
		t.Fatalf("after the second run: comments %v, %d POSTs; want the one comment %d and no new POST", e2eIDs(cs), fake.Count("POST"), commentID)
	}
	edited := fake.Edited()
	switch {
	case slices.Equal(edited, []int64{commentID}):
		if !strings.Contains(h.last["comment"].log, fmt.Sprintf("loadgate: edited comment %d on #%d", commentID, prNum)) {
			t.Errorf("the second run edited the comment but does not say so")
		}
	case len(edited) == 0 && cs[0].Body == h.firstBody:
		t.Logf("the second run's comment body was identical: left alone (no PATCH)")
		if !strings.Contains(h.last["comment"].log, fmt.Sprintf("loadgate: unchanged comment %d on #%d", commentID, prNum)) {
			t.Errorf("the second run left the comment alone but does not say unchanged")
		}
	default:
		t.Errorf("edited comments %v, want [%d]", edited, commentID)
	}
	h.checkComment(cs[0].Body, scen, v2, headSHA)

	// Nothing left behind: worktrees, stacks.
	if out := e2eGit(t, ws, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
		t.Errorf("worktrees left in the workspace:\n%s", out)
	}
	if out := e2eGit(t, ws, "status", "--porcelain", "--untracked-files=no"); out != "" {
		t.Errorf("the workspace's tracked files changed:\n%s", out)
	}
	h.checkNoLeftovers(ctx)
}

// actionFile is the part of action.yml a runner reads.
type actionFile struct {
	Inputs map[string]struct {
		Description string
		Required    bool
		Default     *string
	}
	Outputs map[string]struct{ Description, Value string }
	Runs    struct {
		Using string
		Steps []actionStep
	}
}

type actionStep struct {
	Name  string
	ID    string
	If    string
	Shell string
	Run   string
	Uses  string
	Env   map[string]string
	With  map[string]string
	// ContinueOnError: the step's failure does not fail the job (the
	// harness has no cache service: an actions/cache step with it is skipped).
	ContinueOnError bool `yaml:"continue-on-error"`
}

func (s *actionStep) label() string {
	if s.ID != "" {
		return s.ID
	}
	return s.Name
}

// The step keys this harness implements; any other (working-directory, …)
// fails the test instead of being ignored.
var e2eStepKeys = []string{"name", "id", "if", "shell", "run", "uses", "env", "with", "continue-on-error"}

func loadActionFile(t *testing.T, path string) *actionFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var act actionFile
	if err := yaml.Unmarshal(data, &act); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var raw struct {
		Runs struct {
			Steps []map[string]any
		}
	}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for i, st := range raw.Runs.Steps {
		for k := range st {
			if !slices.Contains(e2eStepKeys, k) {
				t.Fatalf("action.yml step %d uses %q, which this harness does not implement", i+1, k)
			}
		}
	}
	if act.Runs.Using != "composite" {
		t.Fatalf("action.yml runs.using %q, want composite", act.Runs.Using)
	}
	return &act
}

// stepRun is one executed run: step.
type stepRun struct {
	step    string
	code    int
	log     string
	outputs map[string]string
	took    time.Duration
}

type e2eHarness struct {
	t                         *testing.T
	act                       *actionFile
	root, ws, tmp, runnerTemp string
	summary                   string
	bin                       string

	contexts map[string]string            // github.*, runner.*
	inputs   map[string]string            // inputs.*
	env      map[string]string            // the runner's environment for every step
	outputs  map[string]map[string]string // steps.<id>.outputs
	last     map[string]*stepRun          // by step id, the latest run
	failed   bool                         // a step failed: only steps with a status function run
	runs     []*stepRun
	ran      []string
	n        int

	firstBody string
}

var (
	exprRE    = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)
	stepOutRE = regexp.MustCompile(`^steps\.([A-Za-z_][A-Za-z0-9_-]*)\.outputs\.([A-Za-z_][A-Za-z0-9_-]*)$`)
	ifRE      = regexp.MustCompile(`^((?:steps\.[A-Za-z_][A-Za-z0-9_-]*\.outputs|inputs|github)\.[A-Za-z_][A-Za-z0-9_-]*)\s*(==|!=)\s*'([^']*)'$`)
)

// eval evaluates the expressions this harness provides; anything else is
// an error, so that action.yml cannot depend on what is not stood in for.
func (h *e2eHarness) eval(expr string) (string, error) {
	if name, ok := strings.CutPrefix(expr, "inputs."); ok {
		v, ok := h.inputs[name]
		if !ok {
			return "", fmt.Errorf("inputs.%s is not an input of action.yml", name)
		}
		return v, nil
	}
	if v, ok := h.contexts[expr]; ok {
		return v, nil
	}
	if m := stepOutRE.FindStringSubmatch(expr); m != nil {
		if !slices.ContainsFunc(h.act.Runs.Steps, func(s actionStep) bool { return s.ID == m[1] }) {
			return "", fmt.Errorf("no step with id %s", m[1])
		}
		return h.outputs[m[1]][m[2]], nil // a step that did not set it, or did not run: ""
	}
	return "", fmt.Errorf("the expression %q is not provided by this harness", expr)
}

func (h *e2eHarness) expand(s, where string) string {
	h.t.Helper()
	var bad []string
	out := exprRE.ReplaceAllStringFunc(s, func(m string) string {
		v, err := h.eval(exprRE.FindStringSubmatch(m)[1])
		if err != nil {
			bad = append(bad, err.Error())
		}
		return v
	})
	if len(bad) > 0 {
		h.t.Fatalf("action.yml %s: %s", where, strings.Join(bad, "; "))
	}
	return out
}

// cond evaluates a step's if: a conjunction (&&) of !cancelled(),
// always(), success() and steps.<id>.outputs.<name>, inputs.<name> or
// github.<name> == or != '<value>'.
// Without a status function, success() is implied: the step runs only when
// no earlier one failed.
func (h *e2eHarness) cond(st *actionStep) bool {
	h.t.Helper()
	terms, err := parseCond(st.If)
	if err != nil {
		h.t.Fatalf("step %q: %v", st.label(), err)
	}
	status := false
	ok := true
	for _, c := range terms {
		switch c {
		case "!cancelled()", "always()":
			status = true // the harness never cancels
			continue
		case "success()":
			status, ok = true, ok && !h.failed
			continue
		}
		m := ifRE.FindStringSubmatch(c)
		v, err := h.eval(m[1])
		if err != nil {
			h.t.Fatalf("step %q: if: %v", st.label(), err)
		}
		ok = ok && (v == m[3]) == (m[2] == "==")
	}
	if !status && h.failed {
		return false
	}
	return ok
}

// parseCond splits an if: into the terms cond evaluates.
func parseCond(s string) ([]string, error) {
	c := strings.TrimSpace(s)
	if c == "" {
		return nil, nil
	}
	if m := exprRE.FindStringSubmatch(c); m != nil && m[0] == c {
		c = m[1]
	}
	var terms []string
	for _, t := range strings.Split(c, "&&") {
		t = strings.TrimSpace(t)
		switch {
		case t == "!cancelled()" || t == "always()" || t == "success()" || ifRE.MatchString(t):
			terms = append(terms, t)
		default:
			return nil, fmt.Errorf("if: %q: %q is not a term this harness evaluates (!cancelled(), always(), success(), steps.<id>.outputs.<name>, inputs.<name> or github.<name> == or != '<value>')", s, t)
		}
	}
	return terms, nil
}

// resolveInputs gives every input its value: the test's, else action.yml's
// default (evaluated).
func (h *e2eHarness) resolveInputs(given map[string]string) map[string]string {
	h.t.Helper()
	h.inputs = map[string]string{}
	for name := range given {
		if _, ok := h.act.Inputs[name]; !ok {
			h.t.Fatalf("the test sets input %s, which action.yml does not declare", name)
		}
	}
	names := make([]string, 0, len(h.act.Inputs))
	for name := range h.act.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		in := h.act.Inputs[name]
		if v, ok := given[name]; ok {
			h.inputs[name] = v
			continue
		}
		if in.Required {
			h.t.Fatalf("required input %s is not set by the test", name)
		}
		if in.Default != nil {
			h.inputs[name] = h.expand(*in.Default, "inputs."+name+".default")
		} else {
			h.inputs[name] = ""
		}
	}
	return h.inputs
}

// step runs one step as the runner would and returns its exit code (0 for a
// skipped step).
func (h *e2eHarness) step(ctx context.Context, st *actionStep) int {
	t := h.t
	t.Helper()
	if !h.cond(st) {
		t.Logf("step %q: skipped (if: %s)", st.label(), st.If)
		return 0
	}
	if st.Uses != "" {
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = h.expand(v, fmt.Sprintf("step %q with.%s", st.label(), k))
		}
		if strings.HasPrefix(st.Uses, "actions/cache/") && st.ContinueOnError {
			t.Logf("step %q: uses %s skipped: no cache service here, and the step may fail (with %v)", st.label(), st.Uses, with)
			return 0
		}
		if !strings.HasPrefix(st.Uses, "actions/setup-go@") {
			t.Fatalf("step %q uses %s: this harness stands in only for actions/setup-go", st.label(), st.Uses)
		}
		if gm := with["go-version-file"]; gm != "" {
			if _, err := os.Stat(gm); err != nil {
				t.Errorf("step %q: go-version-file: %v", st.label(), err)
			}
		}
		t.Logf("step %q: uses %s skipped: Go is on this machine (with %v)", st.label(), st.Uses, with)
		return 0
	}
	if st.Shell != "bash" {
		t.Fatalf("step %q: shell %q: this harness runs shell: bash only (composite run steps must name their shell)", st.label(), st.Shell)
	}
	h.n++
	n := h.n
	script := filepath.Join(h.runnerTemp, fmt.Sprintf("step-%d.sh", n))
	if err := os.WriteFile(script, []byte(h.expand(st.Run, fmt.Sprintf("step %q run", st.label()))), 0o644); err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(h.runnerTemp, "_runner_file_commands")
	output := filepath.Join(files, fmt.Sprintf("set_output_%d", n))
	envFile := filepath.Join(files, fmt.Sprintf("set_env_%d", n))
	pathFile := filepath.Join(files, fmt.Sprintf("add_path_%d", n))
	for _, p := range []string{output, envFile, pathFile} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{}
	for k, v := range h.env {
		env[k] = v
	}
	env["GITHUB_OUTPUT"], env["GITHUB_ENV"], env["GITHUB_PATH"] = output, envFile, pathFile
	for k, v := range st.Env {
		env[k] = h.expand(v, fmt.Sprintf("step %q env.%s", st.label(), k))
	}
	var envList []string
	for k, v := range env {
		envList = append(envList, k+"="+v)
	}
	sort.Strings(envList)

	var log bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
	cmd.Dir, cmd.Env = h.ws, envList
	cmd.Stdout, cmd.Stderr = &log, &log
	// On the deadline, interrupt the step's whole process group as a
	// cancelled job does, so that loadgate tears its stacks down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 2 * time.Minute
	start := time.Now()
	err := cmd.Run()
	r := &stepRun{step: st.label(), took: time.Since(start)}
	r.log = log.String()
	h.runs = append(h.runs, r)
	h.ran = append(h.ran, st.label())
	if h.last == nil {
		h.last = map[string]*stepRun{}
	}
	if st.ID != "" {
		h.last[st.ID] = r
	}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok || ctx.Err() != nil {
			t.Fatalf("step %q: %v (after %s; context: %v)", st.label(), err, r.took.Round(time.Millisecond), ctx.Err())
		}
		r.code = ee.ExitCode()
		h.failed = true
	}
	r.outputs = e2eParseOutputs(t, output)
	if st.ID != "" {
		h.outputs[st.ID] = r.outputs
	}
	for _, p := range []string{envFile, pathFile} {
		if b, _ := os.ReadFile(p); len(b) > 0 {
			t.Fatalf("step %q wrote %s (%q): this harness does not apply GITHUB_ENV / GITHUB_PATH", st.label(), filepath.Base(p), b)
		}
	}
	t.Logf("step %q: exit %d in %s, outputs %v", st.label(), r.code, r.took.Round(time.Millisecond), r.outputs)
	return r.code
}

// e2eParseOutputs reads a GITHUB_OUTPUT file as the runner does: name=value
// lines and name<<DELIM … DELIM blocks; a later value wins.
func e2eParseOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		eq, lt := strings.Index(l, "="), strings.Index(l, "<<")
		switch {
		case lt > 0 && (eq < 0 || lt < eq):
			name, delim := l[:lt], l[lt+2:]
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("%s: %s: no closing delimiter %q", path, name, delim)
			}
			out[name] = strings.Join(val, "\n")
		case eq > 0:
			out[l[:eq]] = l[eq+1:]
		default:
			t.Fatalf("%s: line %q is neither name=value nor name<<DELIM", path, l)
		}
	}
	return out
}

var documentedVerdicts = []verdict.Value{
	verdict.Pass, verdict.Fail, verdict.Regression, verdict.Improvement,
	verdict.Inconclusive, verdict.NotMeasured, verdict.Unusable,
}

// checkGate checks one run of the gate step: exit code, outputs, results
// directory, job summary. run is 1 or 2 (the job summary then holds that
// many reports). It returns the verdict.
func (h *e2eHarness) checkGate(r *stepRun, resultsDir, baseSHA, headSHA string, run int) verdict.Value {
	t := h.t
	t.Helper()
	if r == nil {
		t.Fatal("the gate step did not run")
	}
	out := r.outputs
	for _, name := range action.OutputNames {
		if _, ok := out[name]; !ok {
			t.Errorf("gate run %d: output %s not set (outputs %v)", run, name, out)
		}
	}
	v := verdict.Value(out[action.OutVerdict])
	if !slices.Contains(documentedVerdicts, v) {
		t.Fatalf("gate run %d: verdict output %q is not a documented value %v", run, v, documentedVerdicts)
	}
	if v == verdict.Unusable {
		t.Fatalf("gate run %d: the demo gate is unusable (exit %d)", run, r.code)
	}
	failOn := action.FailOn(h.inputs["fail-on"])
	if want := action.ExitCode(verdict.Verdict{Value: v}, failOn); r.code != want {
		t.Errorf("gate run %d: exit %d with verdict %s under fail-on %s, want %d", run, r.code, v, failOn, want)
	}
	if r.code != 0 && r.code != 1 {
		t.Errorf("gate run %d: exit %d", run, r.code)
	}

	// results-dir: the input's directory, with the report, the verdict and
	// every side's round.
	if out[action.OutResultsDir] != resultsDir {
		t.Errorf("gate run %d: results-dir output %q, want %q", run, out[action.OutResultsDir], resultsDir)
	}
	if want := filepath.Join(resultsDir, "report.md"); out[action.OutReport] != want {
		t.Errorf("gate run %d: report output %q, want %q", run, out[action.OutReport], want)
	}
	md := e2eRead(t, out[action.OutReport])
	if last := e2eLastHeading(md); last != "## Verdict" {
		t.Errorf("gate run %d: the report's last section is %q, want ## Verdict", run, last)
	}
	var vj struct {
		Value     verdict.Value             `json:"value"`
		ExitCode  int                       `json:"exit_code"`
		Workloads []verdict.WorkloadVerdict `json:"workloads"`
		Scenario  struct{ Name, Hash string }
		Rounds    int
		Sides     []struct{ Name, Commit string }
	}
	if err := json.Unmarshal([]byte(e2eRead(t, filepath.Join(resultsDir, "verdict.json"))), &vj); err != nil {
		t.Fatalf("verdict.json: %v", err)
	}
	rounds, _ := strconv.Atoi(h.inputs["rounds"])
	if vj.Value != v || vj.Scenario.Name != "demo-gate" || vj.Rounds != rounds {
		t.Errorf("gate run %d: verdict.json value %q scenario %q rounds %d, want %q demo-gate %d", run, vj.Value, vj.Scenario.Name, vj.Rounds, v, rounds)
	}
	commits := map[string]string{}
	for _, s := range vj.Sides {
		commits[s.Name] = s.Commit
	}
	if commits["base"] != baseSHA || commits["head"] != headSHA {
		t.Errorf("gate run %d: sides %v, want base %s (the event's base) and head %s (the clean working tree)", run, commits, baseSHA, headSHA)
	}
	var regs []string
	if err := json.Unmarshal([]byte(out[action.OutRegressions]), &regs); err != nil || regs == nil {
		t.Errorf("gate run %d: regressions output %q is not a JSON array: %v", run, out[action.OutRegressions], err)
	}
	if want := action.Regressions(verdict.Verdict{Value: vj.Value, Workloads: vj.Workloads}); !slices.Equal(regs, want) {
		t.Errorf("gate run %d: regressions %q, verdict.json's workloads give %q", run, regs, want)
	}
	for _, side := range []string{"base", "head"} {
		for i := 1; i <= rounds; i++ {
			p := filepath.Join(resultsDir, side, fmt.Sprintf("round-%d", i), "result.json")
			var res struct {
				Side, Commit string
				Usable       bool
				Scenario     struct{ Hash string }
			}
			if err := json.Unmarshal([]byte(e2eRead(t, p)), &res); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if res.Side != side || res.Commit != commits[side] || !res.Usable || res.Scenario.Hash != vj.Scenario.Hash {
				t.Errorf("%s: side %q commit %q usable %v hash %q", p, res.Side, res.Commit, res.Usable, res.Scenario.Hash)
			}
		}
	}

	// The job summary: this run's report appended, the verdict last.
	sum := e2eRead(t, h.summary)
	// One title per run (the comment step adds the verdict word to the
	// comment's title only), each followed by its bold headline.
	const title = "# loadgate gate: demo-gate"
	if n := strings.Count("\n"+sum, "\n"+title+"\n\n**"); n != run {
		t.Errorf("gate run %d: the job summary holds %d gate reports with a headline, want %d", run, n, run)
	}
	if last := e2eLastTitle(sum); last != title {
		t.Errorf("gate run %d: the job summary's last report is titled %q, want %q", run, last, title)
	}
	// The summary is comment.md (the answer first, the rest collapsed),
	// and report.md opens with the same headline.
	cm := e2eRead(t, filepath.Join(resultsDir, "comment.md"))
	if !strings.Contains(sum, strings.TrimSpace(cm)) {
		t.Errorf("gate run %d: the job summary does not hold comment.md", run)
	}
	if hl := strings.SplitN(cm, "\n", 4); len(hl) < 4 || !strings.Contains(md, hl[2]) {
		t.Errorf("gate run %d: report.md does not open with comment.md's headline", run)
	}

	// Annotations: one error per workload that fails the step.
	if r.code == 1 && len(regs) > 0 && !strings.Contains(r.log, "::error ") {
		t.Errorf("gate run %d: exit 1 with regressions %v and no ::error annotation", run, regs)
	}
	// The gate step never has the token; the comment step masks it before
	// anything else is printed, and prints it only there.
	if strings.Contains(r.log, token) {
		t.Errorf("gate run %d: the token appears in the gate step's log", run)
	}
	if c := h.last["comment"]; c != nil {
		for _, l := range strings.Split(c.log, "\n") {
			if strings.Contains(l, token) && l != "::add-mask::"+token {
				t.Errorf("gate run %d: the token appears in the comment step's log: %q", run, l)
			}
		}
	}
	if strings.Contains(sum, token) {
		t.Errorf("the token appears in the job summary")
	}
	return v
}

func (h *e2eHarness) checkComment(body, scen string, v verdict.Value, headSHA string) {
	t := h.t
	t.Helper()
	if h.firstBody == "" {
		h.firstBody = body
	}
	if !strings.HasPrefix(body, action.Marker(scen)+"\n") {
		t.Errorf("the comment does not start with the marker line: %.120q", body)
	}
	for _, want := range []string{
		"\n# loadgate gate: " + scen + " — " + action.VerdictWord(v) + "\n", // the verdict word in the title
		"head `" + headSHA[:12] + "`",
		"[workflow run](https://github.com/" + owner + "/" + repo + "/actions/runs/4242)",
		"[results artifact](https://github.com/" + owner + "/" + repo + "/actions/runs/4242#artifacts)",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q", want)
		}
	}
	// The answer first: one bold headline under the title.
	if lines := strings.SplitN(body, "\n", 5); len(lines) < 5 || !strings.HasPrefix(lines[3], "**") || !strings.HasSuffix(lines[3], "**") {
		t.Errorf("the comment's fourth line is not the bold headline: %.200q", body)
	}
	if strings.Contains(body, token) {
		t.Error("the comment carries the token")
	}
}

var projectRE = regexp.MustCompile(`\bloadgate-([0-9a-f]{10})-(?:base|head)\b`)

// checkNoLeftovers checks that no container, network, volume or image of
// this test's gate runs (their run ids, from the stack log lines) remains.
// Other runs on the same engine (other tests) are not this test's concern.
func (h *e2eHarness) checkNoLeftovers(ctx context.Context) {
	t := h.t
	t.Helper()
	ids := map[string]bool{}
	gates := 0
	for _, r := range h.runs {
		if r.step != "gate" {
			continue
		}
		gates++
		found := false
		for _, m := range projectRE.FindAllStringSubmatch(r.log, -1) {
			ids[m[1]], found = true, true
		}
		if !found {
			t.Errorf("no stack project name (loadgate-<run id>-<side>) in a gate step's log: cannot check its teardown")
		}
	}
	if len(ids) < gates {
		t.Errorf("%d gate runs, %d distinct run ids %v", gates, len(ids), ids)
	}
	for id := range ids {
		left := enginetest.Leftovers(t, compose.LabelRun+"="+id)
		if len(left) > 0 {
			t.Errorf("run %s left %s", id, strings.Join(left, "; "))
		}
	}
}

// cleanup runs even when the test failed: the step logs, then loadgate's
// sweep of dead runs' resources and any worktree the gate left.
func (h *e2eHarness) cleanup() {
	t := h.t
	if t.Failed() {
		for _, r := range h.runs {
			t.Logf("---- step %q (exit %d, %s) log:\n%s", r.step, r.code, r.took.Round(time.Millisecond), r.log)
		}
		if b, err := os.ReadFile(h.summary); err == nil {
			t.Logf("---- job summary:\n%s", b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if h.bin != "" {
		cmd := exec.CommandContext(ctx, h.bin, "down", "--all")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("cleanup: loadgate down --all: %v\n%s", err, out)
		}
	}
	out, err := exec.CommandContext(ctx, "git", "-C", h.ws, "worktree", "list", "--porcelain").Output()
	if err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			p, ok := strings.CutPrefix(l, "worktree ")
			if !ok || p == h.ws {
				continue
			}
			if b, err := exec.CommandContext(ctx, "git", "-C", h.ws, "worktree", "remove", "--force", p).CombinedOutput(); err != nil {
				t.Logf("cleanup: worktree %s: %v: %s", p, err, b)
				os.RemoveAll(p)
			}
		}
	}
}

func e2eRequireEngine(t *testing.T) { t.Helper(); enginetest.Require(t, "TestActionEndToEnd") }

// e2eRepoRoot is this repository's root: the action's own checkout.
func e2eRepoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"action.yml", "go.mod", "examples/demo/gate.yaml"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Fatalf("%s is not the repository root: %v", root, err)
		}
	}
	return root
}

func e2eRunnerArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "X64"
	case "arm64":
		return "ARM64"
	case "386":
		return "X86"
	case "arm":
		return "ARM"
	}
	return strings.ToUpper(runtime.GOARCH)
}

func e2eGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	full := append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=master"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(string(out))
}

// e2eWorkspace makes the pull request's repository: this module's go.mod
// and go.sum, the demo (examples/demo: compose.yaml, gate.yaml, build.sh,
// service/ and stub/ without their built bin/) and the module packages
// build.sh builds, committed as base, then a head commit
// that only adds a comment to gate.yaml (the load, and so its hash, is the
// same).
func e2eWorkspace(t *testing.T, root, ws string) (dir, base, head string) {
	t.Helper()
	demo := filepath.Join(root, "examples", "demo")
	dst := filepath.Join(ws, "examples", "demo")
	for _, f := range []string{"go.mod", "go.sum"} {
		e2eCopyFile(t, filepath.Join(root, f), filepath.Join(ws, f))
	}
	for _, f := range []string{"compose.yaml", "gate.yaml", "build.sh"} {
		e2eCopyFile(t, filepath.Join(demo, f), filepath.Join(dst, f))
	}
	for _, ctx := range []string{"service", "stub"} { // the Docker build contexts
		from := filepath.Join(demo, ctx)
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			if d.IsDir() {
				if rel == "bin" {
					return filepath.SkipDir
				}
				return nil
			}
			e2eCopyFile(t, p, filepath.Join(dst, ctx, rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The module's own packages build.sh builds (the service, and loadgate
	// itself for the stub): without them the base side cannot build.
	// Their embedded files (cmd/loadgate's help texts) too.
	deps := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{.Dir}} {{join .EmbedFiles \" \"}}{{end}}", "./examples/demo/service", "./cmd/loadgate")
	deps.Dir = root
	out, err := deps.Output()
	if err != nil {
		t.Fatalf("go list the packages build.sh builds: %v", err)
	}
	const module = "github.com/loadgate/loadgate/"
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(fields[0], module) || strings.HasPrefix(fields[0], module+"examples/demo/") {
			continue
		}
		path, dir := fields[0], fields[1]
		for _, e := range fields[2:] {
			e2eCopyFile(t, filepath.Join(dir, e), filepath.Join(ws, strings.TrimPrefix(path, module), e))
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				e2eCopyFile(t, f, filepath.Join(ws, strings.TrimPrefix(path, module), filepath.Base(f)))
			}
		}
	}
	e2eGit(t, ws, "init", "-q")
	e2eGit(t, ws, "add", "-A")
	e2eGit(t, ws, "commit", "-q", "-m", "base: the demo")
	base = e2eGit(t, ws, "rev-parse", "HEAD")
	f, err := os.OpenFile(filepath.Join(dst, "gate.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(f, "# head: a comment only; the load and its hash are unchanged\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	e2eGit(t, ws, "commit", "-q", "-am", "head: a harmless change")
	head = e2eGit(t, ws, "rev-parse", "HEAD")
	if files := e2eGit(t, ws, "ls-files"); strings.Contains(files, "service/bin/") {
		t.Fatalf("the built binary was committed:\n%s", files)
	}
	return ws, base, head
}

func e2eCopyFile(t *testing.T, from, to string) {
	t.Helper()
	fi, err := os.Stat(from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// e2eEvent writes the pull_request synchronize fixture with its base and
// head commits replaced by the workspace's.
func e2eEvent(t *testing.T, path, base, head string) string {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal([]byte(e2eRead(t, filepath.Join("testdata", "pull_request-synchronize.json"))), &ev); err != nil {
		t.Fatal(err)
	}
	pr, _ := ev["pull_request"].(map[string]any)
	b, _ := pr["base"].(map[string]any)
	hd, _ := pr["head"].(map[string]any)
	if pr == nil || b == nil || hd == nil || pr["number"] != float64(prNum) {
		t.Fatal("testdata/pull_request-synchronize.json: no pull_request #2 with base and head")
	}
	b["sha"], hd["sha"] = base, head
	data, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func e2eRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func e2eLastHeading(md string) string { return e2eLast(md, "## ") }

// e2eLastTitle is the last level-one heading of md.
func e2eLastTitle(md string) string { return e2eLast(md, "# ") }

// e2eLast is md's last line starting with prefix, trimmed.
func e2eLast(md, prefix string) string {
	last := ""
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, prefix) {
			last = strings.TrimSpace(l)
		}
	}
	return last
}

func e2eIDs(cs []*fakeComment) []int64 {
	var ids []int64
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestActionHarness checks, without Docker, that every expression and if:
// in action.yml is one TestActionEndToEnd provides, and the harness's
// GITHUB_OUTPUT reading.
func TestActionHarness(t *testing.T) {
	act := loadActionFile(t, filepath.Join(e2eRepoRoot(t), "action.yml"))
	h := &e2eHarness{t: t, act: act, outputs: map[string]map[string]string{}, contexts: map[string]string{
		"github.action_path": "/a", "github.action_ref": "", "github.action_repository": "",
		"github.server_url": "https://github.com", "github.token": "x", "github.event_name": "pull_request", "runner.os": "Linux", "runner.arch": "X64", "runner.temp": "/t",
	}}
	h.resolveInputs(map[string]string{"scenario": "s.yaml"})
	check := func(where, s string) {
		for _, m := range exprRE.FindAllStringSubmatch(s, -1) {
			if _, err := h.eval(m[1]); err != nil {
				t.Errorf("%s: %v", where, err)
			}
		}
	}
	for name, o := range act.Outputs {
		check("outputs."+name, o.Value)
	}
	for _, st := range act.Runs.Steps {
		check(st.label()+" run", st.Run)
		for k, v := range st.Env {
			check(st.label()+" env."+k, v)
		}
		for k, v := range st.With {
			check(st.label()+" with."+k, v)
		}
		if _, err := parseCond(st.If); err != nil {
			t.Errorf("step %q: %v", st.label(), err)
		}
	}
	for _, bad := range []string{"github.event.pull_request.head.sha", "inputs.nope", "steps.nope.outputs.x", "env.X", "secrets.T"} {
		if _, err := h.eval(bad); err == nil {
			t.Errorf("eval(%q): no error", bad)
		}
	}

	p := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(p, []byte("path=/x/y=z\nverdict<<EOF_1\npass\nEOF_1\nmulti<<D\na\nb\nD\npath=/again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := e2eParseOutputs(t, p)
	if want := map[string]string{"path": "/again", "verdict": "pass", "multi": "a\nb"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("outputs %v, want %v", got, want)
	}
}
