//go:build linux

package action_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/internal/testtier"
)

// Issue 33: the gate step had the token in its environment (INPUT_GITHUB-TOKEN,
// and whatever the job's env set), and the pull request's stack.prepare,
// though given a scrubbed environment itself, could read it from its
// parents' /proc/<pid>/environ. Here action.yml's steps run as the runner
// runs them, with GITHUB_TOKEN, GH_TOKEN and an OIDC request token also in
// the job's environment; the head's prepare script stops the gate while the
// test reads the environment of every process of the gate step's tree: no
// token anywhere. The comment step after it still comments with the token.
//
// The prepare script fails once read, so no Docker engine is needed. It
// builds loadgate from this checkout (the action's build step), so e2e tier.
func TestRegression_NoTokenInTheGatesProcessTree(t *testing.T) {
	testtier.Require(t, testtier.E2E)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go on PATH: the action builds loadgate with it: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	root := e2eRepoRoot(t)
	tmp := t.TempDir()
	// The FIFOs lie where the prepare box shows them (read-only, which a FIFO
	// does not mind): not under /tmp or $TMPDIR, which the box covers.
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	fifos, err := os.MkdirTemp(cache, "loadgate-token-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(fifos) })
	pidFIFO, goFIFO := filepath.Join(fifos, "pid.fifo"), filepath.Join(fifos, "go.fifo")
	for _, p := range []string{pidFIFO, goFIFO} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws, baseSHA, headSHA := tokenWorkspace(t, filepath.Join(tmp, "workspace"), pidFIFO, goFIFO)

	fake := newFake(t)
	fake.Login = "loadgate-e2e"
	h := &e2eHarness{
		t: t, act: loadActionFile(t, filepath.Join(root, "action.yml")), root: root, ws: ws, tmp: tmp,
		runnerTemp: filepath.Join(tmp, "runner-temp"),
		summary:    filepath.Join(tmp, "runner-temp", "_runner_file_commands", "step_summary"),
		outputs:    map[string]map[string]string{},
	}
	if err := os.MkdirAll(filepath.Dir(h.summary), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.summary, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h.contexts = map[string]string{
		"github.action_path": root, "github.action_ref": "", "github.action_repository": "",
		"github.server_url": "https://github.com", "github.token": token, "github.event_name": "pull_request",
		"runner.os": "Linux", "runner.arch": e2eRunnerArch(), "runner.temp": h.runnerTemp,
	}
	const oidc = "oidc-request-secret-4711"
	h.env = map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true",
		"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": e2eEvent(t, filepath.Join(tmp, "event.json"), baseSHA, headSHA),
		"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_REPOSITORY_OWNER": owner,
		"GITHUB_API_URL": fake.URL(), "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_STEP_SUMMARY": h.summary, "GITHUB_SHA": headSHA, "GITHUB_RUN_ID": "4242",
		"GITHUB_WORKSPACE": ws, "GITHUB_ACTION_PATH": root, "RUNNER_OS": "Linux",
		"RUNNER_ARCH": e2eRunnerArch(), "RUNNER_TEMP": h.runnerTemp,
		// A workflow's job env handing the token around, as many do.
		"GITHUB_TOKEN": token, "GH_TOKEN": token,
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc, "ACTIONS_ID_TOKEN_REQUEST_URL": "https://oidc.example/?t=" + oidc,
	}
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "TMPDIR", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS",
		"GOTOOLCHAIN", "GOPROXY", "GOSUMDB", "DOCKER_HOST"} {
		if v, ok := os.LookupEnv(k); ok {
			h.env[k] = v
		}
	}
	h.env["PATH"] = filepath.Dir(goBin) + string(os.PathListSeparator) + h.env["PATH"]
	h.inputs = h.resolveInputs(map[string]string{
		"scenario": "scenario.yaml", "rounds": "1", "duet": "false",
		"github-token": token, "results-dir": filepath.Join(tmp, "results"),
	})
	t.Cleanup(h.cleanup)
	secrets := []string{token, oidc}

	// Positive control: the reader finds a token where there is one (read
	// once cat has echoed a line: its exec is complete).
	ctl := exec.Command("cat")
	ctl.Env = []string{"SOME_TOKEN=" + token}
	in, err := ctl.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	echo, err := ctl.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(in, "ready\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(echo).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if hits := environHits(ctl.Process.Pid, secrets); len(hits) == 0 {
		t.Errorf("the control process's environ holds the token, the reader does not find it")
	}
	in.Close()
	_ = ctl.Wait()

	// While the gate step runs: the prepare script's pid, then every process
	// of the step's tree read, then the script released.
	type scan struct {
		tree []string // pid and command of each process read
		hits []string // where a secret was found
		err  error
	}
	scanned := make(chan scan, 1)
	go func() {
		var s scan
		defer func() { scanned <- s }()
		b, err := os.ReadFile(pidFIFO) // blocks until the prepare script writes
		if err != nil {
			s.err = err
			return
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			s.err = fmt.Errorf("prepare wrote %q: %w", b, err)
			return
		}
		for _, p := range stepTree(pid, os.Getpid()) {
			s.tree = append(s.tree, fmt.Sprintf("%d %s", p, procComm(p)))
			for _, hit := range environHits(p, secrets) {
				s.hits = append(s.hits, fmt.Sprintf("pid %d (%s): %s", p, procComm(p), hit))
			}
		}
		s.err = os.WriteFile(goFIFO, []byte("go\n"), 0) // release the script
	}()

	for i := range h.act.Runs.Steps {
		st := &h.act.Runs.Steps[i]
		if code := h.step(ctx, st); code != 0 && st.ID != "gate" {
			t.Fatalf("step %q exited %d", st.label(), code)
		}
		if st.ID == "gate" {
			var s scan
			select {
			case s = <-scanned:
			case <-time.After(10 * time.Second): // prepare never wrote: end the reader's open
				if f, err := os.OpenFile(pidFIFO, os.O_RDWR, 0); err == nil {
					f.Close()
				}
				s = <-scanned
				s.err = fmt.Errorf("the prepare script never wrote its pid (%v): is %s hidden in the box?", s.err, pidFIFO)
			}
			if s.err != nil {
				t.Fatalf("reading the gate step's processes: %v", s.err)
			}
			t.Logf("the gate step's processes while prepare ran: %v", s.tree)
			if len(s.tree) < 3 {
				t.Errorf("read %d processes (%v), want at least the step's shell, loadgate and prepare", len(s.tree), s.tree)
			}
			for _, hit := range s.hits {
				t.Errorf("a credential where the pull request's code runs: %s", hit)
			}
		}
	}
	if g := h.last["gate"]; g == nil || g.code != 3 || !strings.Contains(g.log, "stack.prepare") {
		t.Errorf("the gate step did not stop on the failed prepare (exit 3): %+v", g)
	}
	// The comment step had the token: the unusable verdict is commented.
	if cs := fake.ours(prNum, "token-probe"); len(cs) != 1 || !strings.Contains(cs[0].Body, "UNUSABLE") {
		t.Errorf("the comment step did not comment the unusable gate: %d comments", len(cs))
	}
}

