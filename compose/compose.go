// Package compose owns loadgate's throwaway stack: it loads Compose files, pins
// every service to the stack's cpuset, brings the project up, resolves the load
// target, samples container stats, saves logs and tears it all down. A *Stack's
// methods are safe for concurrent use; Down may run while a sampler runs.
package compose

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docker/cli/cli/command"
	"github.com/docker/cli/cli/flags"
	"github.com/docker/compose/v5/pkg/api"
	composesdk "github.com/docker/compose/v5/pkg/compose"
	"github.com/docker/docker/client"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

// Labels put on every container, network, volume and built image.
const (
	LabelRun     = "io.loadgate.run"     // run id
	LabelProject = "io.loadgate.project" // compose project name
	LabelSide    = "io.loadgate.side"    // side ("base", "head", …), may be empty
	LabelOwner   = "io.loadgate.owner"   // "<hostname>:<pid>" of the process that started the stack
)

// Target paths: the container's IP on the project network, or a published port.
const (
	PathContainerNetwork = "container-network"
	PathPublishedPort    = "published-port"
)

const DefaultReadyTimeout = 2 * time.Minute

const downTimeout = 2 * time.Minute

const pauseTimeout = time.Minute

// ErrTargetRefused: the target is not a service port of this stack.
var ErrTargetRefused = errors.New("target refused")

// Options says which stack to bring up and how.
type Options struct {
	Files        []string      // compose files, in override order; relative paths are relative to ProjectDir when set, else to the current directory
	ProjectDir   string        // the project directory (relative paths, .env); default: the first file's directory
	Root         string        // the side's checkout: binds, build contexts and env files stay inside; default: the git checkout holding ProjectDir, else ProjectDir
	RunID        string        // default: random
	Side         string        // e.g. "base" / "head"; may be empty
	StackCPUs    pin.Set       // cpuset for every service; empty: no pinning (pinned=false)
	Profiles     []string      // compose profiles to enable
	EnvFiles     []string      // env files for interpolation (default: ProjectDir/.env when present)
	OutDir       string        // logs go to OutDir/logs/<service>.log at Down; empty: logs are not saved
	ReadyTimeout time.Duration // how long start + health may take; default DefaultReadyTimeout
	Log          io.Writer     // progress lines (build output, lifecycle); nil: discarded
	Allow        []string      // scenario.HostKeys the (base) scenario's stack.allow accepts
	Secrets      []string      // values scrubbed from saved logs (the scenario's ${ENV} values; Up adds the job's secrets)
}

// Stack is a running throwaway project. Down is idempotent once it succeeded.
type Stack struct {
	name    string
	runID   string
	opt     Options
	project *types.Project
	cli     command.Cli
	svc     api.Compose
	api     client.APIClient
	log     io.Writer
	cliOut  *heldWriter // the Docker CLI's streams: log, held back while building

	stackCPUs  pin.Set
	pinned     bool
	reason     string
	overridden bool
	overrides  []result.Override

	readyBy time.Time // start + ReadyTimeout: how long Target waits for the target port

	mu   sync.Mutex // serializes Down and guards downed
	down bool
}

// ProjectName is "loadgate-<run id>-<side>", normalized to what Compose accepts.
func ProjectName(runID, side string) string {
	n := "loadgate-" + runID
	if side != "" {
		n += "-" + side
	}
	var b strings.Builder
	for _, r := range strings.ToLower(n) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func NewRunID() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Stack) Name() string { return s.name }

func (s *Stack) RunID() string { return s.runID }

// Project is the loaded, transformed compose project. Do not mutate.
func (s *Stack) Project() *types.Project { return s.project }

func (s *Stack) Services() []string { return s.project.ServiceNames() }

// Topology reports the stack's cpuset and whether pinning held, and why not.
func (s *Stack) Topology() (stackCPUs string, pinned bool, reason string, overridden bool) {
	return s.stackCPUs.String(), s.pinned, s.reason, s.overridden
}

// Overrides lists what loadgate changed in the compose model, by service.
func (s *Stack) Overrides() []result.Override { return slices.Clone(s.overrides) }

func (s *Stack) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "compose: "+format+"\n", args...)
}

func newCLI(w io.Writer) (command.Cli, error) {
	cli, err := command.NewDockerCli(command.WithCombinedStreams(w), command.WithInputStream(io.NopCloser(strings.NewReader(""))))
	if err != nil {
		return nil, fmt.Errorf("docker cli: %w", err)
	}
	if err := cli.Initialize(flags.NewClientOptions()); err != nil {
		return nil, fmt.Errorf("docker cli: %w", err)
	}
	return cli, nil
}

// Available reports whether a Docker engine is reachable (nil) or why not.
func Available(ctx context.Context) error {
	cli, err := newCLI(io.Discard)
	if err != nil {
		return err
	}
	defer cli.Client().Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Client().Ping(ctx); err != nil {
		return fmt.Errorf("docker engine not reachable: %w", err)
	}
	return nil
}

