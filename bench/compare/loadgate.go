package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// scenarioYAML is loadgate's load at one rate: one constant GET phase, no warm-up (as vegeta).
func scenarioYAML(rate int, dur, timeout time.Duration, maxInFlight int) string {
	return fmt.Sprintf(`name: bench-%d
timeout: %s
max_in_flight: %d
ceilings: {rate: %d, duration: 10m, in_flight: %d}
phases:
  - {name: sustain, rate: %d, duration: %s}
workloads:
  - {name: get, share: 1, http: {method: GET, path: /}}
`, rate, timeout, maxInFlight, max(200000, rate), max(10000, maxInFlight), rate, dur)
}

func (b *bench) runLoadgate(ctx context.Context, rate int, dur time.Duration) run {
	return b.runLoadgateBin(ctx, "loadgate", b.loadgate, rate, dur)
}

// runBefore runs -loadgate-before (the engine before a change) as the tool "before".
func (b *bench) runBefore(ctx context.Context, rate int, dur time.Duration) run {
	return b.runLoadgateBin(ctx, "before", b.before, rate, dur)
}

func (b *bench) runLoadgateBin(ctx context.Context, tool, bin string, rate int, dur time.Duration) run {
	r := run{Tool: tool, Rate: rate, Duration: dur, Offered: offered(rate, dur), SpunS: -1}
	if bin == "" {
		r.Skipped = tool + " binary not given"
		return r
	}
	name := fmt.Sprintf("%s-%d-%s", tool, rate, dur)
	if !b.rt {
		name += "-normal" // the low rates run each rate in both modes: keep both results
	}
	scen := filepath.Join(b.work, name+".yaml")
	outDir := filepath.Join(b.work, name)
	os.RemoveAll(outDir)
	if err := os.WriteFile(scen, []byte(scenarioYAML(rate, dur, b.timeout, b.maxInFlight)), 0o644); err != nil {
		r.Skipped = err.Error()
		return r
	}
	bin, args := b.generatorArgv("loadgate", bin,
		"run", "--scenario", scen, "--target", "http://"+b.srv.Addr+"/", "--out", outDir,
		"--load-cpus", b.genCPU, "--progress", "never")
	u, stderr, err := runPinned(ctx, b.genCPU, b.srv, dur+time.Minute, io.Discard, bin, args...)
	b.fillUsage(&r, u)
	if err != nil {
		r.Skipped = fmt.Sprintf("loadgate run: %v: %s", err, tail(stderr, 3))
		return r
	}
	path := filepath.Join(outDir, "result.json")
	if _, err := os.Stat(path); err != nil {
		r.Skipped = fmt.Sprintf("loadgate run exited %d without result.json: %s", u.ExitCode, tail(stderr, 3))
		return r
	}
	res, err := result.ReadFile(path)
	if err != nil {
		r.Skipped = err.Error()
		return r
	}
	fillFromResult(&r, res)
	if u.ExitCode != 0 {
		r.Note = append(r.Note, fmt.Sprintf("exit code %d", u.ExitCode))
	}
	return r
}

// fillFromResult copies result.json's figures into r, the held rate capped at successes ÷ seconds.
func fillFromResult(r *run, res *result.Result) {
	var secs float64
	failures := map[string]int64{}
	var abandoned int64
	var completed float64 // completions inside the phase windows
	for _, p := range res.Phases {
		secs += p.DurationS
		for _, w := range p.Workloads {
			completed += w.Throughput.CompletedPerS * p.DurationS
			r.Succeeded += w.Succeeded
			r.Sent += w.Succeeded + w.Failed
			r.Errors += w.Failed + w.Abandoned
			abandoned += w.Abandoned
			for k, v := range w.Failures {
				failures[k] += v
			}
		}
	}
	if secs > 0 {
		r.HeldRate = float64(r.Succeeded) / secs
		if completed > 0 {
			r.HeldRate = min(r.HeldRate, completed/secs)
		}
	}
	r.LatenessN = res.LatenessMS.Count
	r.LatenessP50, r.LatenessP99, r.LatenessMax = res.LatenessMS.P50, res.LatenessMS.P99, res.LatenessMS.Max
	r.Late = res.Late
	if res.Wait != nil {
		r.SpunS, r.MarginMS = res.Wait.SpunS, res.Wait.MarginMS
	}
	if len(failures) > 0 {
		r.Note = append(r.Note, "errors: "+topErrors(failures, 3))
	}
	if abandoned > 0 {
		r.Note = append(r.Note, fmt.Sprintf("%d abandoned", abandoned))
	}
	if res.Offered != r.Offered {
		r.Note = append(r.Note, fmt.Sprintf("loadgate offered %d (schedule %d)", res.Offered, r.Offered))
	}
	if !res.Usable {
		r.Unusable = strings.Join(res.Unusable, "; ")
		if r.Unusable == "" {
			r.Unusable = "usable: false"
		}
	}
	if res.Stalled > 0 {
		r.Note = append(r.Note, fmt.Sprintf("stalled %.3f s", res.Stalled))
	}
}
