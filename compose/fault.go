package compose

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
)

// Fault actions, as the scenario names them.
const (
	FaultStop       = "stop"
	FaultPause      = "pause"
	FaultKill       = "kill"
	FaultDisconnect = "disconnect"
)

// ErrNoService: the service is not the stack's or has no container.
var ErrNoService = errors.New("no such service")

// FaultTimeout bounds one action or its undoing when ctx has no deadline.
const FaultTimeout = time.Minute

// Fault is an action in effect on one service until Undo. Not safe for concurrent use.
type Fault struct {
	s       *Stack
	action  string
	service string
	ctrs    []faultCtr
	undone  bool
}

type faultCtr struct {
	id, name string
	started  string                               // State.StartedAt before the action (kill: tells a restart)
	networks map[string]*network.EndpointSettings // disconnect: what to reconnect, by network name
}

// Inject applies action to every running container of service and returns once
// the engine reports it done; on an engine error, what was applied is undone.
func (s *Stack) Inject(ctx context.Context, action, service string) (*Fault, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if _, ok := s.project.Services[service]; !ok {
		return nil, fmt.Errorf("compose: %s %s: %w: not a service of stack %s (services: %s)", action, service, ErrNoService, s.name, strings.Join(s.Services(), ", "))
	}
	cs, err := s.containers(ctx, false)
	if err != nil {
		return nil, err
	}
	f := &Fault{s: s, action: action, service: service}
	for _, c := range cs {
		if c.service != service || c.state != "running" {
			continue
		}
		ins, err := s.api.ContainerInspect(ctx, c.ID)
		if err != nil {
			return nil, fmt.Errorf("compose: %s %s: inspect %s: %w", action, service, c.name, err)
		}
		fc := faultCtr{id: c.ID, name: c.name}
		if ins.State != nil {
			fc.started = ins.State.StartedAt
		}
		if ins.NetworkSettings != nil {
			fc.networks = ins.NetworkSettings.Networks
		}
		f.ctrs = append(f.ctrs, fc)
	}
	if len(f.ctrs) == 0 {
		return nil, fmt.Errorf("compose: %s %s: %w: no running container of service %s in stack %s", action, service, ErrNoService, service, s.name)
	}
	var do func(context.Context, faultCtr) error
	switch action {
	case FaultStop:
		do = s.stopCtr(service)
	case FaultPause:
		do = func(ctx context.Context, c faultCtr) error { return s.api.ContainerPause(ctx, c.id) }
	case FaultKill:
		do = s.killCtr
	case FaultDisconnect:
		do = s.disconnectCtr
	default:
		return nil, fmt.Errorf("compose: unknown fault action %q", action)
	}
	for i, c := range f.ctrs {
		if err := do(ctx, c); err != nil {
			// Container i may be half done: Undo tolerates one already back.
			applied := &Fault{s: s, action: action, service: service, ctrs: f.ctrs[:i+1]}
			uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), FaultTimeout)
			_, uerr := applied.Undo(uctx)
			ucancel()
			return nil, errors.Join(fmt.Errorf("compose: %s %s (%s): %w", action, service, c.name, err), uerr)
		}
	}
	s.logf("fault: %s %s (%s)", action, service, strings.Join(f.Containers(), ", "))
	return f, nil
}

func (f *Fault) Containers() []string {
	out := make([]string, len(f.ctrs))
	for i, c := range f.ctrs {
		out[i] = c.name
	}
	return out
}

