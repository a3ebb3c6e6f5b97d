package main

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

//go:embed help/run.txt
var runHelp string

type runFlags struct {
	scenario, target, out string
	scale                 float64
	insecure              bool
	force                 bool // --force: replace a result already in --out
	progress              string
	cpuProfile            string
	stack                 stackFlags
	limits                scenario.OperatorLimits
	watch                 pidFlag             // --watch-pid (watchpid.go)
	faults                load.FaultHook      // the run's fault injector (faults.go); nil without faults
	started               []func(time.Time)   // told the schedule's start (load.Config.Started): counted reads, watched pids
	onProgress            func(load.Progress) // also called with each progress snapshot (soak)
	about                 about               // what the result states that is known before the load
	startAt               time.Time           // the schedule's start (load.Config.StartAt), zero: now; a duet gate's rounds share one
}

// about is what a result states that is known before its load: runLoad
// hands it to the engine (load.Config), so load.Run returns the result
// with it; what is known only after the load goes through Result.Complete.
type about struct {
	topology     result.Topology // stackRun.about or plainAbout; runLoad adds the generator's own cpus
	targetLabel  string          // "" : the target's URL
	side, commit string          // in a gate
	round        *result.Round   // in a gate
}

// plainAbout is about a plain run's load (a loopback --target URL), the
// generator pinned to loadSet (empty: not pinned).
func plainAbout(loadSet pin.Set) about {
	t := result.Topology{TargetPath: "loopback"}
	t.Pinned, t.PinnedReason = pin.Generator(loadSet)
	return about{topology: t}
}

// addLimitFlags adds the operator's ceilings: a scenario's own ceilings
// cannot raise them (the lower wins).
func addLimitFlags(fs *flag.FlagSet, l *scenario.OperatorLimits) {
	fs.Float64Var(&l.Rate, "max-rate", 0, "operator ceiling: refuse a scenario whose peak rate is above this many req/s, whatever its ceilings say (0: none)")
	fs.DurationVar(&l.Duration, "max-duration", 0, "operator ceiling: refuse a scenario whose warm-up and phases last longer (0: none)")
	fs.IntVar(&l.InFlight, "max-in-flight", 0, "operator ceiling: refuse a scenario whose max_in_flight is higher (0: none)")
}

func addStackFlags(fs *flag.FlagSet, f *stackFlags) {
	fs.Var(&f.compose, "compose", "compose `file` (repeatable; default: the scenario's stack.compose)")
	fs.StringVar(&f.stackCPUs, "stack-cpus", "", "cpu `list` for every service of the stack (default: the first half of this machine's)")
	fs.StringVar(&f.loadCPUs, "load-cpus", "", "cpu `list` the generator is pinned to (default with a stack: the other half); GOMAXPROCS follows")
	fs.BoolVar(&f.allowOverlap, "allow-overlap", false, "allow the stack's and the generator's cpus to overlap (the report says so)")
	fs.DurationVar(&f.readyTimeout, "ready-timeout", 2*time.Minute, "how long the stack may take to be healthy")
	fs.DurationVar(&f.statsEvery, "stats-interval", time.Second, "stack stats sampling `interval`")
}

