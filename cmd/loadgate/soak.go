package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/gate/stack"
	"github.com/loadgate/loadgate/internal/outfile"
)

const soakHelp = `Usage: loadgate soak --scenario FILE --duration D [--target URL [--watch-pid PID]...] [--out DIR] [flags]

Holds the rate of the scenario's judged phase (a constant one) steady for D
after its warm-up, while memory is sampled every second for each stack
service, for the generator itself and (plain mode) for every --watch-pid
process. Each process's growth is judged on the window after the first
quarter, by a least-squares slope and by the first and last quartiles'
medians: a leak needs both above --leak-threshold. Under 12 samples or
5 minutes of window the verdict is inconclusive, and says which.

The request side is reported as in a run, per phase of the soak's clock
(one phase per hour: hour-1, hour-2, ...). Writes DIR/soak.json,
DIR/soak.md, DIR/soak.svg, DIR/result.json, DIR/stats.jsonl and
DIR/snapshots.jsonl.

Exit: 0 every process stable · 1 a leak, or inconclusive (a soak that
concluded nothing is not a pass) · 2 refused (bad input, a ceiling:
the scenario's ceilings.duration and --max-duration bound D; never
clamped) · 3 unusable or interrupted (SIGINT keeps what was measured,
marked interrupted).

Examples:
  loadgate soak --scenario examples/demo/soak.yaml --duration 2h --out out/soak
  loadgate soak --scenario load.yaml --target http://127.0.0.1:8080 --watch-pid 4242 --duration 30m

Flags:
`

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
	sc, err := soakScenario(base, f.duration)
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

	col := newMemCollector()
	every := f.stack.statsEvery
	var sr *stackRun
	var ps *plainSampler
	if plain {
		if ps, err = startPlainSampling(ctx, out, f.watch, every, sc.Warmup, true, 0, col); err != nil {
			return unusable(fmt.Errorf("soak: stats: %w", err))
		}
	} else {
		if sr, err = startStack(ctx, "soak", sc, files, target, out, f.stack, stderr); err != nil {
			return err
		}
		targetURL = &url.URL{Scheme: "http", Host: sr.addr}
		defer func() {
			if sr != nil {
				sr.down(stderr)
			}
		}()
		sr.statsTee = col
		if err := sr.sample(ctx, out, every, sc.Warmup); err != nil {
			return unusable(fmt.Errorf("soak: stats: %w", err))
		}
	}

	total := sc.TotalDuration()
	pl := newSoakProgress(stderr, f.progress, total, col)
	// ps's sampling starts at the schedule's t0 + the warm-up (rule 7); the
	// scenario injects no faults (refuseFaults), so no fault hook is skipped.
	rf := runFlags{progress: "never", insecure: f.insecure, onProgress: pl.update, about: plainAbout(loadSet), started: startHooks(ps.started(), sr.started())}
	if sr != nil {
		rf.about = sr.about(target)
	}
	res, err := runLoad(ctx, sc, env, targetURL, out, rf, stderr)
	pl.finish()
	if err != nil {
		if ps != nil {
			ps.stop()
		}
		return err
	}
	var watched []procstat.Summary
	if sr != nil {
		if ferr := sr.finish(res); ferr != nil {
			fmt.Fprintf(stderr, "loadgate: warning: stats.jsonl: %v\n", ferr)
		}
		_, derr := sr.down(stderr)
		sr = nil
		res.Complete(result.After{TeardownErr: derr})
	} else {
		services, pids, gen, ferr := ps.stop()
		if ferr != nil {
			fmt.Fprintf(stderr, "loadgate: warning: stats.jsonl: %v\n", ferr)
		}
		watched = pids
		res.Complete(result.After{Stack: &result.Stack{Services: services, Generator: gen}})
	}

	judged, _ := base.JudgedPhase()
	sres := &soak.Result{
		Schema: soak.Schema, Scenario: sc.Name, ScenarioHash: sc.Hash, StartedAt: res.StartedAt,
		DurationS: f.duration.Seconds(), WarmupS: sc.Warmup.Seconds(), RanS: res.FinishedAt.Sub(res.StartedAt).Seconds(),
		RatePerS: judged.Rate, SampleIntervalS: every.Seconds(), Interrupted: res.Interrupted,
		ThresholdBytesPerHour: threshold,
	}
	sres.Usable, sres.Unusable = soakUsable(res)
	sres.Processes = col.processes(threshold, res.Stack, watched)
	sres.Verdict = soak.Overall(sres.Processes)
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

