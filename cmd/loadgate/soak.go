package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/internal/outfile"
)

//go:embed help/soak.txt
var soakHelp string

type soakFlags struct {
	scenario, target, out string
	duration              time.Duration
	leakThreshold         string
	watch                 pidFlag
	insecure, force       bool
	progress              string
	stack                 stackFlags
	limits                scenario.OperatorLimits
}

func soakCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f soakFlags
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "", "the scenario `file` (YAML); its judged phase's constant rate is held")
	fs.DurationVar(&f.duration, "duration", 0, "how long to hold the load after the warm-up (hours are the point; at least 6m40s can conclude)")
	fs.StringVar(&f.target, "target", "", "loopback base `URL`, or service:port of the stack (default: the scenario's stack.target)")
	fs.Var(&f.watch, "watch-pid", watchPIDUsage)
	fs.StringVar(&f.leakThreshold, "leak-threshold", "32MiB", "growth `per hour` above which (by both estimates) a process leaks, e.g. 32MiB or 32MiB/h")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/<scenario>-soak-<time>); one that already holds a result is refused unless --force")
	fs.BoolVar(&f.force, "force", false, "replace the result already in --out")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (self-signed loopback servers)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (when a terminal), always, never")
	addStackFlags(fs, &f.stack)
	addPriorityFlag(fs, &f.stack)
	addLimitFlags(fs, &f.limits)
	fs.Usage = func() { fmt.Fprint(stderr, soakHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	switch {
	case f.scenario == "":
		return usageErr("soak: --scenario is required (see loadgate soak -h)")
	case f.duration <= 0:
		return usageErr("soak: --duration is required and must be positive (e.g. 2h)")
	}
	if err := checkProgress("soak", f.progress); err != nil {
		return err
	}
	threshold, err := parseLeakThreshold(f.leakThreshold)
	if err != nil {
		return usageErr("soak: --leak-threshold: %w", err)
	}
	base, err := scenario.Load(f.scenario, scenario.Options{})
	if err != nil {
		return usageErr("%w", err)
	}
	if err := refuseFaults(base); err != nil {
		return err // before any bring-up
	}
	sc, err := soak.Scenario(base, f.duration)
	if err == nil {
		err = sc.CheckOperatorLimits(f.limits)
	}
	if err != nil {
		return usageErr("soak: %w", err)
	}
	env, err := resolveEnv(sc, stderr)
	if err != nil {
		return err
	}
	files, plain, target, err := loadTarget("soak", sc, f.target, f.stack)
	if err != nil {
		return err
	}
	if len(f.watch) > 0 && !plain {
		return usageErr("soak: --watch-pid is for plain mode (a loopback --target URL): a stack's services are sampled already")
	}
	if err := checkWatchPIDs("soak", f.watch); err != nil {
		return err
	}
	var targetURL *url.URL
	var loadSet pin.Set
	if plain {
		if targetURL, loadSet, err = plainTarget(ctx, "soak", target, f.stack); err != nil {
			return err
		}
	}
	if f.duration < soak.MinWindow*4/3 {
		fmt.Fprintf(stderr, "loadgate: WARNING: %s\n", report.SoakTooShort(f.duration, sc.Warmup))
	}
	out := f.out
	if out == "" {
		out = filepath.Join("loadgate-out", fmt.Sprintf("%s-soak-%s", sc.Name, time.Now().Format("20060102-150405")))
	}
	if err := outfile.Dir(out, f.force, "--force"); err != nil {
		return usageErr("soak: --out %w", err)
	}

	col := soak.NewCollector()
	every := f.stack.statsEvery
	rn := &soakRunner{lr: loadRunner{f: runFlags{progress: "never", insecure: f.insecure, stack: f.stack}, stderr: stderr}, env: env, target: targetURL, about: plainAbout(loadSet), dir: out}
	var sampler soak.Sampler = &soakPlain{out: out, pids: f.watch, every: every, col: col}
	if !plain {
		sr, err := startStack(ctx, "soak", sc, files, target, out, f.stack, stderr)
		if err != nil {
			return err
		}
		sr.statsTee = col
		sampler = &soakStack{cs: &composeStack{sr: sr, every: every, stderr: stderr}, out: out} // soak.Run tears it down
		rn.target, rn.about = &url.URL{Scheme: "http", Host: sr.addr}, sr.about(target)
	}
	pl := newSoakProgress(stderr, f.progress, sc.TotalDuration())
	sres, res, err := soak.Run(ctx, soak.Config{Base: base, Scenario: sc, Duration: f.duration, ThresholdBytesPerHour: threshold, Every: every},
		soak.Deps{Sampler: sampler, Runner: rn, Collector: col, Progress: pl.update,
			Warn: func(format string, a ...any) { fmt.Fprintf(stderr, "loadgate: warning: "+format+"\n", a...) }})
	pl.finish()
	if err != nil {
		if rounds.KindOf(err) == nil {
			err = unusable(err) // the soak's own: its stats file
		}
		return err
	}
	code := soakExit(sres) // exit.go
	if err := res.WriteFile(filepath.Join(out, "result.json")); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "soak.json"), sres.Encode); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "soak.md"), func(w io.Writer) error { return report.SoakMarkdown(w, sres, res, code) }); err != nil {
		return unusable(err)
	}
	if err := writeFile(filepath.Join(out, "soak.svg"), func(w io.Writer) error { return report.SoakSVG(w, sres) }); err != nil {
		return unusable(err)
	}
	if err := report.SoakText(stdout, sres); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadgate: results in %s (soak.md, soak.svg, soak.json, result.json, stats.jsonl, snapshots.jsonl)\n", out)
	summary := report.SoakSummary(sres)
	if err := soakOutcome(sres, summary); err != nil {
		return err // exit.go maps it
	}
	fmt.Fprintln(stderr, "loadgate:", summary)
	return nil
}

