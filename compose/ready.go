package compose

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/loadgate/loadgate/internal/outfile"
)

const logTail = 50

// ReadyError says which service kept the stack from becoming ready, its state
// and last log lines.
type ReadyError struct {
	Project   string
	Service   string
	Container string
	State     string   // e.g. "running, unhealthy", "exited (code 1)", "starting (timed out)"
	Health    string   // the last healthcheck output, when there is a healthcheck
	Logs      []string // the last 50 log lines of the container
	Err       error    // the underlying error (e.g. from compose start), may be nil
	Exited    bool     // the container had exited (ExitCode is its status)
	ExitCode  int
	Hint      string // what the state means and where to look, in words
}

func (e *ReadyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "compose: project %s: service %s (%s) not ready: %s", e.Project, e.Service, e.Container, e.State)
	if e.Err != nil {
		fmt.Fprintf(&b, " [%v]", e.Err)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "\nhint: %s", e.Hint)
	}
	if e.Health != "" {
		fmt.Fprintf(&b, "\nlast healthcheck output: %s", strings.TrimSpace(e.Health))
	}
	fmt.Fprintf(&b, "\n--- last %d log lines of %s ---", len(e.Logs), e.Service)
	for _, l := range e.Logs {
		b.WriteString("\n")
		b.WriteString(l)
	}
	return b.String()
}

func (e *ReadyError) Unwrap() error { return e.Err }

type readiness int

const (
	notYet readiness = iota
	ready
	failed
)

func judge(ins container.InspectResponse) (readiness, string, string) {
	st := ins.State
	if st == nil {
		return notYet, "unknown", ""
	}
	health := ""
	if st.Health != nil && len(st.Health.Log) > 0 {
		health = st.Health.Log[len(st.Health.Log)-1].Output
	}
	policy := ""
	if ins.HostConfig != nil {
		policy = string(ins.HostConfig.RestartPolicy.Name)
	}
	switch {
	case st.Restarting:
		if ins.RestartCount >= 2 {
			return failed, fmt.Sprintf("restarting (restarted %d times, last exit code %d)", ins.RestartCount, st.ExitCode), health
		}
		return notYet, "restarting", health
	case st.Running && st.Paused:
		return notYet, "paused", health
	case st.Running:
		if st.Health == nil || st.Health.Status == "" || st.Health.Status == "none" {
			return ready, "running", health
		}
		switch st.Health.Status {
		case "healthy":
			return ready, "running, healthy", health
		case "unhealthy":
			return failed, fmt.Sprintf("running, unhealthy (failing streak %d)", st.Health.FailingStreak), health
		}
		return notYet, "running, " + st.Health.Status, health
	case st.Status == "exited":
		if st.ExitCode == 0 && (policy == "" || policy == "no" || policy == "on-failure") {
			return ready, "exited (code 0, completed)", health
		}
		return failed, fmt.Sprintf("exited (code %d%s)", st.ExitCode, oomNote(st.OOMKilled)), health
	case st.Status == "dead" || st.Status == "removing":
		return failed, st.Status, health
	}
	return notYet, st.Status, health
}

// explain adds a failed container's exit status and a hint: an exited or
// restarting container stopped by itself, not a network problem.
func explain(re *ReadyError, ins container.InspectResponse) {
	st := ins.State
	if st == nil {
		return
	}
	switch {
	case st.Restarting:
		re.Exited, re.ExitCode = true, st.ExitCode
		re.Hint = fmt.Sprintf("the container keeps exiting (last status %d) and being restarted: the service itself stops, see its log lines below", st.ExitCode)
	case st.Status == "exited" || st.Status == "dead":
		re.Exited, re.ExitCode = true, st.ExitCode
		switch {
		case st.OOMKilled:
			re.Hint = fmt.Sprintf("the container exited with status %d because it ran out of memory (OOM-killed): raise its memory limit", st.ExitCode)
		case st.ExitCode == 0:
			re.Hint = "the container exited with status 0: the service ended by itself (a load target must keep running), see its log lines below"
		default:
			re.Hint = fmt.Sprintf("the container exited with status %d: the service itself failed (not the network), see its log lines below", st.ExitCode)
		}
		if st.Error != "" {
			re.Hint += "; the engine said: " + st.Error
		}
	case st.Health != nil && st.Health.Status == "unhealthy":
		re.Hint = "the container runs but its healthcheck fails: see the healthcheck's output and the log lines below"
	}
}