// soakUsable says whether the soak's request side can be trusted: what the
// run's result says of itself and its record invariants (result.Check,
// design rule 3), and why not, in words.
func soakUsable(res *result.Result) (bool, []string) {
	var why []string
	if !res.Usable {
		why = append(why, res.Unusable...)
		if len(res.Unusable) == 0 {
			why = append(why, "the run's result is marked unusable")
		}
	}
	why = append(why, res.Check()...)
	return len(why) == 0, why
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

// maxSoakHours bounds --duration before any phase is built (the cell
// check bounds it further: scenario.MaxCells).
const maxSoakHours = 10000

// soakScenario is base with its phases replaced by the soak's: the judged
// phase's constant rate held for d, as one phase per hour of the soak's
// clock (hour-1, hour-2, ...; the last one may be short), so that the
// request side reads per hour. The warm-up, mix, workloads and ceilings are
// base's; the ceilings are checked again (refuse, never clamp) and the hash
// is the soak's own.
func soakScenario(base *scenario.Scenario, d time.Duration) (*scenario.Scenario, error) {
	if base.HasFaults() {
		return nil, fmt.Errorf("%s: the scenario injects faults: a soak holds one steady load", base.File)
	}
	judged, ok := base.JudgedPhase()
	if !ok {
		return nil, fmt.Errorf("%s: no judged phase to take the soak's rate from", base.File)
	}
	if judged.Pattern != scenario.Constant {
		return nil, fmt.Errorf("%s:%d: phase %s is a %s; a soak holds one steady rate: judge a constant phase (rate: R)", base.File, judged.Line, judged.Name, judged.Pattern)
	}
	if d > maxSoakHours*time.Hour {
		return nil, fmt.Errorf("--duration %s: more than %d hours", d, maxSoakHours)
	}
	sc := *base
	sc.Phases = nil
	for i, left := 1, d; left > 0; i++ {
		p := judged
		p.Name = fmt.Sprintf("hour-%d", i)
		p.Duration = min(left, time.Hour)
		p.Judged = false                // a soak judges memory, not the request side's thresholds
		p.Inject, p.Recovery = nil, nil // a soak injects nothing (refuseFaults)
		sc.Phases = append(sc.Phases, p)
		left -= p.Duration
	}
	if err := sc.CheckCeilings(); err != nil {
		return nil, err
	}
	// One phase per hour: the engine keeps a cell (up to two ~184 KiB
	// histograms) per phase and workload, which Parse bounded for the
	// scenario as written, not for these phases.
	if err := sc.CheckCells(); err != nil {
		return nil, fmt.Errorf("--duration %s is %d phases of an hour: %w", d, len(sc.Phases), err)
	}
	sc.Hash = sc.ComputeHash()
	return &sc, nil
}

// memCollector keeps every memory sample of every process, from the
// stats.jsonl lines written through it (io.Writer, one JSON line per
// Write or split across Writes). A watched process is keyed by its pid
// (its comm may change, by exec), a service by its name. Its CPU is not
// the collector's: processes takes it from the samplers' summaries, the
// numbers result.json states. Safe for concurrent use.
type memCollector struct {
	mu      sync.Mutex
	partial []byte
	series  map[string][]soak.Point
	kinds   map[string]string
	pids    map[string]int
	byPID   map[int]string // a watched process's name, as first seen
	order   []string
}

func newMemCollector() *memCollector {
	return &memCollector{series: map[string][]soak.Point{}, kinds: map[string]string{}, pids: map[string]int{}, byPID: map[int]string{}}
}

func (c *memCollector) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := c.partial[:i]
		var s stack.Sample
		if json.Unmarshal(line, &s) == nil && s.Service != "" {
			c.add(s)
		}
		c.partial = c.partial[i+1:]
	}
	if len(c.partial) > 1<<20 { // not our lines: drop, never grow
		c.partial = nil
	}
	return len(p), nil
}

