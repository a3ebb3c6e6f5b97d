package actrunner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spec is one act run: a workflow of a repository on one event.
type Spec struct {
	Repo     *Repo
	Workflow string // the workflow file, relative to Repo.Dir
	Event    string // pull_request, push, workflow_dispatch, …
	Payload  []byte // the event JSON (GITHUB_EVENT_PATH)
	Job      string // the job to run; empty, every job the event triggers

	Uses    map[string]string // more actions' local directories (act --local-repository)
	Env     map[string]string // more runner environment (act --env)
	Secrets map[string]string // secrets; GITHUB_TOKEN defaults to a dummy
	Timeout time.Duration     // the whole run; 0 means 15 minutes
}

// Result is what a run left, read from act's JSON log.
type Result struct {
	Exit      int               // act's exit status
	JobResult string            // "success" or "failure", as act logged it
	StepExit  map[string]int    // step id ("gate", or "gate/bin" in a composite) → its non-zero exit status
	Steps     map[string]string // step id → "success", "failure" or "skipped"
	Outputs   map[string]map[string]string
	Summary   string   // every step's $GITHUB_STEP_SUMMARY, in order
	Messages  []string // every log line's message, in order

	Uploaded map[string][]byte // artifact name → its zip, as act's artifact server stored it
	Wall     time.Duration
}

// Output is the output name of step id, "" when it set none.
func (r *Result) Output(step, name string) string { return r.Outputs[step][name] }

// Log is the run's messages, one a line.
func (r *Result) Log() string { return strings.Join(r.Messages, "\n") }

// Grep is the messages containing s.
func (r *Result) Grep(s string) []string {
	var out []string
	for _, m := range r.Messages {
		if strings.Contains(m, s) {
			out = append(out, m)
		}
	}
	return out
}

// Run runs spec with act in self-hosted mode in a new directory under dir, removed when it
// returns. When spec.Timeout or ctx ends, act gets SIGINT (it cancels the job, running its
// cleanup), then SIGKILL a minute later. api is the GitHub API the run sees (nil: none).
func (t *Tools) Run(ctx context.Context, dir string, spec Spec, api *API) (*Result, error) {
	start := time.Now()
	run, err := os.MkdirTemp(dir, "act-run-")
	if err != nil {
		return nil, fmt.Errorf("actrunner: run directory: %w", err)
	}
	defer os.RemoveAll(run)
	args, artifacts, err := t.actArgs(run, spec, api)
	if err != nil {
		return nil, err
	}
	timeout := spec.Timeout
	if timeout == 0 {
		timeout = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.Act, args...)
	cmd.Dir = spec.Repo.Dir
	cmd.Env = append(os.Environ(), "ACT_DISABLE_VERSION_CHECK=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = time.Minute
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever of its group is left
	}
	res := parse(stdout.Bytes())
	res.Wall = time.Since(start)
	res.Messages = append(res.Messages, strings.Split(strings.TrimSpace(stderr.String()), "\n")...)
	var uerr error
	if res.Uploaded, uerr = uploaded(artifacts); uerr != nil {
		return res, uerr
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("actrunner: act %s %s: ended after %s: %w\n%s", spec.Event, spec.Workflow, res.Wall.Round(time.Second), ctx.Err(), tail(res.Log(), 4000))
	}
	if ee, ok := err.(*exec.ExitError); ok {
		res.Exit = ee.ExitCode()
	} else if err != nil {
		return res, fmt.Errorf("actrunner: act %s %s: %w", spec.Event, spec.Workflow, err)
	}
	return res, nil
}