// addPriorityFlag adds --load-priority, for the commands that send a load.
func addPriorityFlag(fs *flag.FlagSet, f *stackFlags) {
	f.priority = pin.ModeAuto
	fs.TextVar(&f.priority, "load-priority", pin.ModeAuto, "the generator's scheduling during a load: `auto` (SCHED_RR 1 when a stack and the generator are pinned apart and the system permits it), rt (SCHED_RR 1 wherever it runs, or refuse), normal (never raised)")
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	started := time.Now()
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "", "the scenario `file` (YAML)")
	fs.StringVar(&f.target, "target", "", "loopback base `URL`, or service:port of the stack (default: the scenario's stack.target)")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/<scenario>-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the result already in --out")
	fs.Float64Var(&f.scale, "scale", 1, "shorten every phase and the warm-up by this `factor` in (0,1]; nothing else changes")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (self-signed loopback servers)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (when a terminal), always, never")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the generator's CPU profile to `file` (for make bench)")
	fs.Var(&f.watch, "watch-pid", watchPIDUsage)
	addStackFlags(fs, &f.stack)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.limits)
	fs.Usage = func() { fmt.Fprint(stderr, runHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if f.scenario == "" {
		return usageErr("run: --scenario is required (see loadgate run -h)")
	}
	if err := checkProgress("run", f.progress); err != nil {
		return err
	}
	sc, err := scenario.Load(f.scenario, scenario.Options{Scale: f.scale, ScaleSet: true})
	if err == nil {
		err = sc.CheckOperatorLimits(f.limits)
	}
	if err != nil {
		return usageErr("%w", err)
	}
	env, err := resolveEnv(sc, stderr) // before anything is logged
	if err != nil {
		return err
	}
	files, plain, target, err := loadTarget("run", sc, f.target, f.stack)
	if err != nil {
		return err
	}
	if len(f.watch) > 0 && !plain {
		return usageErr("run: --watch-pid is for plain mode (a loopback --target URL): a stack's services are sampled already")
	}
	if err := checkWatchPIDs("run", f.watch); err != nil {
		return err
	}
	var loadSet pin.Set
	var targetURL *url.URL
	if plain {
		if targetURL, loadSet, err = plainTarget(ctx, "run", target, f.stack); err != nil {
			return err
		}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("loadgate-out", fmt.Sprintf("%s-%s", sc.Name, time.Now().Format("20060102-150405")))
	}
	if err := outfile.Dir(out, f.force, "--force"); err != nil {
		return usageErr("run: --out %w", err)
	}

	var sr *stackRun
	if !plain {
		if sr, err = startStack(ctx, "run", sc, files, target, out, f.stack, stderr); err != nil {
			return err
		}
		targetURL = &url.URL{Scheme: "http", Host: sr.addr}
		defer func() {
			if sr != nil { // not torn down yet: an early return
				sr.down(stderr)
			}
		}()
		if err := sr.sample(ctx, out, f.stack.statsEvery, sc.Warmup); err != nil {
			return unusable(fmt.Errorf("run: stats: %w", err))
		}
		f.about = sr.about(target)
	} else {
		f.about = plainAbout(loadSet)
	}
	var watched *plainSampler
	if len(f.watch) > 0 {
		if watched, err = startPlainSampling(ctx, out, f.watch, f.stack.statsEvery, sc.Warmup, false, 0, nil); err != nil {
			return unusable(fmt.Errorf("run: stats: %w", err))
		}
	}
	cnt, err := startCounting(ctx, sc, sr, stderr) // counted by the service: gate/counted
	if err != nil {
		return err
	}
	defer cnt.Stop()
	fr, err := startFaults(ctx, sc, sr, stderr) // phase inject: faults.go
	if err != nil {
		return err
	}
	defer fr.stop()
	f.faults = fr.hook
	f.started = startHooks(sr.started(), cnt.Started(ctx), watched.started()) // the counted reads and the watched pids' sampling (watchpid.go) start on the schedule's t0
	res, err := runLoad(fr.ctx, sc, env, targetURL, out, f, stderr)
	if watched != nil {
		services, _, _, ferr := watched.stop()
		if ferr != nil {
			fmt.Fprintf(stderr, "loadgate: warning: stats.jsonl: %v\n", ferr)
		}
		if res != nil {
			res.Complete(result.After{Stack: &result.Stack{Services: services}})
		}
	}
	if err != nil {
		return err
	}
	// before apply moves the fault windows' requests out of the phases: sent is all that was sent
	cnt.Finish(ctx, res)
	if err := fr.apply(res); err != nil { // the faults as they happened, their requests out of the phases
		return err
	}
	if sr != nil {
		st, ferr := sr.samples()
		if ferr != nil {
			fmt.Fprintf(stderr, "loadgate: warning: stats.jsonl: %v\n", ferr)
		}
		firstRequest := res.StartedAt.Sub(started)
		_, derr := sr.down(stderr)
		sr = nil
		teardown := time.Since(res.FinishedAt)
		res.Complete(result.After{Stack: st, Up: firstRequest, Teardown: teardown, TeardownErr: derr})
		fmt.Fprintf(stderr, "loadgate: start to first request %s; last request to clean teardown %s\n",
			firstRequest.Round(time.Millisecond), teardown.Round(time.Millisecond))
	}
	return finish(out, res, stdout, stderr)
}

// runLoad sends the load and writes snapshots.jsonl.
func runLoad(ctx context.Context, sc *scenario.Scenario, env map[string]string, target *url.URL, out string, f runFlags, stderr io.Writer) (*result.Result, error) {
	snapF, err := outfile.Create(filepath.Join(out, "snapshots.jsonl"))
	if err != nil {
		return nil, usageErr("run: %w", err)
	}
	snapW := bufio.NewWriter(snapF)
	topo := withGenerator(f.about.topology)
	lower, err := raiseGenerator(f.stack.priority, &topo)
	if err != nil {
		snapF.Close()
		return nil, usageErr("run: %w", err)
	}
	defer lower() // every return, a panic's too (it is called again at once after the load: idempotent)
	cfg := load.Config{
		Scenario:  sc,
		Target:    load.Target{URL: target, Insecure: f.insecure},
		Env:       env,
		Snapshots: snapW,
		Faults:    f.faults,
		Started:   f.started,
		StartAt:   f.startAt,
		// what the result states that is known before the load: load.Run returns it final
		Machine: machine(), Topology: topo, TargetLabel: f.about.targetLabel,
		Side: f.about.side, Commit: f.about.commit, Round: f.about.round,
	}
	pl := newProgressLine(stderr, f.progress)
	cfg.Progress = pl.update
	if f.onProgress != nil {
		cfg.Progress = func(p load.Progress) { pl.update(p); f.onProgress(p) }
	}
	fmt.Fprintf(stderr, "loadgate: %s (%s) → %s for %s, results in %s\n",
		sc.Name, report.ShortHash(sc.Hash), target.Redacted(), sc.TotalDuration().Round(time.Millisecond), out)
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return nil, usageErr("run: --cpuprofile: %w", err)
	}
	res, err := load.Run(ctx, cfg)
	if dropped := lower(); dropped != "" && res != nil {
		res.Topology.LoadSchedulingWhy = dropped // raised, and lowered by its guard during the load
	}
	stopProfile()
	pl.finish()
	if ferr := errors.Join(snapW.Flush(), snapF.Close()); ferr != nil && err == nil {
		fmt.Fprintf(stderr, "loadgate: warning: snapshots.jsonl: %v\n", ferr)
	}
	switch {
	case errors.Is(err, load.ErrOperation), errors.Is(err, load.ErrTargetRefused):
		return nil, usageErr("run: %w", err) // refused before any load: exit 2
	case err != nil:
		return nil, unusable(fmt.Errorf("run: %w", err))
	}
	return res, nil
}