func (c *memCollector) add(s stack.Sample) {
	name, kind, pid := s.Service, soak.KindService, 0
	switch {
	case s.Service == "loadgate":
		name, kind = "loadgate (generator)", soak.KindGenerator
	case strings.HasPrefix(s.Container, "pid "):
		kind = soak.KindPID
		if _, err := fmt.Sscanf(s.Container, "pid %d", &pid); err == nil {
			if first, ok := c.byPID[pid]; ok {
				name = first
			} else {
				c.byPID[pid] = name
			}
		}
	}
	if _, ok := c.kinds[name]; !ok {
		c.kinds[name], c.pids[name] = kind, pid
		c.order = append(c.order, name)
	}
	c.series[name] = append(c.series[name], soak.Point{Time: s.Time, MemBytes: s.MemBytes})
}

// estimates are the current growth estimates, for the progress line.
func (c *memCollector) estimates() []report.SoakEstimate {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []report.SoakEstimate
	for _, name := range c.sorted() {
		v, ok := soak.Estimate(c.series[name])
		out = append(out, report.SoakEstimate{Name: name, BytesPerHour: v, OK: ok})
	}
	return out
}

// sorted: services, then watched processes, then the generator; by name.
func (c *memCollector) sorted() []string {
	names := append([]string(nil), c.order...)
	rank := map[string]int{soak.KindService: 0, soak.KindPID: 1, soak.KindGenerator: 2}
	sort.SliceStable(names, func(i, j int) bool {
		if ri, rj := rank[c.kinds[names[i]]], rank[c.kinds[names[j]]]; ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// processes judges every process sampled. CPU is the samplers' (one
// owner: the summaries in stack, and watched for --watch-pid processes,
// whose exits they also tell).
func (c *memCollector) processes(threshold float64, stack *result.Stack, watched []procstat.Summary) []soak.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	cpu := map[string]result.Service{}
	if stack != nil {
		for _, s := range stack.Services {
			cpu[s.Name] = s
		}
		if g := stack.Generator; g != nil {
			cpu[g.Name] = *g
		}
	}
	byPID := map[int]procstat.Summary{}
	for _, w := range watched {
		byPID[w.PID] = w
	}
	var out []soak.Process
	for _, name := range c.sorted() {
		p := soak.NewProcess(name, c.kinds[name], c.pids[name], c.series[name], threshold)
		if s, ok := cpu[name]; ok && p.Kind != soak.KindPID {
			p.CPUAvgPct, p.CPUPeakPct = s.CPUAvgPct, s.CPUPeakPct
		}
		if w, ok := byPID[p.PID]; ok && p.Kind == soak.KindPID {
			p.CPUAvgPct, p.CPUPeakPct = w.CPUAvgPct, w.CPUPeakPct
			if w.Exited {
				p.SetExited(w.ExitedAt)
			}
		}
		out = append(out, p)
		delete(byPID, p.PID)
	}
	// A watched process with no sample (it went away during the warm-up)
	// is still one the soak could not judge.
	for _, w := range watched {
		if _, left := byPID[w.PID]; !left {
			continue
		}
		p := soak.NewProcess(pidService(w.PID, w.Name), soak.KindPID, w.PID, nil, threshold)
		if w.Exited {
			p.SetExited(w.ExitedAt)
		}
		out = append(out, p)
	}
	return out
}

// soakProgress redraws the soak's status line on a terminal: elapsed /
// total and each process's current growth estimate.
type soakProgress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	drawn bool
	total time.Duration
	col   *memCollector
}

func newSoakProgress(w io.Writer, mode string, total time.Duration, col *memCollector) *soakProgress {
	return &soakProgress{w: w, on: newProgressLine(w, mode).on, total: total, col: col}
}

func (p *soakProgress) update(pr load.Progress) {
	if !p.on {
		return
	}
	ests := p.col.estimates()
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
