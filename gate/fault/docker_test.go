package fault_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/fault"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/enginetest"
)

// testStack brings the tiny test stack up (testdata/stack with the compose
// tests' app binary) and registers its teardown.
func testStack(t *testing.T) *compose.Stack {
	t.Helper()
	enginetest.Require(t, "fault injection tests")
	dir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "app"), "../../compose/testdata/app")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build test app: %v\n%s", err, out)
	}
	for src, dst := range map[string]string{"../../compose/testdata/Dockerfile": "Dockerfile", "testdata/stack/compose.yaml": "compose.yaml"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := compose.Up(ctx, compose.Options{Files: []string{filepath.Join(dir, "compose.yaml")}, Side: "fault"})
	if s != nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := s.Down(ctx); err != nil {
				t.Errorf("Down: %v", err)
			}
			s.Close()
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// state is what the engine says about a container: "running", "exited",
// "paused", plus its networks.
func state(t *testing.T, name string) (string, []string) {
	t.Helper()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ins, err := c.ContainerInspect(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var nets []string
	for n := range ins.NetworkSettings.Networks {
		nets = append(nets, n)
	}
	return ins.State.Status, nets
}

// checking wraps the stack's Target and asserts, as each action returns,
// that the engine shows it in effect, and after undoing, that it is gone.
type checking struct {
	fault.Target
	t *testing.T
}

type checkedActive struct {
	fault.Active
	t      *testing.T
	action string
}

func (c checking) Inject(ctx context.Context, action, service string) (fault.Active, error) {
	a, err := c.Target.Inject(ctx, action, service)
	if err != nil {
		return nil, err
	}
	st, _ := state(c.t, a.Containers()[0])
	if want := map[string]string{"stop": "exited", "pause": "paused"}[action]; st != want {
		c.t.Errorf("after %s %s: container is %s, want %s", action, service, st, want)
	}
	return checkedActive{a, c.t, action}, nil
}

func (a checkedActive) Undo(ctx context.Context) (string, error) {
	how, err := a.Active.Undo(ctx)
	if st, _ := state(a.t, a.Containers()[0]); err == nil && st != "running" {
		a.t.Errorf("after undoing %s: container is %s, want running", a.action, st)
	}
	return how, err
}

// TestDockerFaults brings the tiny stack up once (each bring-up costs
// tens of seconds on a shared machine) for both checks.
func TestDockerFaults(t *testing.T) {
	s := testStack(t)
	t.Run("stop through the injector", func(t *testing.T) { dockerStopFault(t, s) })
	t.Run("each other action", func(t *testing.T) { dockerActions(t, s) })
}

func dockerStopFault(t *testing.T, s *compose.Stack) {
	sc := parse(t, `name: f
stack: {compose: [compose.yaml], target: web:8080}
phases:
  - name: sustain
    rate: 1
    duration: 6s
    inject:
      - {action: stop, service: dep, at: 500ms, for: 1s}
    recovery: {within: 2s, error_rate: 0%}
workloads: [{name: read, http: {path: /}}]
`)
	in := fault.New(context.Background(), sc, checking{fault.Stack(s), t}, fault.Options{Log: testLog{t}})
	if err := in.Check(); err != nil {
		t.Fatal(err)
	}
	in.Start(time.Now())
	select {
	case <-in.Done():
	case <-time.After(45 * time.Second): // a bound, not an assertion on timing
		t.Fatal("the fault did not finish")
	}
	in.Stop()
	if err := in.Err(); err != nil {
		t.Fatal(err)
	}
	res := &result.Result{}
	if err := in.Apply(res, verdict.RecoveringSeconds); err != nil {
		t.Fatal(err)
	}
	f := res.Faults[0]
	t.Logf("stop dep: planned %.3fs, issued %.3fs, in effect %.3fs, undo %.3fs, back %.3fs (%s)", f.PlannedS, f.StartedS, f.AppliedS, f.UndoStartedS, f.EndedS, f.Undo)
	if !(f.StartedS >= f.PlannedS && f.AppliedS > f.StartedS && f.UndoStartedS >= f.PlannedS+f.PlannedForS && f.EndedS > f.UndoStartedS) || f.Undo != "started" || f.Error != "" {
		t.Errorf("fault record out of order: %+v", f)
	}
	if len(f.Containers) != 1 || !strings.Contains(f.Containers[0], "dep") {
		t.Errorf("containers = %q", f.Containers)
	}
}

// dockerActions applies each other action straight through the stack
// and checks with the engine that it happened and was undone.
func dockerActions(t *testing.T, s *compose.Stack) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if _, err := s.Inject(ctx, compose.FaultStop, "nope"); err == nil || !strings.Contains(err.Error(), "no such service") {
		t.Errorf("Inject on a service not in the stack: %v", err)
	}
	for _, tc := range []struct{ action, during, how string }{
		{compose.FaultPause, "paused", "unpaused"},
		{compose.FaultKill, "exited", "started (no restart by a restart policy)"},
		{compose.FaultDisconnect, "running", "reconnected"},
	} {
		f, err := s.Inject(ctx, tc.action, "dep")
		if err != nil {
			t.Fatalf("%s: %v", tc.action, err)
		}
		st, nets := state(t, f.Containers()[0])
		if st != tc.during || (tc.action == compose.FaultDisconnect) != (len(nets) == 0) {
			t.Errorf("during %s: %s on networks %q", tc.action, st, nets)
		}
		how, err := f.Undo(ctx)
		if err != nil || how != tc.how {
			t.Errorf("undo %s: %q, %v; want %q", tc.action, how, err, tc.how)
		}
		if st, nets := state(t, f.Containers()[0]); st != "running" || len(nets) != 1 {
			t.Errorf("after undoing %s: %s on networks %q", tc.action, st, nets)
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
