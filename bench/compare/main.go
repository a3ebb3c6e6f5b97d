// Command compare is the orchestrator of `make bench`: it runs loadgate and vegeta, one at
// a time, on one core against a loopback server on another and reports each one's cost (bench/README.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
)

type bench struct {
	vegeta, loadgate string
	before           string // -loadgate-before: the tool "before"
	genCPU           string
	workers          int
	timeout          time.Duration
	maxInFlight      int
	work             string
	srv              *server
	crit             criterion
	deadline         time.Time
	quietWait        time.Duration
	retries          int
	// rt: both generators run SCHED_RR 1; false: SCHED_OTHER.
	rt bool
	// lgOld: the loadgate binary predates --load-priority: it runs under chrt like vegeta.
	lgOld bool
}

type generator struct {
	name string
	run  func(ctx context.Context, rate int, dur time.Duration) run
}

type options struct {
	vegeta      string
	loadgate    string
	serverBin   string
	serverMode  string
	serverCPU   string
	genCPU      string
	rates       string
	judgeRate   int
	lowRate     int
	lateRates   string
	dur         time.Duration
	searchDur   time.Duration
	searchStep  int
	searchMax   int
	bisect      int
	workers     int
	timeout     time.Duration
	maxInFlight int
	minSuccess  float64
	maxLate     float64
	budget      time.Duration
	retries     int
	quietWait   time.Duration
	tools       string
	work        string
	out         string
	lgVersion   string
	priority    string
	lowRates    string
	lowDur      time.Duration
	lowModes    string
	lowBudget   time.Duration
	onlyLow     bool
	before      string
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.vegeta, "vegeta", ".bench/bin/vegeta", "vegeta binary")
	flag.StringVar(&o.loadgate, "loadgate", "bin/loadgate", `loadgate binary ("" to leave loadgate not measured)`)
	flag.StringVar(&o.serverBin, "server", ".bench/bin/server", "bench/server binary")
	flag.StringVar(&o.serverMode, "server-mode", "raw", "bench/server -mode")
	flag.StringVar(&o.serverCPU, "server-cpu", "0", "core the server is pinned to")
	flag.StringVar(&o.genCPU, "gen-cpu", "1", "core each generator is pinned to")
	flag.StringVar(&o.rates, "rates", "5000,10000,20000", "fixed open-loop rates, requests/s")
	flag.IntVar(&o.judgeRate, "judge-rate", 20000, "high rate the targets are judged at: CPU ≤ 0.8× vegeta's, context switches well under 1 per request")
	flag.IntVar(&o.lowRate, "low-rate", 5000, "low rate the targets are judged at: CPU ≤ 1.0× vegeta's, context switches ≤ 1 per request")
	flag.StringVar(&o.lateRates, "lateness-rates", "5000,10000,20000", "fixed rates at which loadgate's lateness p99 must be ≤ 0.1 ms")
	flag.DurationVar(&o.dur, "duration", 10*time.Second, "duration of each fixed-rate run")
	flag.DurationVar(&o.searchDur, "search-duration", 5*time.Second, "duration of each search run")
	flag.IntVar(&o.searchStep, "search-step", 10000, "search step above the highest fixed rate, requests/s")
	flag.IntVar(&o.searchMax, "search-max", 150000, "highest rate the search tries")
	flag.IntVar(&o.bisect, "bisect", 2, "bisection steps after the step search")
	flag.IntVar(&o.workers, "workers", 64, "vegeta -workers and -max-workers")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Second, "per-request timeout (both tools)")
	flag.IntVar(&o.maxInFlight, "max-in-flight", 64, "loadgate max_in_flight (default: vegeta's 64 workers, the same bound on concurrency)")
	flag.Float64Var(&o.minSuccess, "held-success", 0.99, "held: successes ≥ this × rate × duration")
	flag.Float64Var(&o.maxLate, "held-lateness-ms", 10, "held: lateness p99 ≤ this, ms")
	flag.DurationVar(&o.budget, "budget", 6*time.Minute, "stop searching when the whole run would pass this")
	flag.IntVar(&o.retries, "retries", 1, "run a contended run, or a search step not held, again up to this many times")
	flag.DurationVar(&o.quietWait, "quiet-wait", 10*time.Second, "before each run, wait up to this long for the two cores to be idle")
	flag.StringVar(&o.tools, "tools", "vegeta,loadgate", "generators to run")
	flag.StringVar(&o.work, "work", ".bench/run", "scratch directory")
	flag.StringVar(&o.out, "out", ".bench/results.md", "where the markdown report is written")
	flag.StringVar(&o.lgVersion, "loadgate-version", "", "loadgate commit, for the report")
	flag.StringVar(&o.priority, "priority", "rt", "both generators' scheduling: rt (SCHED_RR 1: vegeta under chrt -r 1, loadgate --load-priority rt; SCHED_OTHER for both where it is not permitted) or normal")
	flag.StringVar(&o.lowRates, "low-rates", "20,60,300,1000", `the low rates gates run at, requests/s, each in every -low-modes ("": none)`)
	flag.DurationVar(&o.lowDur, "low-duration", 12*time.Second, "duration of each low-rate run")
	flag.StringVar(&o.lowModes, "low-modes", "rt,normal", "scheduling modes of the low rates: rt, normal or both (-priority applies to the rest)")
	flag.DurationVar(&o.lowBudget, "low-budget", 6*time.Minute, "the low rates' own time budget: runs that would pass it are not run")
	flag.StringVar(&o.before, "loadgate-before", "", `a loadgate binary of before a change, measured as the tool "before" (name it in -tools)`)
	flag.BoolVar(&o.onlyLow, "only-low", false, "run only the low rates (make bench-low)")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fixed, err := parseRates(o.rates)
	if err != nil {
		fatal(err)
	}
	lateAt, err := parseRates(o.lateRates)
	if err != nil {
		fatal(err)
	}
	var low []int
	if o.lowRates != "" {
		if low, err = parseRates(o.lowRates); err != nil {
			fatal(err)
		}
	}
	if err := cleanWork(o.work); err != nil {
		fatal(err)
	}
	b := &bench{
		vegeta: o.vegeta, loadgate: o.loadgate, before: o.before, genCPU: o.genCPU,
		workers: o.workers, timeout: o.timeout, maxInFlight: o.maxInFlight,
		work:     o.work,
		crit:     criterion{MinSuccess: o.minSuccess, MaxLatenessMS: o.maxLate},
		deadline: time.Now().Add(o.budget), quietWait: o.quietWait, retries: o.retries,
	}
	schedNote, err := b.schedule(ctx, o.priority)
	if err != nil {
		fatal(err)
	}
	gens, err := b.generators(o.tools)
	if err != nil {
		fatal(err)
	}
	modes, lowNote, err := b.lowModes(ctx, o.lowModes)
	if err != nil {
		fatal(err)
	}

	srv, err := startServer(o.serverBin, o.serverCPU, o.serverMode)
	if err != nil {
		fatal(err)
	}
	defer srv.Stop()
	b.srv = srv
	logf("server %s (%s mode), affinity %s", srv.Addr, o.serverMode, srv.CPUs)

	rep := &report{
		Start: time.Now(), Server: srv, ServerMode: o.serverMode, ServerCPU: o.serverCPU, GenCPU: o.genCPU,
		Crit: b.crit, JudgeRate: o.judgeRate, LowRate: o.lowRate, LatenessRates: lateAt, Workers: o.workers, Timeout: o.timeout, MaxInFlight: o.maxInFlight,
		Dur: o.dur, SearchDur: o.searchDur, VegetaVersion: moduleVersion(o.vegeta, "github.com/tsenart/vegeta/v12"),
		LoadgateVersion: o.lgVersion, Retries: o.retries, Tools: gens, MaxHeld: map[string]int{}, SearchNote: map[string]string{},
		RT: b.rt, LgOld: b.lgOld, SchedNote: schedNote, LowDur: o.lowDur, LowNote: lowNote, OnlyLow: o.onlyLow,
	}

	if !o.onlyLow {
		b.startupCost(ctx, rep, gens)
		b.fixedRates(ctx, rep, gens, fixed, o.dur)
		b.searchAll(ctx, rep, gens, o.searchStep, o.searchMax, o.bisect, o.searchDur)
	}
	b.deadline = time.Now().Add(o.lowBudget) // the low rates' own budget
	b.lowRates(ctx, rep, gens, modes, low, o.lowDur)
	rep.End = time.Now()
	rep.Interrupted = ctx.Err() != nil
	writeReport(rep, o.out)
	if rep.Interrupted {
		srv.Stop()
		os.Exit(130)
	}
}

