package compose_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/enginetest"
	"github.com/loadgate/loadgate/internal/testtier"
)

func requireEngine(t *testing.T) { t.Helper(); enginetest.Require(t, "stack tests") }

var (
	appOnce sync.Once
	appBin  string
	appErr  error
)

// stage copies testdata/<name> with the Dockerfile and a freshly built
// static app binary into a temp dir: the build context.
func stage(t *testing.T, name string) string {
	t.Helper()
	appOnce.Do(func() {
		dir, err := os.MkdirTemp("", "loadgate-app-")
		if err != nil {
			appErr = err
			return
		}
		appBin = filepath.Join(dir, "app")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", appBin, "./testdata/app")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			appErr = fmt.Errorf("build test app: %v\n%s", err, out)
		}
	})
	if appErr != nil {
		t.Fatal(appErr)
	}
	dst := t.TempDir()
	copyFile(t, appBin, filepath.Join(dst, "app"), 0o755)
	copyFile(t, "testdata/Dockerfile", filepath.Join(dst, "Dockerfile"), 0o644)
	ents, err := os.ReadDir(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		copyFile(t, filepath.Join("testdata", name, e.Name()), filepath.Join(dst, e.Name()), 0o644)
	}
	return dst
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// recordLog is a stack's Log that keeps what it was told, besides
// logging it.
type recordLog struct {
	t  *testing.T
	mu sync.Mutex
	b  strings.Builder
}

func (w *recordLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	return logWriter{w.t}.Write(p)
}

func (w *recordLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// up brings a stack up and registers its teardown.
func up(t *testing.T, opt compose.Options) (*compose.Stack, error) {
	t.Helper()
	if opt.Log == nil {
		opt.Log = logWriter{t}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := compose.Up(ctx, opt)
	if s != nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := s.Down(ctx); err != nil {
				t.Errorf("cleanup Down: %v", err)
			}
		})
	}
	return s, err
}