// Up brings the project up, waits until every service is healthy or running and
// reads the pinning back. After a failure that touched the engine it tears it down.
// A compose file refused (allow-list, bounds) is a *RefusedError: nothing was built.
func Up(ctx context.Context, opt Options) (*Stack, error) {
	s, err := loaded(ctx, opt)
	if err != nil {
		return nil, err
	}
	if err := s.preflightPinning(ctx); err != nil {
		return nil, err
	}
	register(s.name)
	if err := s.up(ctx); err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), downTimeout)
		defer cancel()
		if derr := s.Down(dctx); derr != nil {
			err = fmt.Errorf("%w (and teardown failed: %v)", err, derr)
		}
		return nil, err
	}
	return s, nil
}

// Check loads and checks the compose files as Up does, without an engine: the
// overrides loadgate would make, or a *RefusedError naming what it refuses.
func Check(ctx context.Context, opt Options) ([]result.Override, error) {
	s, err := loaded(ctx, opt)
	if err != nil {
		return nil, err
	}
	defer s.api.Close()
	return s.Overrides(), nil
}

// loaded is a Stack with its project loaded and checked, nothing on the engine.
func loaded(ctx context.Context, opt Options) (*Stack, error) {
	if opt.RunID == "" {
		opt.RunID = NewRunID()
	}
	if opt.ReadyTimeout <= 0 {
		opt.ReadyTimeout = DefaultReadyTimeout
	}
	opt.Secrets = upSecrets(opt.Secrets)
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := opt.absPaths(); err != nil {
		return nil, &RefusedError{Err: err}
	}
	cliOut := &heldWriter{to: logw}
	cli, err := newCLI(cliOut)
	if err != nil {
		return nil, err
	}
	s := &Stack{
		cliOut:    cliOut,
		name:      ProjectName(opt.RunID, opt.Side),
		runID:     opt.RunID,
		opt:       opt,
		cli:       cli,
		api:       cli.Client(),
		log:       logw,
		stackCPUs: opt.StackCPUs,
	}
	s.svc, err = composesdk.NewComposeService(cli,
		composesdk.WithEventProcessor(&progress{w: logw}),
		composesdk.WithPrompt(composesdk.AlwaysOkPrompt()))
	if err != nil {
		return nil, err
	}
	if err := s.load(ctx); err != nil {
		s.api.Close()
		return nil, err
	}
	return s, nil
}

// absPaths makes the files and ProjectDir (default: the first file's) absolute.
func (opt *Options) absPaths() error {
	if len(opt.Files) == 0 {
		return errors.New("compose: no compose file given")
	}
	files := make([]string, len(opt.Files))
	for i, f := range opt.Files {
		if !filepath.IsAbs(f) && opt.ProjectDir != "" {
			f = filepath.Join(opt.ProjectDir, f)
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return err
		}
		files[i] = abs
	}
	opt.Files = files
	if opt.ProjectDir == "" {
		opt.ProjectDir = filepath.Dir(files[0])
	}
	dir, err := filepath.Abs(opt.ProjectDir)
	if err != nil {
		return err
	}
	opt.ProjectDir = dir
	if opt.Root == "" {
		opt.Root = checkoutOf(dir)
	}
	if opt.Root, err = filepath.Abs(opt.Root); err != nil {
		return err
	}
	return nil
}

// checkoutOf is the nearest directory at or above dir that holds .git, else dir.
func checkoutOf(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

func (s *Stack) up(ctx context.Context) error {
	s.logf("project %s: building and creating %s", s.name, strings.Join(s.Services(), ", "))
	// Keep the builder's output: a failed build prints its last lines.
	s.cliOut.hold()
	err := s.svc.Create(ctx, s.project, api.CreateOptions{
		Build:         &api.BuildOptions{Out: s.cliOut},
		RemoveOrphans: true,
		Recreate:      api.RecreateForce,
	})
	build := s.cliOut.release()
	if err != nil {
		if tail := lastLines(build, buildTailLines); tail != "" {
			s.logf("build output (last %d lines):\n%s", buildTailLines, tail)
		}
		return fmt.Errorf("compose: create %s: %w", s.name, err)
	}
	start := time.Now()
	s.readyBy = start.Add(s.opt.ReadyTimeout)
	rctx, cancel := context.WithDeadline(ctx, s.readyBy)
	defer cancel()
	if err := s.svc.Start(rctx, s.name, api.StartOptions{Project: s.project}); err != nil {
		return s.explainStartFailure(ctx, rctx, err)
	}
	if err := s.waitReady(rctx); err != nil {
		return err
	}
	s.logf("project %s ready in %s", s.name, time.Since(start).Round(time.Millisecond))
	return s.verifyPinning(ctx)
}

// Down saves each service's log to OutDir/logs/, then removes everything
// labelled with this project. Pass a fresh context.
func (s *Stack) Down(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return nil
	}
	var errs []error
	if err := s.saveLogs(ctx); err != nil {
		errs = append(errs, err)
	}
	timeout := 5 * time.Second
	if err := s.svc.Down(ctx, s.name, api.DownOptions{
		Project:       s.project,
		RemoveOrphans: true,
		Volumes:       true,
		// Built images go in the label sweep below: compose removes them concurrently,
		// and services sharing an image ID make one fail.
		Timeout: &timeout,
	}); err != nil {
		errs = append(errs, fmt.Errorf("compose down %s: %w", s.name, err))
	}
	r, err := removeLabelled(ctx, s.api, LabelProject+"="+s.name, func(map[string]string, time.Time) bool { return true })
	if r.Images > 0 {
		s.logf("project %s: removed the %s it built", s.name, Removed{Images: r.Images})
	}
	if left := (Removed{Containers: r.Containers, Networks: r.Networks, Volumes: r.Volumes}); left.Total() > 0 {
		s.logf("project %s: removed %s that compose down left", s.name, left)
	}
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		s.down = true
		unregister(s.name)
		s.logf("project %s down", s.name)
	}
	return errors.Join(errs...)
}