func (b *bench) fixedRates(ctx context.Context, rep *report, gens []generator, fixed []int, dur time.Duration) {
	for i, rate := range fixed {
		for j := range gens {
			g := gens[(i+j)%len(gens)]
			if ctx.Err() != nil {
				break
			}
			rep.Runs = append(rep.Runs, b.measure(ctx, g, "fixed", rate, dur))
		}
	}
}

func cleanWork(work string) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	for _, pat := range []string{"loadgate-*", "vegeta-*", "before-*"} {
		old, _ := filepath.Glob(filepath.Join(work, pat))
		for _, f := range old {
			os.RemoveAll(f)
		}
	}
	return nil
}

func (b *bench) schedule(ctx context.Context, priority string) (note string, err error) {
	switch priority {
	case "rt":
		if out, err := exec.CommandContext(ctx, "chrt", "-r", "1", "true").CombinedOutput(); err != nil {
			note = fmt.Sprintf("SCHED_RR 1 was asked for but is not permitted here (chrt -r 1: %v %s): both ran SCHED_OTHER", err, strings.TrimSpace(string(out)))
		} else {
			b.rt = true
		}
	case "normal":
	default:
		return "", fmt.Errorf("-priority %q: want rt or normal", priority)
	}
	if b.loadgate != "" {
		help, _ := exec.CommandContext(ctx, b.loadgate, "run", "-h").CombinedOutput()
		b.lgOld = !strings.Contains(string(help), "-load-priority")
	}
	return note, nil
}