// Undo ends the fault once every container is back and says how. Idempotent.
func (f *Fault) Undo(ctx context.Context) (how string, err error) {
	if f.undone {
		return "", nil
	}
	ctx, cancel := bounded(ctx)
	defer cancel()
	s := f.s
	hows := []string{}
	var errs []error
	for _, c := range f.ctrs {
		h, err := f.undoCtr(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("compose: undo %s %s (%s): %w", f.action, f.service, c.name, err))
			continue
		}
		if !slices.Contains(hows, h) {
			hows = append(hows, h)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	f.undone = true
	how = strings.Join(hows, "; ")
	s.logf("fault: %s %s undone: %s", f.action, f.service, how)
	return how, nil
}

// undoCtr undoes the fault on one container, tolerating one already back.
func (f *Fault) undoCtr(ctx context.Context, c faultCtr) (string, error) {
	s := f.s
	ins, err := s.api.ContainerInspect(ctx, c.id)
	if err != nil {
		return "", err
	}
	st := ins.State
	switch f.action {
	case FaultStop:
		if st != nil && st.Running {
			return "already running", nil
		}
		if err := s.api.ContainerStart(ctx, c.id, container.StartOptions{}); err != nil {
			return "", err
		}
		return "started", s.waitState(ctx, c.id, "running")
	case FaultPause:
		if st != nil && !st.Paused {
			return "already unpaused", nil
		}
		if err := s.api.ContainerUnpause(ctx, c.id); err != nil {
			return "", err
		}
		return "unpaused", s.waitState(ctx, c.id, "running")
	case FaultKill:
		return s.undoKill(ctx, c, st)
	case FaultDisconnect:
		var now map[string]*network.EndpointSettings
		if ins.NetworkSettings != nil {
			now = ins.NetworkSettings.Networks
		}
		if err := s.reconnect(ctx, c, now); err != nil {
			return "", err
		}
		return "reconnected", nil
	}
	return "", fmt.Errorf("unknown fault action %q", f.action)
}

// undoKill starts a killed container unless its restart policy did or will.
func (s *Stack) undoKill(ctx context.Context, c faultCtr, st *container.State) (string, error) {
	if st != nil && st.Running && st.StartedAt == c.started {
		return "still running (never killed)", nil
	}
	if st != nil && st.Running {
		return "restarted by its restart policy", nil
	}
	if st != nil && st.Restarting {
		return "restarted by its restart policy", s.waitState(ctx, c.id, "running")
	}
	if err := s.api.ContainerStart(ctx, c.id, container.StartOptions{}); err != nil {
		return "", err
	}
	return "started (no restart by a restart policy)", s.waitState(ctx, c.id, "running")
}

// reconnect reconnects c where it was disconnected, without the engine's ID aliases.
func (s *Stack) reconnect(ctx context.Context, c faultCtr, now map[string]*network.EndpointSettings) error {
	for _, name := range slices.Sorted(maps.Keys(c.networks)) {
		if _, connected := now[name]; connected {
			continue // never disconnected (a partial failure)
		}
		ep := c.networks[name]
		conf := &network.EndpointSettings{}
		if ep != nil {
			conf.Aliases = slices.DeleteFunc(slices.Clone(ep.Aliases), func(a string) bool { return strings.HasPrefix(c.id, a) })
			conf.Links = ep.Links
		}
		if err := s.api.NetworkConnect(ctx, name, c.id, conf); err != nil {
			return fmt.Errorf("reconnect to %s: %w", name, err)
		}
	}
	return nil
}

// stopCtr stops a container within the service's stop_grace_period.
func (s *Stack) stopCtr(service string) func(context.Context, faultCtr) error {
	var timeout *int
	if g := s.project.Services[service].StopGracePeriod; g != nil {
		secs := int((time.Duration(*g) + time.Second - 1) / time.Second)
		timeout = &secs
	}
	return func(ctx context.Context, c faultCtr) error {
		if err := s.api.ContainerStop(ctx, c.id, container.StopOptions{Timeout: timeout}); err != nil {
			return err
		}
		return s.waitState(ctx, c.id, "exited")
	}
}

// killCtr sends SIGKILL and waits for the exit; a restart is Undo's concern.
func (s *Stack) killCtr(ctx context.Context, c faultCtr) error {
	wait, werr := s.api.ContainerWait(ctx, c.id, container.WaitConditionNextExit)
	if err := s.api.ContainerKill(ctx, c.id, "KILL"); err != nil {
		return err
	}
	select {
	case <-wait:
		return nil
	case err := <-werr:
		return fmt.Errorf("wait for exit: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Stack) disconnectCtr(ctx context.Context, c faultCtr) error {
	if len(c.networks) == 0 {
		return fmt.Errorf("not connected to any network")
	}
	for _, name := range slices.Sorted(maps.Keys(c.networks)) {
		if err := s.api.NetworkDisconnect(ctx, name, c.id, false); err != nil {
			return fmt.Errorf("disconnect from %s: %w", name, err)
		}
	}
	return nil
}

func (s *Stack) waitState(ctx context.Context, id, want string) error {
	for {
		ins, err := s.api.ContainerInspect(ctx, id)
		if err != nil {
			return err
		}
		if ins.State != nil && ins.State.Status == want {
			return nil
		}
		select {
		case <-ctx.Done():
			got := "unknown"
			if ins.State != nil {
				got = ins.State.Status
			}
			return fmt.Errorf("still %s, not %s: %w", got, want, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, FaultTimeout)
}
