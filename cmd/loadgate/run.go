package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

const runHelp = `Usage: loadgate run --scenario FILE --target URL [--out DIR] [flags]

Runs the named load in FILE against URL (a loopback address: 127.0.0.0/8 or
::1), writes DIR/result.json, DIR/snapshots.jsonl, DIR/report.md and
DIR/verdict.json, prints a report and judges the scenario's thresholds.

Examples:
  loadgate run --scenario load.yaml --target http://127.0.0.1:8080 --out out/api
  loadgate run --scenario load.yaml --target http://localhost:8080 --scale 0.1

Flags:
`

type runFlags struct {
	scenario, target, out string
	scale                 float64
	insecure              bool
	progress              string
	loadCPUs              string
	cpuProfile            string
}

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.scenario, "scenario", "", "the scenario `file` (YAML)")
	fs.StringVar(&f.target, "target", "", "base `URL` of the service under load (loopback only)")
	fs.StringVar(&f.out, "out", "", "results `dir` (default loadgate-out/<scenario>-<time>)")
	fs.Float64Var(&f.scale, "scale", 1, "shorten every phase and the warm-up by this `factor` in (0,1]; nothing else changes")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (self-signed loopback servers)")
	fs.StringVar(&f.progress, "progress", "auto", "progress line on stderr: auto (when a terminal), always, never")
	fs.StringVar(&f.loadCPUs, "load-cpus", "", "pin the generator to this cpu `list` (e.g. 1 or 2-3); GOMAXPROCS follows")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the generator's CPU profile to `file` (for make bench)")
	fs.Usage = func() { fmt.Fprint(stderr, runHelp); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if f.scenario == "" {
		return usageErr("run: --scenario is required (see loadgate run -h)")
	}
	if f.target == "" {
		return usageErr("run: --target is required: a loopback URL such as http://127.0.0.1:8080")
	}
	switch f.progress {
	case "auto", "always", "never":
	default:
		return usageErr("run: --progress must be auto, always or never, not %q", f.progress)
	}

	sc, err := scenario.Load(f.scenario, scenario.Options{Scale: f.scale})
	if err != nil {
		return usageErr("%w", err)
	}
	target, err := loopbackTarget(ctx, f.target)
	if err != nil {
		return usageErr("run: %w", err)
	}
	env, err := sc.ResolveEnv(os.LookupEnv)
	if err != nil {
		return usageErr("%w", err)
	}
	var loadSet pin.Set
	if f.loadCPUs != "" {
		if loadSet, err = pin.Parse(f.loadCPUs); err != nil {
			return usageErr("run: --load-cpus %q: %w", f.loadCPUs, err)
		}
		if err := pin.PinProcess(loadSet); err != nil {
			return usageErr("run: --load-cpus: %w", err)
		}
	}
	out := f.out
	if out == "" {
		out = filepath.Join("loadgate-out", fmt.Sprintf("%s-%s", sc.Name, time.Now().Format("20060102-150405")))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usageErr("run: results dir: %w", err)
	}
	snapF, err := os.Create(filepath.Join(out, "snapshots.jsonl"))
	if err != nil {
		return usageErr("run: %w", err)
	}
	snapW := bufio.NewWriter(snapF)

	cfg := load.Config{
		Scenario:  sc,
		Target:    load.Target{URL: target, Insecure: f.insecure},
		Env:       env,
		Snapshots: snapW,
	}
	pl := newProgressLine(stderr, f.progress)
	cfg.Progress = pl.update
	fmt.Fprintf(stderr, "loadgate: %s (%s) → %s for %s, results in %s\n",
		sc.Name, shortHash(sc.Hash), target.Redacted(), sc.TotalDuration().Round(time.Millisecond), out)

	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return usageErr("run: --cpuprofile: %w", err)
	}
	res, err := load.Run(ctx, cfg)
	stopProfile()
	pl.finish()
	if ferr := errors.Join(snapW.Flush(), snapF.Close()); ferr != nil && err == nil {
		fmt.Fprintf(stderr, "loadgate: warning: snapshots.jsonl: %v\n", ferr)
	}
	if err != nil {
		return &exitError{code: exitUnusable, err: fmt.Errorf("run: %w", err)}
	}
	fillMachine(res)
	res.Topology.TargetPath = "loopback"
	res.Topology.Pinned, res.Topology.PinnedReason = generatorPinning(loadSet)
	return finish(out, res, stdout, stderr)
}

func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// generatorPinning reads the generator's affinity back (every thread) and
// says whether it held.
func generatorPinning(want pin.Set) (bool, string) {
	if want.Empty() {
		return false, "plain run mode without --load-cpus: the generator is not pinned and no stack was started"
	}
	threads, err := pin.ThreadSets()
	if err != nil {
		return false, fmt.Sprintf("could not read the generator's affinity back: %v", err)
	}
	for tid, got := range threads {
		if !got.Equal(want) {
			return false, fmt.Sprintf("generator thread %d runs on cpus %s, not %s", tid, got, want)
		}
	}
	return true, fmt.Sprintf("generator pinned to cpus %s (all %d threads read back); no stack in plain run mode", want, len(threads))
}

// finish writes the result files, prints the report and maps the verdict to
// the exit code.
func finish(out string, res *result.Result, stdout, stderr io.Writer) error {
	v := verdict.Thresholds(res)
	if err := res.WriteFile(filepath.Join(out, "result.json")); err != nil {
		return &exitError{code: exitUnusable, err: err}
	}
	if err := writeFile(filepath.Join(out, "report.md"), func(w io.Writer) error { return report.Markdown(w, res, v) }); err != nil {
		return &exitError{code: exitUnusable, err: err}
	}
	if err := writeFile(filepath.Join(out, "verdict.json"), func(w io.Writer) error { return report.JSON(w, v) }); err != nil {
		return &exitError{code: exitUnusable, err: err}
	}
	if err := report.Text(stdout, res, v); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "loadgate: results in %s (result.json, report.md, verdict.json, snapshots.jsonl)\n", out)
	if code := v.ExitCode(); code != 0 {
		return &exitError{code: code, err: fmt.Errorf("verdict: %s", v.Value)}
	}
	return nil
}

func writeFile(path string, render func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := render(w); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loopbackTarget parses raw and refuses anything that is not an http(s) URL
// whose host resolves only to loopback addresses (rule 14).
func loopbackTarget(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--target %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("--target %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("--target %q: no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("--target: credentials in the URL are not accepted (they would be written into results); use a header with ${ENV}")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--target %q: a query or fragment belongs in the workload's path, not the target", raw)
	}
	host := u.Hostname()
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err := net.DefaultResolver.LookupIPAddr(rctx, host)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("--target %q: %w", raw, err)
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return nil, fmt.Errorf("--target %s resolves to %s, which is not a loopback address: loadgate run sends load only to 127.0.0.0/8 or ::1, or to a stack it started itself", u.Host, ip)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("--target %q: host resolves to no address", raw)
	}
	return u, nil
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return h
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
	fmt.Fprintf(p.w, "\r\033[K%s %.0f/%.0fs · offered %.0f/s · completed %.0f/s · in flight %d · late %d · p99 %s (n=%d, worst second %s)",
		pr.Phase, pr.PhaseElapsed.Seconds(), pr.PhaseDuration.Seconds(), float64(s.Offered)/per, float64(s.Succeeded+s.Failed)/per,
		s.InFlight, p.late, fmtMS(s.P99MS), s.Count, fmtMS(p.maxP99))
	p.drawn = true
}

func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
}

func fmtMS(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	default:
		return fmt.Sprintf("%.2fms", v)
	}
}