func (b *bench) generators(tools string) ([]generator, error) {
	var gens []generator
	for _, t := range strings.Split(tools, ",") {
		switch strings.TrimSpace(t) {
		case "vegeta":
			gens = append(gens, generator{"vegeta", b.runVegeta})
		case "loadgate":
			gens = append(gens, generator{"loadgate", b.runLoadgate})
		case "before":
			gens = append(gens, generator{"before", b.runBefore})
		case "":
		default:
			return nil, fmt.Errorf("unknown tool %q", t)
		}
	}
	return gens, nil
}

func (b *bench) startupCost(ctx context.Context, rep *report, gens []generator) {
	rep.Startup = map[string]int64{}
	for _, g := range gens {
		if ctx.Err() != nil {
			return
		}
		if r := g.run(ctx, 1, time.Second); r.Skipped == "" {
			rep.Startup[g.name] = r.Nvcsw
			logf("%s: a run of one request: %d voluntary context switches", g.name, r.Nvcsw)
		}
		pause(ctx)
	}
}

func (b *bench) searchAll(ctx context.Context, rep *report, gens []generator, step, top, bisect int, dur time.Duration) {
	for _, g := range gens {
		if ctx.Err() != nil {
			return
		}
		best, note := b.search(ctx, g, rep, step, top, bisect, dur)
		rep.MaxHeld[g.name] = best
		rep.SearchNote[g.name] = note
		logf("%s: highest held rate %d/s %s", g.name, best, note)
	}
}

func writeReport(rep *report, out string) {
	md := rep.markdown()
	fmt.Print(md)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
		if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
			logf("write %s: %v", out, err)
		}
	}
}