// actArgs fills the run directory and returns act's arguments and the artifacts directory.
func (t *Tools) actArgs(run string, spec Spec, api *API) ([]string, string, error) {
	cache, artifacts := filepath.Join(run, "cache"), filepath.Join(run, "artifacts")
	if err := toolCache(spec.Repo.Dir, filepath.Join(cache, "tool_cache")); err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return nil, "", err
	}
	event := filepath.Join(run, "event.json")
	if err := os.WriteFile(event, spec.Payload, 0o644); err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	args := []string{spec.Event, "-e", event, "-W", spec.Workflow,
		"-P", "ubuntu-latest=-self-hosted", "--json",
		"--action-cache-path", cache, "--action-offline-mode", "--no-cache-server",
		"--artifact-server-path", artifacts, "--artifact-server-addr", "127.0.0.1", "--artifact-server-port", strconv.Itoa(port)}
	if spec.Job != "" {
		args = append(args, "-j", spec.Job)
	}
	env := map[string]string{}
	if api != nil {
		env["GITHUB_API_URL"], env["GITHUB_SERVER_URL"] = api.APIURL(), api.ServerURL()
		env["GITHUB_GRAPHQL_URL"] = api.GraphQLURL()
	}
	args = appendPairs(args, "--local-repository", merged(t.Local, spec.Uses))
	args = appendPairs(args, "--env", merged(env, spec.Env))
	args = appendPairs(args, "-s", merged(map[string]string{"GITHUB_TOKEN": Token}, spec.Secrets))
	return args, artifacts, nil
}

// appendPairs appends flag and KEY=VALUE for each of m's entries, in key order.
func appendPairs(args []string, flag string, m map[string]string) []string {
	for _, k := range sortedKeys(m) {
		args = append(args, flag, k+"="+m[k])
	}
	return args
}

// merged is a copy of base with over's entries on top.
func merged(base, over map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}

// uploaded reads act's artifact directory: <run id>/<name>/<name>.zip.
func uploaded(dir string) (map[string][]byte, error) {
	zips, err := filepath.Glob(filepath.Join(dir, "*", "*", "*.zip"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, z := range zips {
		name := filepath.Base(filepath.Dir(z))
		if filepath.Base(z) != name+".zip" {
			continue
		}
		b, err := os.ReadFile(z)
		if err != nil {
			return nil, fmt.Errorf("actrunner: artifact %s: %w", name, err)
		}
		out[name] = b
	}
	return out, nil
}

var exitStatus = regexp.MustCompile(`^exit status (\d+)$`)

// parse reads act's JSON log, one object a line (other lines are messages).
func parse(log []byte) *Result {
	r := &Result{StepExit: map[string]int{}, Steps: map[string]string{}, Outputs: map[string]map[string]string{}}
	var summary strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Msg        string   `json:"msg"`
			StepID     []string `json:"stepID"`
			StepResult string   `json:"stepResult"`
			JobResult  string   `json:"jobResult"`
			Command    string   `json:"command"`
			Name       string   `json:"name"`
			Arg        string   `json:"arg"`
			Content    string   `json:"content"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			r.Messages = append(r.Messages, sc.Text())
			continue
		}
		r.Messages = append(r.Messages, strings.TrimRight(e.Msg, "\n"))
		id := strings.Join(e.StepID, "/")
		switch {
		case e.JobResult != "":
			r.JobResult = e.JobResult
		case e.Command == "set-output":
			if r.Outputs[id] == nil {
				r.Outputs[id] = map[string]string{}
			}
			r.Outputs[id][e.Name] = e.Arg
		case e.Command == "summary":
			summary.WriteString(e.Content)
		case e.StepResult != "" && id != "":
			r.Steps[id] = e.StepResult
		}
		if m := exitStatus.FindStringSubmatch(e.Msg); m != nil && id != "" {
			r.StepExit[id], _ = strconv.Atoi(m[1])
		}
	}
	r.Summary = summary.String()
	return r
}

// toolCache puts this machine's Go in the tool cache as go.mod's version, for setup-go offline.
func toolCache(repo, dir string) error {
	b, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return nil // no Go module: nothing for setup-go
	}
	version := ""
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "toolchain":
			version = strings.TrimPrefix(f[1], "go")
		case len(f) == 2 && f[0] == "go" && version == "":
			version = f[1]
		}
	}
	if version == "" {
		return fmt.Errorf("actrunner: %s/go.mod: no go line", repo)
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	d := filepath.Join(dir, "go", version)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("actrunner: go env GOROOT: %w", err)
	}
	if err := os.Symlink(strings.TrimSpace(string(goroot)), filepath.Join(d, arch)); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d, arch+".complete"), nil, 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("actrunner: a port for the artifact server: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