// Pause freezes every running container until Unpause, through the engine
// client: the SDK's UnPause has a data race.
func (s *Stack) Pause(ctx context.Context) error {
	return s.eachContainer(ctx, func(ctx context.Context, c ctr) error {
		if c.state != "running" {
			return nil
		}
		return retryFreeze(ctx, func() error { return s.api.ContainerPause(ctx, c.ID) })
	})
}

// retryFreeze retries a pause the cgroup freezer gave up on under heavy load.
func retryFreeze(ctx context.Context, pause func() error) error {
	const attempts = 4
	var err error
	for i := 0; i < attempts; i++ {
		if err = pause(); err == nil || !strings.Contains(err.Error(), "freeze") {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("%w (tried %d times)", err, attempts)
}

func (s *Stack) Unpause(ctx context.Context) error {
	return s.eachContainer(ctx, func(ctx context.Context, c ctr) error {
		if c.state != "paused" {
			return nil
		}
		return s.api.ContainerUnpause(ctx, c.ID)
	})
}

func (s *Stack) eachContainer(ctx context.Context, fn func(context.Context, ctr) error) error {
	if _, ok := ctx.Deadline(); !ok { // bounded even when nothing cancels ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pauseTimeout)
		defer cancel()
	}
	cs, err := s.containers(ctx, false)
	if err != nil {
		return err
	}
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(ctx, c); err != nil {
				errs[i] = fmt.Errorf("compose: %s: %w", c.name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Stack) Close() error { return s.api.Close() }

// heldWriter writes through, except between hold and release, which returns
// what it kept. Safe for concurrent use.
type heldWriter struct {
	mu   sync.Mutex
	to   io.Writer
	held *strings.Builder // nil: not holding
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held != nil {
		return h.held.Write(p)
	}
	return h.to.Write(p)
}

func (h *heldWriter) hold() { h.mu.Lock(); h.held = &strings.Builder{}; h.mu.Unlock() }

func (h *heldWriter) release() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := ""
	if h.held != nil {
		s = h.held.String()
	}
	h.held = nil
	return s
}

const buildTailLines = 30

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// progress turns Compose SDK events into terse lines, each finished event once.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool // "Image … Built" lines already printed
}

func (p *progress) Start(context.Context, string) {}
func (p *progress) Done(string, bool)             {}
func (p *progress) On(events ...api.Resource) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range events {
		if e.Status == api.Working {
			continue
		}
		line := strings.TrimSpace(e.ID + " " + e.Text + " " + e.Details)
		if e.Text == api.StatusBuilt { // once per image; other lines (pause, unpause) repeat by right
			if p.seen[line] {
				continue
			}
			if p.seen == nil {
				p.seen = map[string]bool{}
			}
			p.seen[line] = true
		}
		fmt.Fprintf(p.w, "compose: %s\n", line)
	}
}

// live are this process's stacks, which Sweep never removes.
var (
	liveMu sync.Mutex
	live   = map[string]bool{}
)

var touched bool

// Touched reports whether this process ever began bringing a stack up.
func Touched() bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	return touched
}

func register(name string)   { liveMu.Lock(); live[name] = true; touched = true; liveMu.Unlock() }
func unregister(name string) { liveMu.Lock(); delete(live, name); liveMu.Unlock() }
func isLive(name string) bool {
	liveMu.Lock()
	defer liveMu.Unlock()
	return live[name]
}

func owner() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s:%d", h, os.Getpid())
}

// Removed counts what a teardown or a sweep removed, by kind.
type Removed struct {
	Containers, Networks, Volumes, Images int
}

func (r Removed) Total() int { return r.Containers + r.Networks + r.Volumes + r.Images }

// String is "2 containers, 1 network, 3 images", or "nothing".
func (r Removed) String() string {
	var parts []string
	for _, k := range []struct {
		n    int
		kind string
	}{{r.Containers, "container"}, {r.Networks, "network"}, {r.Volumes, "volume"}, {r.Images, "image"}} {
		switch {
		case k.n == 1:
			parts = append(parts, "1 "+k.kind)
		case k.n > 1:
			parts = append(parts, strconv.Itoa(k.n)+" "+k.kind+"s")
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}