func engine(t *testing.T) client.APIClient {
	t.Helper()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// leftovers counts what carries label.
func leftovers(t *testing.T, _ client.APIClient, label string) int {
	t.Helper()
	return len(enginetest.Leftovers(t, label))
}

func stackCPUs(t *testing.T) pin.Set {
	all, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := pin.Split(all)
	return s
}

func TestStackLifecycle(t *testing.T) {
	requireEngine(t)
	dir := stage(t, "ok")
	out := t.TempDir()
	cpus := stackCPUs(t)
	t.Setenv("FILE_CPUSET", "0-1") // the file's own cpuset, to be overridden
	if cpus.String() == "0-1" {
		t.Setenv("FILE_CPUSET", "0")
	}
	runID := compose.NewRunID()
	log := &recordLog{t: t}
	s, err := up(t, compose.Options{
		Files: []string{"compose.yaml", "more.yaml"}, ProjectDir: dir, RunID: runID, Side: "head",
		StackCPUs: cpus, OutDir: out, ReadyTimeout: 60 * time.Second, Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Regression (issue 9): each build printed the builder's ~100 lines and
	// every "Image … Built" twice; one line per image built, nothing else.
	built := map[string]int{}
	for line := range strings.Lines(log.String()) {
		if strings.HasSuffix(line, " Built\n") {
			built[line]++
		}
	}
	if len(built) == 0 {
		t.Errorf("no \"Image … Built\" line:\n%s", log)
	}
	for line, n := range built {
		if n != 1 {
			t.Errorf("%q printed %d times, want once", line, n)
		}
	}
	if strings.Contains(log.String(), "Successfully built") || strings.Contains(log.String(), " ---> ") {
		t.Errorf("the builder's own output is in the log:\n%s", log)
	}
	c := engine(t)
	if got, want := s.Name(), "loadgate-"+runID+"-head"; got != want {
		t.Errorf("project name %q, want %q", got, want)
	}
	if got := strings.Join(s.Services(), ","); got != "web,worker" {
		t.Errorf("services %q (profile extra must stay off)", got)
	}

	// Every container carries the labels and the stack cpuset.
	cs, err := c.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", compose.LabelRun+"="+runID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("%d labelled containers, want 2", len(cs))
	}
	for _, ct := range cs {
		ins, err := c.ContainerInspect(context.Background(), ct.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ins.HostConfig.CpusetCpus != cpus.String() {
			t.Errorf("%s: cpuset %q, want %q", ct.Names, ins.HostConfig.CpusetCpus, cpus)
		}
		if ins.HostConfig.CPUShares != 0 { // the file's 262144 removed: Docker's default for both sides
			t.Errorf("%s: cpu_shares %d reached the engine", ct.Names, ins.HostConfig.CPUShares)
		}
		if ins.Config.Labels[compose.LabelProject] != s.Name() {
			t.Errorf("%s: labels %v", ct.Names, ins.Config.Labels)
		}
		if ct.Labels["com.docker.compose.service"] == "worker" {
			env := strings.Join(ins.Config.Env, " ")
			if !strings.Contains(env, "EXTENDED=yes") || !strings.Contains(env, "SECOND_FILE=yes") {
				t.Errorf("worker env %v: extends or second file missing", ins.Config.Env)
			}
		}
		if strings.Contains(ct.Labels["com.docker.compose.service"], "web") {
			if !strings.Contains(strings.Join(ins.Config.Env, " "), "GREETING=hello-from-dotenv") {
				t.Errorf("web env %v: .env interpolation missing", ins.Config.Env)
			}
		}
	}
	if n := leftovers(t, c, compose.LabelProject+"="+s.Name()); n < 4 { // 2 containers, network, volume
		t.Errorf("only %d labelled resources", n)
	}
	gotCPUs, pinned, reason, overridden := s.Topology()
	if gotCPUs != cpus.String() || !pinned || !overridden {
		t.Errorf("Topology() = %q, %v, %q, %v", gotCPUs, pinned, reason, overridden)
	}
	t.Logf("overrides: %v", s.Overrides())
	if !slices.ContainsFunc(s.Overrides(), func(o result.Override) bool {
		return o.Service == "web" && o.Kind == result.OverrideResource && o.From == "cpu_shares=262144"
	}) {
		t.Errorf("the overrides do not name web's cpu_shares: %v", s.Overrides())
	}

	// Target: the container IP on the project network answers from the host.
	addr, path, err := s.Target(context.Background(), "web:8080")
	if err != nil {
		t.Fatal(err)
	}
	if path != compose.PathContainerNetwork {
		t.Errorf("path %q", path)
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "hello from web") {
		t.Errorf("GET %s: %d %q", addr, resp.StatusCode, body)
	}
	for _, bad := range []string{"db:5432", "web", "web:x", "example.com:80"} {
		if _, _, err := s.Target(context.Background(), bad); !errors.Is(err, compose.ErrTargetRefused) {
			t.Errorf("Target(%q) = %v, want ErrTargetRefused", bad, err)
		}
	}

	// Sampler: lines for every service, a summary for every service.
	var buf syncBuffer
	stop := s.Sample(context.Background(), 300*time.Millisecond, &buf)
	for i := 0; i < 40; i++ {
		http.Get("http://" + addr + "/")
		time.Sleep(60 * time.Millisecond)
	}
	sum := stop()
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var smp compose.Sample
		if err := json.Unmarshal(sc.Bytes(), &smp); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		if smp.MemBytes <= 0 || smp.CPUPct < 0 || smp.IntervalS <= 0 {
			t.Errorf("implausible sample %+v", smp)
		}
		seen[smp.Service]++
	}
	if seen["web"] == 0 || seen["worker"] == 0 {
		t.Errorf("samples per service %v", seen)
	}
	if len(sum) != 2 || sum[0].Name != "web" || sum[0].Samples == 0 || sum[0].MemPeakBytes == 0 || sum[1].Samples == 0 {
		t.Errorf("summary %+v", sum)
	}
	t.Logf("summary %+v", sum)

	if err := s.Pause(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ins, err := c.ContainerInspect(context.Background(), cs[0].ID); err != nil || !ins.State.Paused {
		t.Errorf("after Pause: paused=%v %v", ins.State != nil && ins.State.Paused, err)
	}
	if err := s.Unpause(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Down: nothing labelled left, logs saved, idempotent.
	if err := s.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Down(context.Background()); err != nil {
		t.Fatalf("second Down: %v", err)
	}
	if n := leftovers(t, c, compose.LabelRun+"="+runID); n != 0 {
		t.Errorf("%d labelled resources left after Down", n)
	}
	// A clean teardown's built images are not leftovers (it said "removed 3
	// leftover resource(s)" after every clean run): what it removes is said
	// by kind, and nothing is called left by compose down.
	if got := log.String(); strings.Contains(got, "compose down left") || strings.Contains(got, "leftover") {
		t.Errorf("a clean Down reports leftovers:\n%s", got)
	} else if !regexp.MustCompile(`removed the \d+ images? it built`).MatchString(got) {
		t.Errorf("Down does not say it removed the images it built:\n%s", got)
	}
	logs, err := os.ReadFile(filepath.Join(out, "logs", "web.log"))
	if err != nil || !strings.Contains(string(logs), "app web starting") {
		t.Errorf("web.log: %q %v", logs, err)
	}
}

// atReadyDeadline tells an error that Up or Target returned at the stack's
// ready deadline (it names the timeout, in one of its three wordings)
// from one on the state that ended the wait sooner.
func atReadyDeadline(err error) bool {
	msg := err.Error()
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "not ready within") ||
		strings.Contains(msg, "within the ready timeout") || strings.Contains(msg, "no running container within")
}

func TestUnhealthyFailsFast(t *testing.T) {
	requireEngine(t)
	dir := stage(t, "unhealthy")
	runID := compose.NewRunID()
	start := time.Now()
	const readyTimeout = 2 * time.Minute
	s, err := up(t, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, RunID: runID, Side: "base", ReadyTimeout: readyTimeout, OutDir: t.TempDir()})
	took := time.Since(start)
	if err == nil {
		t.Fatalf("Up of an unhealthy stack succeeded (%s)", s.Name())
	}
	t.Logf("Up failed after %s: %v", took, err)
	// Fast: on the unhealthy state itself, not at the ready deadline. Up's
	// time holds the image build, the start and the teardown, which a
	// loaded machine stretches (13 s beside two CPU hogs, 30 s with other
	// builds and tests running too; the bound was 30 s): the deadline is
	// what it must not have waited for, and the error says when it did.
	if atReadyDeadline(err) || took >= readyTimeout {
		t.Errorf("took %s: failed at the ready deadline (%s), not on the unhealthy state", took, readyTimeout)
	}
	var re *compose.ReadyError
	if !errors.As(err, &re) {
		t.Fatalf("error %T is not a *ReadyError", err)
	}
	if re.Service != "sick" || !strings.Contains(re.State, "unhealthy") {
		t.Errorf("ReadyError service %q state %q", re.Service, re.State)
	}
	if !strings.Contains(err.Error(), "refusing health check on purpose") {
		t.Errorf("error lacks the service's logs: %v", err)
	}
	if n := leftovers(t, engine(t), compose.LabelRun+"="+runID); n != 0 {
		t.Errorf("%d labelled resources left after a failed Up", n)
	}
}

func TestSweep(t *testing.T) {
	requireEngine(t)
	c := engine(t)
	ctx := context.Background()
	host, _ := os.Hostname()
	// A leftover of a dead process, and one of a live process (pid 1).
	dead := map[string]string{compose.LabelRun: "sweepdead", compose.LabelProject: "loadgate-sweepdead", compose.LabelOwner: host + ":4194399"}
	alive := map[string]string{compose.LabelRun: "sweepalive", compose.LabelProject: "loadgate-sweepalive", compose.LabelOwner: host + ":1"}
	for _, l := range []map[string]string{dead, alive} {
		if _, err := c.NetworkCreate(ctx, l[compose.LabelProject]+"_default", network.CreateOptions{Labels: l}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.VolumeCreate(ctx, volume.CreateOptions{Name: l[compose.LabelProject] + "_data", Labels: l}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		c.NetworkRemove(ctx, "loadgate-sweepalive_default")
		c.VolumeRemove(ctx, "loadgate-sweepalive_data", true)
		c.NetworkRemove(ctx, "loadgate-sweepdead_default")
		c.VolumeRemove(ctx, "loadgate-sweepdead_data", true)
	})
	// A whole stack of this process that was never taken down.
	dir := stage(t, "ok")
	s, err := up(t, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, Side: "leftover", ReadyTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// While the stack is live, Sweep leaves it alone.
	if _, err := compose.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := leftovers(t, c, compose.LabelProject+"="+s.Name()); n == 0 {
		t.Fatal("Sweep removed a live stack")
	}
	compose.Forget(s.Name())
	r, err := compose.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Total() < 6 || r.Containers == 0 || r.Networks == 0 {
		t.Errorf("Sweep removed %s, want at least 6 resources, containers and networks among them", r)
	}
	if n := leftovers(t, c, compose.LabelProject+"="+s.Name()); n != 0 {
		t.Errorf("%d resources of the forgotten stack left", n)
	}
	if n := leftovers(t, c, compose.LabelRun+"=sweepdead"); n != 0 {
		t.Errorf("%d resources of the dead owner left", n)
	}
	if n := leftovers(t, c, compose.LabelRun+"=sweepalive"); n != 2 {
		t.Errorf("%d resources of the live owner left, want 2", n)
	}
}

func TestLoadErrors(t *testing.T) {
	ctx := context.Background()
	_, err := compose.Up(ctx, compose.Options{Files: []string{"testdata/bad/compose.yaml"}})
	if err == nil || !strings.Contains(err.Error(), "compose.yaml") || !strings.Contains(err.Error(), "colour") {
		t.Errorf("bad key: %v", err)
	}
	t.Logf("bad key: %v", err)
	_, err = compose.Up(ctx, compose.Options{Files: []string{"testdata/none.yaml"}})
	if err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing file: %v", err)
	}
	if got := compose.ProjectName("AB.c", "Head"); got != "loadgate-abc-head" {
		t.Errorf("ProjectName = %q", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestCancelledUpTearsDown(t *testing.T) {
	requireEngine(t)
	dir := stage(t, "ok")
	runID := compose.NewRunID()
	ctx, cancel := context.WithCancel(context.Background())
	created := make(chan struct{})
	var once sync.Once
	// Cancel as soon as the project's network exists (mid-create).
	lw := writerFunc(func(p []byte) (int, error) {
		if strings.Contains(string(p), "Network") && strings.Contains(string(p), "Created") {
			once.Do(func() { close(created) })
		}
		return len(p), nil
	})
	go func() {
		select {
		case <-created:
		case <-time.After(20 * time.Second):
		}
		cancel()
	}()
	s, err := compose.Up(ctx, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, RunID: runID, ReadyTimeout: 60 * time.Second, Log: lw})
	if err == nil {
		s.Down(context.Background())
		t.Fatal("Up succeeded despite cancellation")
	}
	t.Logf("cancelled Up: %v", err)
	if n := leftovers(t, engine(t), compose.LabelRun+"="+runID); n != 0 {
		t.Errorf("%d labelled resources left after a cancelled Up", n)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A service without a healthcheck that binds its port 2 s after start is
// waited for (the port is polled with backoff), not failed as unreachable.
func TestSlowStarterBecomesReady(t *testing.T) {
	requireEngine(t)
	dir := stage(t, "slow")
	runID := compose.NewRunID()
	t.Cleanup(func() {
		if n := leftovers(t, engine(t), compose.LabelRun+"="+runID); n != 0 {
			t.Errorf("%d labelled resources left", n)
		}
	})
	s, err := up(t, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, RunID: runID, ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	addr, path, err := s.Target(context.Background(), "slow:8080")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Target of a service that listens after 2 s: %v", err)
	}
	t.Logf("target %s (%s) answered after %s", addr, path, took)
	if path != compose.PathContainerNetwork {
		t.Errorf("path %q", path)
	}
	if took < 500*time.Millisecond {
		t.Errorf("answered after %s: the service was meant to bind its port only after 2 s", took)
	}
	if took > 10*time.Second {
		t.Errorf("answered after %s: the poll backs off too far (at most 1 s between attempts)", took)
	}
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A container that exits fails at once, with its exit status, its last log
// lines and the hint that it exited — not a network message, and long
// before the ready timeout.
func TestExitedServiceFailsFast(t *testing.T) {
	requireEngine(t)
	for _, delay := range []string{"1s", "0s"} {
		t.Run("after "+delay, func(t *testing.T) {
			if delay != "0s" {
				testtier.Require(t, testtier.E2E) // an exit at start alone by default
			}
			t.Setenv("CRASH_DELAY", delay)
			dir := stage(t, "exits")
			runID := compose.NewRunID()
			start := time.Now()
			const readyTimeout = 2 * time.Minute
			s, err := up(t, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, RunID: runID, ReadyTimeout: readyTimeout})
			upTook := time.Since(start)
			stage, took := "Up", upTook // Up includes the image build
			if err == nil {
				stage = "Target"
				t0 := time.Now()
				_, _, err = s.Target(context.Background(), "crash:8080")
				took = time.Since(t0)
			}
			if err == nil {
				t.Fatal("a stack whose target exited with status 1 came up")
			}
			t.Logf("%s failed after %s (Up took %s): %v", stage, took.Round(time.Millisecond), upTook.Round(time.Millisecond), err)
			// At once: on the exit, not at the ready deadline (which the
			// error would name). Up's time holds the image build, which a
			// loaded machine stretches: the deadline is the bound.
			if atReadyDeadline(err) || time.Since(start) >= readyTimeout {
				t.Errorf("%s took %s: an exited container must fail at once, not wait for the %s ready timeout", stage, took, readyTimeout)
			}
			var re *compose.ReadyError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *ReadyError: %v", err, err)
			}
			if re.Service != "crash" || !re.Exited || re.ExitCode != 1 {
				t.Errorf("ReadyError service %q exited %v code %d, want crash, true, 1", re.Service, re.Exited, re.ExitCode)
			}
			msg := err.Error()
			for _, want := range []string{"exited", "status 1", "giving up on purpose, exit status 1"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "not reachable") || strings.Contains(msg, "connection refused") {
				t.Errorf("an exited container is blamed on the network:\n%s", msg)
			}
			if s != nil {
				if err := s.Down(context.Background()); err != nil {
					t.Error(err)
				}
			}
			if n := leftovers(t, engine(t), compose.LabelRun+"="+runID); n != 0 {
				t.Errorf("%d labelled resources left", n)
			}
		})
	}
}

// A target that keeps running but never accepts on its port fails at the
// ready deadline with a *ReadyError that says so (not before it).
func TestTargetNeverListening(t *testing.T) {
	requireEngine(t)
	dir := stage(t, "slow")
	runID := compose.NewRunID()
	// The ready deadline covers the containers' start too: 4 s was not
	// enough for the engine to start one on a loaded machine ("compose:
	// start …: context deadline exceeded" beside two CPU hogs and other
	// builds), and Up failed before Target was asked.
	const readyTimeout = 15 * time.Second
	s, err := up(t, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, RunID: runID, ReadyTimeout: readyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = s.Target(context.Background(), "slow:9999")
	took := time.Since(start)
	t.Logf("Target of a port nobody listens on failed after %s: %v", took.Round(time.Millisecond), err)
	var re *compose.ReadyError
	if !errors.As(err, &re) {
		t.Fatalf("error %T is not a *ReadyError: %v", err, err)
	}
	if re.Exited || !strings.Contains(re.State, "accepted no TCP connection") || !strings.Contains(re.Hint, "listens on that port") {
		t.Errorf("ReadyError exited %v state %q hint %q", re.Exited, re.State, re.Hint)
	}
	if took > readyTimeout+4*time.Second {
		t.Errorf("took %s: the wait must end at the ready deadline (%s after start)", took, readyTimeout)
	}
}