func (b *bench) search(ctx context.Context, g generator, rep *report, step, maxRate, bisect int, dur time.Duration) (int, string) {
	lo, hi, measured := bracket(rep.Runs, g.name)
	if !measured {
		return 0, "(not searched: no fixed-rate run was measured)"
	}
	var note string
	try := func(rate int) (held, ok bool) {
		if ctx.Err() != nil {
			note = "(interrupted)"
			return false, false
		}
		if time.Until(b.deadline) < dur+15*time.Second {
			note = "(search cut short by the time budget)"
			return false, false
		}
		r := b.measure(ctx, g, "search", rate, dur)
		rep.Runs = append(rep.Runs, r)
		if r.Skipped != "" {
			note = "(search stopped: a run was not measured)"
			return false, false
		}
		return r.Held, true
	}
	if hi == 0 {
		for rate := lo + step; ; rate += step {
			if rate > maxRate {
				return lo, fmt.Sprintf("(held every rate tried, up to the search maximum %d/s)", maxRate)
			}
			held, ok := try(rate)
			if !ok {
				return lo, note
			}
			if !held {
				hi = rate
				break
			}
			lo = rate
		}
	}
	for i := 0; i < bisect; i++ {
		mid := (lo + hi) / 2 / 500 * 500
		if mid <= lo || mid >= hi {
			break
		}
		held, ok := try(mid)
		if !ok {
			return lo, note
		}
		if held {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, fmt.Sprintf("(lowest rate not held: %d/s)", hi)
}

// bracket is tool's highest held rate, the lowest not held above it (0: none), and measured.
func bracket(runs []run, tool string) (lo, hi int, measured bool) {
	for _, r := range runs {
		measured = measured || (r.Tool == tool && r.Skipped == "")
		if r.Tool == tool && r.Held {
			lo = max(lo, r.Rate)
		}
	}
	for _, r := range runs {
		if r.Tool == tool && !r.Held && r.Rate > lo && (hi == 0 || r.Rate < hi) {
			hi = r.Rate
		}
	}
	return lo, hi, measured
}

func (b *bench) fillUsage(r *run, u usage) {
	r.CPU, r.User, r.Sys, r.MaxRSS, r.Wall, r.Pinned = u.CPU, u.User, u.Sys, u.MaxRSS, u.Wall, u.Pinned
	r.Nvcsw, r.Nivcsw = u.Nvcsw, u.Nivcsw
	r.ServerCPU, r.ServerNvcsw, r.ServerNivcsw = u.Server.CPU, -1, -1
	if u.Server.Rusage {
		r.ServerNvcsw, r.ServerNivcsw = u.Server.Nvcsw, u.Server.Nivcsw
	}
	r.OtherCPU = u.CoresBusy - u.CPU - u.Server.CPU
	r.Steal = u.CoresSteal
	r.Conns, r.SrvReqs = u.Conns, u.Reqs
	if pct := r.ContendedPct(); pct > contendedPct {
		r.Note = append(r.Note, fmt.Sprintf("contended: other processes used %.0f%% of a core and the hypervisor took %.0f%% (steal) on the benchmark's cores", r.OtherCPUPct(), r.StealPct()))
	}
	if r.Pinned != b.genCPU {
		r.Note = append(r.Note, "generator affinity read back as "+r.Pinned)
	}
	if want := b.scheduling(); u.Sched != want {
		r.Note = append(r.Note, fmt.Sprintf("generator scheduling read back as %s, not %s", u.Sched, want))
	}
}

func (b *bench) scheduling() string {
	if b.rt {
		return pin.Scheduling(2, pin.RealtimePriority, 0) // SCHED_RR 1
	}
	return pin.Scheduling(0, 0, 0)
}

func (b *bench) generatorArgv(tool, bin string, args ...string) (string, []string) {
	switch {
	case tool == "loadgate" && b.rt && !b.lgOld:
		return bin, append(args, "--load-priority", "rt")
	case tool == "loadgate" && !b.lgOld:
		return bin, append(args, "--load-priority", "normal")
	case b.rt:
		return "chrt", append([]string{"-r", "1", bin}, args...)
	}
	return bin, args
}

// contendedPct is the percent of a core lost to others above which a run is contended.
const contendedPct = 5

func offered(rate int, dur time.Duration) int64 {
	return int64(float64(rate) * dur.Seconds())
}

func parseRates(s string) ([]int, error) {
	var rates []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad rate %q", f)
		}
		rates = append(rates, n)
	}
	return rates, nil
}