// tokenWorkspace is a repository whose base and head both hold a scenario
// with a stack.prepare that writes its pid to pidFIFO, waits for goFIFO,
// and fails.
func tokenWorkspace(t *testing.T, ws, pidFIFO, goFIFO string) (dir, base, head string) {
	t.Helper()
	files := map[string]string{
		"scenario.yaml": "name: token-probe\nstack:\n  compose: [compose.yaml]\n  prepare: [./probe.sh]\n  target: api:8080\n" +
			"phases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n",
		"compose.yaml": "services:\n  api:\n    image: busybox\n    command: [sleep, '60']\n",
		"probe.sh": "#!/bin/sh\n# The pull request's code: it hands its pid over and waits to be read.\n" +
			fmt.Sprintf("echo $$ > %q\nread go < %q\necho probe: read, failing on purpose >&2\nexit 1\n", pidFIFO, goFIFO),
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e2eGit(t, ws, "init", "-q")
	e2eGit(t, ws, "add", "-A")
	e2eGit(t, ws, "commit", "-q", "-m", "base")
	base = e2eGit(t, ws, "rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("head\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e2eGit(t, ws, "add", "-A")
	e2eGit(t, ws, "commit", "-q", "-m", "head")
	return ws, base, e2eGit(t, ws, "rev-parse", "HEAD")
}

// stepTree is the process tree of the step: from pid up to the child of
// stop (the step's shell), and every descendant of that shell.
func stepTree(pid, stop int) []int {
	top := pid
	for p := pid; p > 1; {
		pp := procPPid(p)
		if pp == stop || pp <= 1 {
			break
		}
		top, p = pp, pp
	}
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if p, err := strconv.Atoi(e.Name()); err == nil {
			pp := procPPid(p)
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		out = append(out, p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(top)
	return out
}

// procPPid is pid's parent, 0 when unknown.
func procPPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	st, err := procstat.ParseStat(b)
	if err != nil {
		return 0
	}
	return st.PPID
}

func procComm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// environHits are pid's initial environment variables holding a secret.
func environHits(pid int, secrets []string) []string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil // gone
	}
	defer f.Close()
	var hits []string
	r := bufio.NewReader(f)
	for {
		kv, err := r.ReadString(0)
		kv = strings.TrimSuffix(kv, "\x00")
		for _, s := range secrets {
			if kv != "" && strings.Contains(kv, s) {
				name, _, _ := strings.Cut(kv, "=")
				hits = append(hits, name)
			}
		}
		if err == io.EOF || err != nil {
			return hits
		}
	}
}
