package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/session"
)

// stackFlags are the flags of every command that brings a stack up.
type stackFlags struct {
	compose      multiFlag
	stackCPUs    string
	loadCPUs     string
	allowOverlap bool
	readyTimeout time.Duration
	statsEvery   time.Duration
	priority     pin.Mode // --load-priority (commands that send a load; "" elsewhere: auto)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// loadTarget is where a command's load goes (run, sweep, soak): plain, a
// loopback URL given as --target (the scenario's stack is not started);
// else the stack's compose files and its target service:port (--target,
// else the scenario's stack.target). Refusals are usage errors.
func loadTarget(cmd string, sc *scenario.Scenario, raw string, f stackFlags) (files []string, plain bool, target string, err error) {
	files = composeFiles(sc, f)
	plain = strings.Contains(raw, "://")
	switch {
	case plain && len(f.compose) > 0:
		return nil, false, "", usageErr("%s: --target %s is a URL, but --compose asks for a stack: give the stack's service:port as --target", cmd, raw)
	case plain:
		return nil, true, raw, nil
	case len(files) == 0 && raw == "":
		return nil, false, "", usageErr("%s: --target is required: a loopback URL such as http://127.0.0.1:8080 (the scenario has no stack: section)", cmd)
	case len(files) == 0:
		return nil, false, "", usageErr("%s: --target %q is not a URL, and there is no stack (no stack: section, no --compose) it could be a service of", cmd, raw)
	case raw != "":
		return files, false, raw, nil
	case sc.Stack == nil || sc.Stack.Target == "":
		return nil, false, "", usageErr("%s: --target service:port is required: the scenario's stack: names no target", cmd)
	}
	return files, false, sc.Stack.Target, nil
}

// resolveEnv resolves the scenario's ${NAME} values from this process's
// environment without the runner's credentials, and masks them (GitHub
// Actions) before anything is logged.
func resolveEnv(sc *scenario.Scenario, stderr io.Writer) (map[string]string, error) {
	env, err := sc.ResolveEnv(action.WithoutRunnerSecrets(os.LookupEnv))
	if err != nil {
		return nil, usageErr("%w", err)
	}
	action.MaskEnv(stderr, os.Getenv, env)
	return env, nil
}

// plainTarget is a plain run's target (cmd run, sweep, soak): the loopback
// URL checked (rule 14, load.LoopbackTarget: the check the run's dialer
// applies), and the generator pinned to --load-cpus when given (the set
// it is pinned to; empty when not).
func plainTarget(ctx context.Context, cmd, raw string, f stackFlags) (*url.URL, pin.Set, error) {
	t, err := load.LoopbackTarget(ctx, raw)
	if err != nil {
		return nil, pin.Set{}, usageErr("%s: %w", cmd, err)
	}
	var set pin.Set
	if f.loadCPUs != "" {
		if set, err = pin.Parse(f.loadCPUs); err != nil {
			return nil, pin.Set{}, usageErr("%s: --load-cpus %q: %w", cmd, f.loadCPUs, err)
		}
		if err := pin.PinProcess(set); err != nil {
			return nil, pin.Set{}, usageErr("%s: --load-cpus: %w", cmd, err)
		}
	}
	if err := checkPriority(f); err != nil {
		return nil, pin.Set{}, usageErr("%s: %w", cmd, err)
	}
	return t.URL, set, nil
}

// startStack brings the scenario's stack up for one command (run, sweep,
// soak: the project's suffix): the cpus planned from the flags, the
// scenario's stack.prepare, the stack pinned and the target resolved. The
// caller tears it down on every return.
func startStack(ctx context.Context, cmd string, sc *scenario.Scenario, files []string, target, out string, f stackFlags, stderr io.Writer) (*session.Compose, error) {
	plan, err := planCPUs(f)
	if err != nil {
		return nil, usageErr("%s: %w", cmd, err)
	}
	prep, prepDir := stackPrepare(sc)
	c, err := bringUp(ctx, compose.Spec{Files: files, Target: target, Prepare: prep, PrepareDir: prepDir, OutDir: out, Side: cmd}, plan, f, stderr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return c, nil
}

// bringUp is session.Up with the flags, the prepare command run without
// the runner's credentials (no GitHub token for a checkout's own script).
// plan comes from planCPUs, called once per process: after the generator
// is pinned, this process's CPUs are the load set only.
func bringUp(ctx context.Context, sp compose.Spec, plan pin.Plan, f stackFlags, stderr io.Writer) (*session.Compose, error) {
	sp.PrepareEnv = action.EnvWithoutRunnerSecrets(os.Environ())
	sp.Plan, sp.ReadyTimeout, sp.Log = plan, f.readyTimeout, stderr
	return session.Up(ctx, sp, f.statsEvery)
}

// planCPUs is pin.NewPlan of the stack flags, and checkPriority.
func planCPUs(f stackFlags) (pin.Plan, error) {
	p, err := pin.NewPlan(f.stackCPUs, f.loadCPUs, f.allowOverlap)
	if err != nil {
		return p, err
	}
	return p, checkPriority(f)
}

// checkPriority refuses --load-priority rt where the system would not
// permit it, before anything starts.
func checkPriority(f stackFlags) error {
	if f.priority != pin.ModeRealtime {
		return nil
	}
	if err := pin.CheckRaise(); err != nil {
		return fmt.Errorf("--load-priority rt: %w", err)
	}
	return nil
}

// composeFiles are --compose files when given, else the scenario's.
func composeFiles(sc *scenario.Scenario, f stackFlags) []string {
	if len(f.compose) > 0 {
		return f.compose
	}
	if sc.Stack != nil {
		return sc.Stack.Compose
	}
	return nil
}

// stackPrepare is the scenario's stack.prepare and where it runs. It runs
// whenever the scenario has one — whether the compose files come from the
// scenario or from --compose — in run, up and (in each side's checkout)
// gate alike.
func stackPrepare(sc *scenario.Scenario) ([]string, string) {
	if sc.Stack == nil || len(sc.Stack.Prepare) == 0 {
		return nil, ""
	}
	return sc.Stack.Prepare, sc.Stack.Dir
}