// better prefers a held search attempt (contention only hurts), else the least contended.
func better(stage string, r, best *run) bool {
	if r.Skipped != "" {
		return false
	}
	if best.Skipped != "" {
		return true
	}
	if stage == "search" && r.Held != best.Held {
		return r.Held
	}
	return r.ContendedPct() < best.ContendedPct()
}

// pause lets the loopback connections of the previous run wind down.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(500 * time.Millisecond):
	}
}

// waitQuiet waits up to b.quietWait for the cores to idle: other work reads as lateness.
func (b *bench) waitQuiet(ctx context.Context) (time.Duration, bool) {
	const window = 500 * time.Millisecond
	t0 := time.Now()
	for {
		busy0, steal0 := coresBusy(b.srv.cpu, b.genCPU)
		srv0 := b.srv.CPU()
		select {
		case <-ctx.Done():
			return time.Since(t0), false
		case <-time.After(window):
		}
		busy1, steal1 := coresBusy(b.srv.cpu, b.genCPU)
		other := busy1 - busy0 - (b.srv.CPU() - srv0) + steal1 - steal0
		if 100*other.Seconds()/window.Seconds() <= contendedPct {
			return time.Since(t0), true
		}
		if time.Since(t0) >= b.quietWait {
			return time.Since(t0), false
		}
	}
}

func (b *bench) measure(ctx context.Context, g generator, stage string, rate int, dur time.Duration) run {
	var best run
	var others []string // other CPU % of each attempt
	for try := 0; ; try++ {
		waited, quiet := b.waitQuiet(ctx)
		if waited > time.Second {
			logf("waited %s for the cores to be quiet", waited.Round(100*time.Millisecond))
		}
		r := g.run(ctx, rate, dur)
		r.Stage = stage
		if !quiet {
			r.Note = append(r.Note, fmt.Sprintf("started on busy cores after waiting %s for them to be quiet", waited.Round(time.Second)))
		}
		if r.Skipped == "" && r.SrvReqs >= 0 && r.SrvReqs != r.Sent {
			r.Note = append(r.Note, fmt.Sprintf("the server answered %d requests, the tool reports %d answered", r.SrvReqs, r.Sent))
		}
		b.crit.judge(&r)
		logRun(&r)
		pause(ctx)
		others = append(others, fmt.Sprintf("%.0f%%", r.ContendedPct()))
		if try == 0 || better(stage, &r, &best) {
			best = r
		}
		if !again(stage, &best, try, b.retries) || ctx.Err() != nil || time.Until(b.deadline) < dur+15*time.Second {
			if try > 0 {
				best.Note = append(best.Note, fmt.Sprintf("kept 1 of %d attempts (other CPU + steal %s)", try+1, strings.Join(others, ", ")))
			}
			return best
		}
		logf("contended run, running it again")
	}
}

// again says whether to retry a contended run or an unheld search step (one stall decides a
// step at the limit), up to retries.
func again(stage string, best *run, try, retries int) bool {
	if best.Skipped != "" || try >= retries || (stage == "search" && best.Held) {
		return false
	}
	return best.ContendedPct() > contendedPct || stage == "search"
}

func logRun(r *run) {
	if r.Skipped != "" {
		logf("%-8s %6d/s %-4s not measured: %s", r.Tool, r.Rate, r.Duration, r.Skipped)
		return
	}
	held := "held"
	if !r.Held {
		held = "NOT held: " + r.Why
	}
	logf("%-8s %6d/s %-4s held %8.1f/s  cpu %6.2f µs/req (user %.2f sys %.2f)  vcs %.2f/req ivcs %.2f/req  late p50 %s p99 %s ms  rss %5.1f MiB  err %d  server %3.0f%% %.2f µs/req  other %3.0f%%  conns %d  %s",
		r.Tool, r.Rate, r.Duration, r.HeldRate, r.CPUPerReq(), r.UserPerReq(), r.SysPerReq(), r.VcsPerReq(), r.IvcsPerReq(),
		ms(r.LatenessP50), ms(r.LatenessP99),
		float64(r.MaxRSS)/(1<<20), r.Errors, r.ServerCPUPct(), r.ServerCPUPerReq(), r.OtherCPUPct(), r.Conns, held)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
