package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// stackFlags are the flags of every command that brings a stack up.
type stackFlags struct {
	compose      multiFlag
	stackCPUs    string
	loadCPUs     string
	allowOverlap bool
	readyTimeout time.Duration
	statsEvery   time.Duration
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// cpuPlan is the stack's and the generator's cpusets.
type cpuPlan struct {
	stack, load pin.Set
	overlap     bool
}

// planCPUs applies the defaults (stack on the first half of this process's
// CPUs, load on the rest) and refuses overlapping sets unless allowed.
func planCPUs(f stackFlags) (cpuPlan, error) {
	all, err := pin.Available()
	if err != nil {
		return cpuPlan{}, fmt.Errorf("reading this process's CPUs: %w", err)
	}
	stack, load := pin.Split(all)
	if f.stackCPUs != "" {
		if stack, err = pin.Parse(f.stackCPUs); err != nil {
			return cpuPlan{}, fmt.Errorf("--stack-cpus %q: %w", f.stackCPUs, err)
		}
	}
	if f.loadCPUs != "" {
		if load, err = pin.Parse(f.loadCPUs); err != nil {
			return cpuPlan{}, fmt.Errorf("--load-cpus %q: %w", f.loadCPUs, err)
		}
	}
	if !load.SubsetOf(all) {
		return cpuPlan{}, fmt.Errorf("--load-cpus %s: not all of them are available to this process (%s)", load, all)
	}
	p := cpuPlan{stack: stack, load: load, overlap: pin.Overlaps(stack, load)}
	if p.overlap && !f.allowOverlap {
		return p, fmt.Errorf("the stack's cpus %s and the generator's %s overlap: they would compete and the numbers would describe neither; choose disjoint sets or pass --allow-overlap", stack, load)
	}
	return p, nil
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

// stackRun is a stack brought up for one run: up, target, sampler, down.
type stackRun struct {
	stack    *compose.Stack
	plan     cpuPlan
	addr     string
	path     string
	stopStat func() ([]result.Service, *result.Service)
	statsF   *os.File
	statsW   *bufio.Writer
	upTook   time.Duration
}

// upStack sweeps leftovers of earlier runs, pins the generator, brings the
// stack up on its cpuset and resolves the target service:port.
//
// plan comes from planCPUs, called once per process: after the generator is
// pinned, this process's CPUs are the load set only.
func upStack(ctx context.Context, files []string, target, out, runID, side string, plan cpuPlan, f stackFlags, stderr io.Writer) (*stackRun, error) {
	if err := compose.Available(ctx); err != nil {
		return nil, &exitError{code: exitUnusable, err: fmt.Errorf("no Docker engine: %w", err)}
	}
	if n, err := compose.Sweep(ctx); err != nil {
		fmt.Fprintf(stderr, "loadgate: warning: sweeping leftovers of earlier runs: %v\n", err)
	} else if n > 0 {
		fmt.Fprintf(stderr, "loadgate: removed %d leftover resource(s) of earlier runs\n", n)
	}
	if err := pin.PinProcess(plan.load); err != nil {
		fmt.Fprintf(stderr, "loadgate: warning: the generator could not be pinned to %s: %v\n", plan.load, err)
	}
	t0 := time.Now()
	st, err := compose.Up(ctx, compose.Options{
		Files: files, RunID: runID, Side: side, StackCPUs: plan.stack, OutDir: out,
		ReadyTimeout: f.readyTimeout, Log: stderr,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, &exitError{code: exitUnusable, err: fmt.Errorf("interrupted while the stack came up (torn down): %w", err)}
		}
		return nil, &exitError{code: exitUnusable, err: fmt.Errorf("stack did not come up: %w", err)}
	}
	sr := &stackRun{stack: st, plan: plan, upTook: time.Since(t0)}
	sr.addr, sr.path, err = st.Target(ctx, target)
	if err != nil {
		sr.down(stderr)
		if errors.Is(err, compose.ErrTargetRefused) {
			return nil, usageErr("%w", err)
		}
		return nil, &exitError{code: exitUnusable, err: err}
	}
	return sr, nil
}

// sample starts, once the warm-up is over (rule 7: warm-up is excluded from
// every number), the stack's stats sampler and the generator's own, both
// writing OUT/stats.jsonl.
func (sr *stackRun) sample(ctx context.Context, out string, every, warmup time.Duration) error {
	f, err := os.Create(filepath.Join(out, "stats.jsonl"))
	if err != nil {
		return err
	}
	sr.statsF, sr.statsW = f, bufio.NewWriter(f)
	w := &lockedWriter{w: sr.statsW}
	var mu sync.Mutex
	var stopStack func() []result.Service
	var stopSelf func() result.Service
	timer := time.AfterFunc(warmup, func() {
		mu.Lock()
		defer mu.Unlock()
		sctx := context.WithoutCancel(ctx)
		stopStack = sr.stack.Sample(sctx, every, w)
		stopSelf = sampleSelf(sctx, every, sr.plan.load.Len(), w)
	})
	sr.stopStat = func() ([]result.Service, *result.Service) {
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
		if stopStack == nil {
			return nil, nil
		}
		gen := stopSelf()
		return stopStack(), &gen
	}
	return nil
}

// lockedWriter serializes the samplers' lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sampleSelf samples the generator's own CPU (getrusage deltas, percent of
// one core and of its cpus) and resident memory every interval, writing
// stats.jsonl lines of service "loadgate".
func sampleSelf(ctx context.Context, every time.Duration, cpus int, w io.Writer) (stop func() result.Service) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan result.Service, 1)
	go func() {
		enc := json.NewEncoder(w)
		sum := result.Service{Name: "loadgate (generator)"}
		var cpuSum float64
		prevCPU, prevAt := selfCPU(), time.Now()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if sum.Samples > 0 {
					sum.CPUAvgPct = math.Round(cpuSum/float64(sum.Samples)*1000) / 1000
				}
				done <- sum
				return
			case now := <-t.C:
				c := selfCPU()
				dt := now.Sub(prevAt)
				pct := float64(c-prevCPU) / float64(dt) * 100
				prevCPU, prevAt = c, now
				rss := selfRSS()
				smp := compose.Sample{Time: now.UTC(), Service: "loadgate", Container: fmt.Sprintf("pid %d", os.Getpid()),
					IntervalS: dt.Seconds(), CPUPct: math.Round(pct*1000) / 1000, MemBytes: rss, CPUUsageNS: uint64(c)}
				if cpus > 0 {
					smp.CPUPctOfSet = math.Round(pct/float64(cpus)*1000) / 1000
				}
				_ = enc.Encode(smp)
				sum.Samples++
				cpuSum += pct
				sum.CPUPeakPct = math.Max(sum.CPUPeakPct, math.Round(pct*1000)/1000)
				sum.MemPeakBytes = max(sum.MemPeakBytes, rss)
			}
		}
	}()
	return func() result.Service {
		cancel()
		return <-done
	}
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfRSS is this process's resident set size (/proc/self/statm).
func selfRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// finish stops the sampler and fills the result's stack and topology.
func (sr *stackRun) finish(res *result.Result) error {
	var services []result.Service
	var gen *result.Service
	if sr.stopStat != nil {
		services, gen = sr.stopStat()
	}
	var err error
	if sr.statsF != nil {
		err = errors.Join(sr.statsW.Flush(), sr.statsF.Close())
	}
	res.Stack = &result.Stack{Services: services, Generator: gen}
	stackCPUs, pinned, reason, overridden := sr.stack.Topology()
	genPinned, genReason := generatorPinning(sr.plan.load)
	res.Topology.StackCPUs = stackCPUs
	res.Topology.CPUsetOverridden = overridden
	res.Topology.TargetPath = sr.path
	res.Topology.Pinned = pinned && genPinned && !sr.plan.overlap
	var why []string
	if reason != "" {
		why = append(why, "stack: "+reason)
	}
	if !genPinned {
		why = append(why, genReason)
	}
	if sr.plan.overlap {
		why = append(why, fmt.Sprintf("stack cpus %s and load cpus %s overlap (--allow-overlap)", sr.plan.stack, sr.plan.load))
	}
	res.Topology.PinnedReason = strings.Join(why, "; ")
	return err
}

// down tears the stack down with a fresh context (the run's may be
// cancelled by a signal) and says how long it took.
func (sr *stackRun) down(stderr io.Writer) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t0 := time.Now()
	err := sr.stack.Down(ctx)
	sr.stack.Close()
	return time.Since(t0), err
}