func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := outfile.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// finish writes the result files, prints the report and maps the verdict to
// the exit code.
func finish(out string, res *result.Result, stdout, stderr io.Writer) error {
	v := verdict.Thresholds(res)
	if err := res.WriteFile(filepath.Join(out, "result.json")); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "report.md"), func(w io.Writer) error { return report.Markdown(w, res, v) }); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "verdict.json"), func(w io.Writer) error { return report.JSON(w, v) }); err != nil {
		return unusable(err)
	}
	if err := report.Text(stdout, res, v); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadgate: results in %s (result.json, report.md, verdict.json, snapshots.jsonl)\n", out)
	return verdictExit(v)
}

// writeFile writes a rendered file of the results (internal/outfile: a
// temporary file renamed over path, never through a symlink).
func writeFile(path string, render func(io.Writer) error) error {
	return outfile.Write(path, render)
}

// loopbackTarget parses raw and refuses anything that is not an http(s) URL
// whose host resolves only to loopback addresses (rule 14). The check is
// gate/load's (load.LoopbackTarget), the same one the run's dialer applies.
func loopbackTarget(ctx context.Context, raw string) (*url.URL, error) {
	t, err := load.LoopbackTarget(ctx, raw)
	if err != nil {
		return nil, err
	}
	return t.URL, nil
}

// progressLine redraws one status line on a terminal once per second.
// update is called from the engine's snapshot goroutine; finish from the
// caller after Run returns.
type progressLine struct {
	mu     sync.Mutex
	w      io.Writer
	on     bool
	drawn  bool
	late   int64
	maxP99 float64
}

func newProgressLine(w io.Writer, mode string) *progressLine {
	on := mode == "always"
	if mode == "auto" {
		if f, ok := w.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				on = true
			}
		}
	}
	return &progressLine{w: w, on: on}
}

func (p *progressLine) update(pr load.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := pr.Snapshot
	p.late += s.Late
	if s.P99MS > p.maxP99 {
		p.maxP99 = s.P99MS
	}
	if !p.on {
		return
	}
	per := pr.Interval.Seconds()
	fmt.Fprintf(p.w, "\r\033[K%s %.0f/%.0fs · offered %.0f/s · completed %.0f/s · in flight %d · late %s · p99 %s ms (n=%s, worst second %s ms)",
		pr.Phase, pr.PhaseElapsed.Seconds(), pr.PhaseDuration.Seconds(), float64(s.Offered)/per, float64(s.Succeeded+s.Failed)/per,
		s.InFlight, report.Count(p.late), report.MS(s.P99MS), report.Count(s.Count), report.MS(p.maxP99))
	p.drawn = true
}

func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
}

// startHooks is the non-nil ones of fs, for load.Config.Started.
func startHooks(fs ...func(time.Time)) []func(time.Time) {
	var out []func(time.Time)
	for _, f := range fs {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// checkProgress refuses a --progress value other than auto, always or never.
func checkProgress(cmd, v string) error {
	switch v {
	case "auto", "always", "never":
		return nil
	}
	return usageErr("%s: --progress must be auto, always or never, not %q", cmd, v)
}