// refuseFaults refuses a scenario whose phases inject faults (exit 2): a
// soak holds one steady load, and a fault would read as memory growth.
func refuseFaults(sc *scenario.Scenario) error {
	if !sc.HasFaults() {
		return nil
	}
	for _, p := range sc.Phases {
		if len(p.Inject) > 0 {
			return usageErr("soak: %s:%d: phase %s injects faults (inject:): a soak holds one steady load; run faults with loadgate run", sc.File, p.Line, p.Name)
		}
	}
	return usageErr("soak: %s: the scenario injects faults: a soak holds one steady load; run faults with loadgate run", sc.File)
}

// parseLeakThreshold reads a byte size per hour: "32MiB", "32MiB/h", "1GiB".
func parseLeakThreshold(s string) (float64, error) {
	v, ok := scenario.ParseBytes(strings.TrimSuffix(strings.TrimSpace(s), "/h"))
	if !ok || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive size per hour such as 32MiB or 32MiB/h", s)
	}
	return float64(v), nil
}

// soakRunner is soak.Runner on the load engine (loadRunner): the load's
// snapshots go to dir, its progress to the soak's.
type soakRunner struct {
	lr     loadRunner
	env    map[string]string
	target *url.URL
	about  about
	dir    string
}

func (r *soakRunner) Run(ctx context.Context, sc *scenario.Scenario, started []func(time.Time), progress func(load.Progress)) (*result.Result, error) {
	lr := r.lr
	lr.f.onProgress = progress
	return lr.Run(ctx, rounds.RunSpec{Scenario: sc, Env: r.env, Target: r.target, TargetLabel: r.about.targetLabel, Topology: r.about.topology, Dir: r.dir, Started: started})
}

// soakStack is soak.Sampler on the soak's stack (composeStack): its
// services and the generator sampled into OUT/stats.jsonl (and the
// collector: stackRun.statsTee), and its teardown.
type soakStack struct {
	cs   *composeStack
	out  string
	stop func(*result.Result) error
}

func (s *soakStack) Start(ctx context.Context, warmup time.Duration) (func(time.Time), error) {
	start, stop, err := s.cs.Sample(ctx, s.out, warmup)
	s.stop = stop
	return start, err
}

func (s *soakStack) Finish(res *result.Result) ([]procstat.Summary, error) {
	var err error
	if s.stop != nil {
		into := res
		if into == nil {
			into = &result.Result{} // the load failed: only stop the samplers and close the file
		}
		err = s.stop(into)
	}
	_, derr := s.cs.Down()
	if res != nil {
		res.Complete(result.After{TeardownErr: derr})
	}
	return nil, err
}

// soakPlain is soak.Sampler in plain mode: the --watch-pid processes and
// the generator (plainSampler), into OUT/stats.jsonl and the collector.
type soakPlain struct {
	out   string
	pids  []int
	every time.Duration
	col   io.Writer
	ps    *plainSampler
}

func (s *soakPlain) Start(ctx context.Context, warmup time.Duration) (func(time.Time), error) {
	ps, err := startPlainSampling(ctx, s.out, s.pids, s.every, warmup, true, 0, s.col)
	if err != nil {
		return nil, err
	}
	s.ps = ps
	return ps.started(), nil
}

func (s *soakPlain) Finish(res *result.Result) ([]procstat.Summary, error) {
	if s.ps == nil {
		return nil, nil
	}
	services, pids, gen, err := s.ps.stop()
	if res != nil {
		res.Complete(result.After{Stack: &result.Stack{Services: services, Generator: gen}})
	}
	return pids, err
}

// soakProgress redraws the soak's status line on a terminal: elapsed /
// total and each process's current growth estimate.
type soakProgress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	drawn bool
	total time.Duration
}

func newSoakProgress(w io.Writer, mode string, total time.Duration) *soakProgress {
	return &soakProgress{w: w, on: newProgressLine(w, mode).on, total: total}
}

func (p *soakProgress) update(pr load.Progress, estimates []soak.Estimated) {
	if !p.on {
		return
	}
	ests := make([]report.SoakEstimate, len(estimates))
	for i, e := range estimates {
		ests[i] = report.SoakEstimate{Name: e.Name, BytesPerHour: e.BytesPerHour, OK: e.OK}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	per := pr.Interval.Seconds()
	s := pr.Snapshot
	fmt.Fprintf(p.w, "\r\033[K%s", report.SoakProgress(pr.Phase, pr.Elapsed, p.total, float64(s.Offered)/per, float64(s.Succeeded+s.Failed)/per, ests))
	p.drawn = true
}

func (p *soakProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
}
