package compose

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/compose/v5/pkg/api"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
)

// fakeEngine is the few Docker calls a fault makes, on in-memory
// containers; the embedded nil APIClient panics on anything else.
type fakeEngine struct {
	client.APIClient
	mu     sync.Mutex
	ctrs   map[string]*fakeCtr
	order  []string
	calls  []string
	failOn string // "call id[ network]" that returns an error, after taking effect when stick is set
	stick  bool
}

type fakeCtr struct {
	running, paused bool
	networks        map[string]bool
}

func (e *fakeEngine) fail(call string) error {
	e.calls = append(e.calls, call)
	if call == e.failOn {
		return errors.New("engine: timed out")
	}
	return nil
}

func (e *fakeEngine) ContainerList(context.Context, container.ListOptions) ([]container.Summary, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []container.Summary
	for i, id := range e.order {
		out = append(out, container.Summary{ID: id, Names: []string{"/" + id}, State: "running",
			Labels: map[string]string{api.ServiceLabel: "db", api.ContainerNumberLabel: string(rune('1' + i))}})
	}
	return out, nil
}

func (e *fakeEngine) ContainerInspect(_ context.Context, id string) (container.InspectResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.ctrs[id]
	status := "exited"
	if c.running {
		status = "running"
	}
	nets := map[string]*network.EndpointSettings{}
	for n, on := range c.networks {
		if on {
			nets[n] = &network.EndpointSettings{Aliases: []string{"db"}}
		}
	}
	return container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{ID: id, State: &container.State{Status: status, Running: c.running, Paused: c.paused, StartedAt: "t0"}},
		NetworkSettings:   &container.NetworkSettings{Networks: nets},
	}, nil
}

func (e *fakeEngine) ContainerStop(_ context.Context, id string, _ container.StopOptions) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.fail("stop " + id)
	if err == nil || e.stick {
		e.ctrs[id].running = false
	}
	return err
}

func (e *fakeEngine) ContainerStart(_ context.Context, id string, _ container.StartOptions) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ctrs[id].running = true
	return e.fail("start " + id)
}

func (e *fakeEngine) NetworkDisconnect(_ context.Context, n, id string, _ bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.fail("disconnect " + id + " " + n)
	if err == nil || e.stick {
		e.ctrs[id].networks[n] = false
	}
	return err
}

func (e *fakeEngine) NetworkConnect(_ context.Context, n, id string, _ *network.EndpointSettings) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctrs[id].networks[n] {
		return errors.New("endpoint already exists in network " + n) // what the engine says
	}
	e.ctrs[id].networks[n] = true
	return e.fail("connect " + id + " " + n)
}

func fakeStack(e *fakeEngine) *Stack {
	e.ctrs = map[string]*fakeCtr{}
	for _, id := range []string{"db1-container", "db2-container"} { // IDs of 12+ characters, as the engine's

		e.ctrs[id] = &fakeCtr{running: true, networks: map[string]bool{"back": true, "front": true}}
		e.order = append(e.order, id)
	}
	return &Stack{name: "loadgate-t", api: e, log: io.Discard,
		project: &types.Project{Services: types.Services{"db": {Name: "db"}}}}
}

// Regression (review: after a partial failure Inject undid ctrs[:i] only,
// leaving container i half-disconnected): container i is undone too, and
// only what it lost is reconnected.
func TestInjectPartialDisconnectUndoesTheFailedContainer(t *testing.T) {
	e := &fakeEngine{failOn: "disconnect db2-container front"}
	s := fakeStack(e)
	if _, err := s.Inject(context.Background(), FaultDisconnect, "db"); err == nil {
		t.Fatal("Inject succeeded, want the engine's error")
	}
	for id, c := range e.ctrs {
		if !c.networks["back"] || !c.networks["front"] {
			t.Errorf("%s left with networks %v: %q", id, c.networks, e.calls)
		}
	}
	if !slices.Contains(e.calls, "connect db2-container back") || slices.Contains(e.calls, "connect db2-container front") {
		t.Errorf("calls %q: want db2 reconnected to back only", e.calls)
	}
}

// Regression (same review): a stop whose wait failed after the engine did
// stop the container leaves it stopped; the undo starts it.
func TestInjectPartialStopUndoesTheFailedContainer(t *testing.T) {
	e := &fakeEngine{failOn: "stop db2-container", stick: true}
	s := fakeStack(e)
	_, err := s.Inject(context.Background(), FaultStop, "db")
	if err == nil || !strings.Contains(err.Error(), "db2") {
		t.Fatalf("Inject = %v, want the engine's error naming db2", err)
	}
	for id, c := range e.ctrs {
		if !c.running {
			t.Errorf("%s left stopped: %q", id, e.calls)
		}
	}
}