func oomNote(oom bool) string {
	if oom {
		return ", OOM-killed"
	}
	return ""
}

func (s *Stack) waitReady(ctx context.Context) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		pending, fail, err := s.readyPass(ctx)
		if err == nil && fail != nil {
			return fail
		}
		if err == nil && pending == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if pending != nil {
				pending.State += fmt.Sprintf(" (not ready within %s)", s.opt.ReadyTimeout)
				pending.Err = ctx.Err()
				s.attachLogs(pending)
				return pending
			}
			return fmt.Errorf("compose: project %s not ready within %s: %w", s.name, s.opt.ReadyTimeout, errors.Join(ctx.Err(), err))
		case <-tick.C:
		}
	}
}

// readyPass inspects every container once: the first failed, else the first not ready.
func (s *Stack) readyPass(ctx context.Context) (pending, fail *ReadyError, err error) {
	cs, err := s.containers(ctx, true)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	for _, c := range cs {
		seen[c.service] = true
		ins, err := s.api.ContainerInspect(ctx, c.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("compose: inspect %s: %w", c.name, err)
		}
		verdict, state, health := judge(ins)
		re := &ReadyError{Project: s.name, Service: c.service, Container: c.name, State: state, Health: health}
		switch verdict {
		case failed:
			explain(re, ins)
		}
		switch verdict {
		case failed:
			s.attachLogs(re)
			return nil, re, nil
		case notYet:
			if pending == nil {
				pending = re
			}
		}
	}
	for _, name := range s.Services() {
		if !seen[name] && replicas(s, name) > 0 && pending == nil {
			pending = &ReadyError{Project: s.name, Service: name, Container: "-", State: "no container"}
		}
	}
	return pending, nil, nil
}

func replicas(s *Stack, service string) int {
	sc := s.project.Services[service]
	if sc.Scale != nil {
		return *sc.Scale
	}
	if sc.Deploy != nil && sc.Deploy.Replicas != nil {
		return *sc.Deploy.Replicas
	}
	return 1
}

// explainStartFailure names the failing service of a start error when it can.
func (s *Stack) explainStartFailure(ctx, rctx context.Context, startErr error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	pending, fail, err := s.readyPass(dctx)
	if err == nil && fail != nil {
		fail.Err = startErr
		return fail
	}
	if err == nil && pending != nil && rctx.Err() != nil {
		pending.State += fmt.Sprintf(" (not ready within %s)", s.opt.ReadyTimeout)
		pending.Err = startErr
		s.attachLogs(pending)
		return pending
	}
	return fmt.Errorf("compose: start %s: %w", s.name, startErr)
}

func (s *Stack) attachLogs(re *ReadyError) {
	if re.Container == "" || re.Container == "-" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var buf bytes.Buffer
	w := newLogScrub(&buf, s.opt.Secrets, MaxLogBytes)
	err := s.containerLogs(ctx, re.Container, fmt.Sprint(logTail), w)
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		re.Logs = []string{"(logs unavailable: " + err.Error() + ")"}
		return
	}
	text := strings.TrimRight(buf.String(), "\n")
	if text == "" {
		re.Logs = nil
		return
	}
	lines := strings.Split(text, "\n")
	if len(lines) > logTail {
		lines = lines[len(lines)-logTail:]
	}
	re.Logs = lines
}

// containerLogs copies a container's stdout and stderr to w; tail is "all" or a count.
func (s *Stack) containerLogs(ctx context.Context, id, tail string, w io.Writer) error {
	ins, err := s.api.ContainerInspect(ctx, id)
	if err != nil {
		return err
	}
	rc, err := s.api.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: tail})
	if err != nil {
		return err
	}
	defer rc.Close()
	if ins.Config != nil && ins.Config.Tty {
		_, err = io.Copy(w, rc)
	} else {
		_, err = stdcopy.StdCopy(w, w, rc)
	}
	return err
}

func (s *Stack) saveLogs(ctx context.Context) error {
	if s.opt.OutDir == "" || s.project == nil {
		return nil
	}
	cs, err := s.containers(ctx, true)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.opt.OutDir, "logs")
	if err := outfile.MkdirAll(dir); err != nil { // no symlink below the results directory
		return fmt.Errorf("compose: save logs: %w", err)
	}
	byService := map[string][]ctr{}
	for _, c := range cs {
		byService[c.service] = append(byService[c.service], c)
	}
	var errs []error
	for svc, list := range byService {
		f, err := outfile.Create(filepath.Join(dir, svc+".log"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		w := newLogScrub(f, s.opt.Secrets, MaxLogBytes)
		for _, c := range list {
			if len(list) > 1 {
				fmt.Fprintf(w, "===== %s =====\n", c.name)
			}
			if err := s.containerLogs(ctx, c.ID, "all", w); err != nil {
				errs = append(errs, fmt.Errorf("logs of %s: %w", c.name, err))
			}
		}
		if err := errors.Join(w.Close(), f.Close()); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("compose: save logs: %w", errors.Join(errs...))
	}
	return nil
}

const (
	pollFirst = 50 * time.Millisecond
	pollMax   = time.Second
)

// waitTarget polls, with backoff until the ready deadline, until the target's
// port accepts a connection, then rechecks the other services. A target that
// exits or never accepts fails as a *ReadyError.
func (s *Stack) waitTarget(ctx context.Context, target string, sc types.ServiceConfig, port int) (string, string, error) {
	deadline := s.readyBy
	if deadline.IsZero() {
		deadline = time.Now().Add(s.opt.ReadyTimeout)
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	start := time.Now()
	wait := pollFirst
	var last attempt
	for n := 1; ; n++ {
		actx := wctx
		if n == 1 { // the first attempt even when the deadline has passed
			var c context.CancelFunc
			actx, c = context.WithTimeout(ctx, 5*time.Second)
			defer c()
		}
		last = s.tryTarget(actx, target, sc, port)
		switch {
		case last.fatal != nil:
			return "", "", last.fatal
		case last.addr != "":
			if n > 1 {
				s.logf("target %s answered after %d attempts, %s", target, n, time.Since(start).Round(time.Millisecond))
			}
			if err := s.checkOthers(ctx); err != nil {
				return "", "", err
			}
			return last.addr, last.path, nil
		}
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("compose: target %s: interrupted while waiting for its port: %w", target, ctx.Err())
		}
		if time.Until(deadline) < wait {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-wctx.Done():
			t.Stop()
		case <-t.C:
		}
		if ctx.Err() != nil {
			return "", "", fmt.Errorf("compose: target %s: interrupted while waiting for its port: %w", target, ctx.Err())
		}
		wait = min(2*wait, pollMax)
	}
	re := &ReadyError{Project: s.name, Service: sc.Name, Container: last.container,
		State: fmt.Sprintf("running, but port %d accepted no TCP connection within the ready timeout of %s (polled for %s)", port, s.opt.ReadyTimeout, time.Since(start).Round(time.Millisecond)),
		Err:   fmt.Errorf("%w: %s", errNotAccepting, strings.Join(last.why, "; ")),
		Hint: fmt.Sprintf("the container kept running but nothing accepted connections on port %d: check that the service listens on that port on all interfaces (0.0.0.0), not only on 127.0.0.1; "+
			"\"connection refused\" means its address was reached and nothing listened, a timeout that the address is not reachable from this host", port)}
	if last.container == "" {
		re.Container = "-"
		re.State = "no running container within " + s.opt.ReadyTimeout.String()
		re.Hint = ""
	}
	s.attachLogs(re)
	return "", "", re
}

func (s *Stack) checkOthers(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, fail, err := s.readyPass(cctx)
	if err == nil && fail != nil {
		return fail
	}
	return nil
}
