package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/stack"
	"github.com/loadgate/loadgate/internal/outfile"
)

// pidFlag is a repeatable --watch-pid.
type pidFlag []int

func (p *pidFlag) String() string {
	s := make([]string, len(*p))
	for i, v := range *p {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (p *pidFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q is not a process id", v)
	}
	for _, have := range *p {
		if have == n {
			return fmt.Errorf("pid %d given twice", n)
		}
	}
	*p = append(*p, n)
	return nil
}

const watchPIDUsage = "sample the CPU (deltas of cumulative CPU time) and RSS of this host process `PID` from /proc, like a stack service (repeatable; plain mode only)"

// checkWatchPIDs refuses a --watch-pid that names no process (exit 2).
func checkWatchPIDs(cmd string, pids []int) error {
	for _, pid := range pids {
		if _, err := (procstat.Reader{}).Read(pid); err != nil {
			return usageErr("%s: --watch-pid %d: %w", cmd, pid, err)
		}
	}
	return nil
}

// pidService is the service name of a watched process: "pid 1234 (comm)".
func pidService(pid int, name string) string {
	if name == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, name)
}

// plainSampler samples, in plain mode and from the end of the warm-up (rule
// 7), the --watch-pid processes and (when self) the generator, every
// interval, into OUT/stats.jsonl — the same lines as a stack's (stack.Sample)
// — and into tee when not nil.
//
// The warm-up ends warmup after the schedule's start, which only the engine
// knows: started returns the load.Config.Started listener which (called by the engine
// with the schedule's t0, before the first request is due) arms the
// sampling for t0 + warmup, the clock the counted reads use too
// (counting.go). Nothing is sampled before Start.
//
// stop may be called from any goroutine, concurrently with Start and with
// the timer's callback: once stop has begun (stopped, under mu), no sampler
// is started any more, so every sampler started is one stop ends, before
// it closes the file. Samples arrive on the samplers' own goroutines.
type plainSampler struct {
	ctx   context.Context
	pids  []int
	every time.Duration
	wu    time.Duration
	self  bool
	cpus  int
	f     io.Closer
	bw    *bufio.Writer
	w     io.Writer // the locked sink of every sampler

	// seams for tests: the wall clock and time.AfterFunc
	now       func() time.Time
	afterFunc func(time.Duration, func()) *time.Timer

	mu       sync.Mutex
	stopped  bool
	timer    *time.Timer
	stopPIDs []func() procstat.Summary
	stopSelf func() result.Service
}

func startPlainSampling(ctx context.Context, out string, pids []int, every, warmup time.Duration, self bool, cpus int, tee io.Writer) (*plainSampler, error) {
	f, err := outfile.Create(filepath.Join(out, "stats.jsonl"))
	if err != nil {
		return nil, err
	}
	ps := &plainSampler{ctx: context.WithoutCancel(ctx), pids: pids, every: every, wu: warmup, self: self, cpus: cpus,
		f: f, bw: bufio.NewWriter(f), now: time.Now, afterFunc: time.AfterFunc}
	var sink io.Writer = ps.bw
	if tee != nil {
		sink = io.MultiWriter(ps.bw, tee)
	}
	ps.w = &lockedWriter{w: sink}
	return ps, nil
}

// started is the load's start listener (load.Config.Started) that arms
// the sampling for t0 + warmup: see plainSampler. A nil ps returns nil.
func (ps *plainSampler) started() func(time.Time) {
	if ps == nil {
		return nil
	}
	return func(t0 time.Time) { ps.arm(t0.Add(ps.wu)) }
}

// arm starts the samplers at at (the end of the warm-up), once.
func (ps *plainSampler) arm(at time.Time) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.stopped || ps.timer != nil {
		return
	}
	ps.timer = ps.afterFunc(max(at.Sub(ps.now()), 0), ps.begin)
}

// begin starts the samplers, unless stop has begun.
func (ps *plainSampler) begin() {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.stopped {
		return // stop ran while this callback waited for mu: it ends nothing started now
	}
	for _, pid := range ps.pids {
		enc := json.NewEncoder(ps.w)
		ps.stopPIDs = append(ps.stopPIDs, procstat.Reader{}.Sample(ps.ctx, pid, ps.every, func(s procstat.Sample) {
			_ = enc.Encode(stack.Sample{Time: s.Time, Service: pidService(s.PID, s.Name), Container: fmt.Sprintf("pid %d", s.PID),
				IntervalS: s.Interval.Seconds(), CPUPct: s.CPUPct, MemBytes: s.MemBytes, CPUUsageNS: uint64(s.CPUTime)})
		}))
	}
	if ps.self {
		ps.stopSelf = sampleSelf(ps.ctx, ps.every, ps.cpus, ps.w)
	}
}

// stop ends the samplers (none starts after it has begun) and returns the
// watched processes as services (a process that exited is named so), their
// summaries, the generator (nil unless self) and the file's error.
func (ps *plainSampler) stop() (services []result.Service, pids []procstat.Summary, gen *result.Service, err error) {
	ps.mu.Lock()
	ps.stopped = true
	if ps.timer != nil {
		ps.timer.Stop()
	}
	stopPIDs, stopSelf := ps.stopPIDs, ps.stopSelf
	ps.mu.Unlock()
	for _, stop := range stopPIDs {
		sum := stop()
		name := pidService(sum.PID, sum.Name)
		if sum.Exited {
			name += " (exited during the run)"
		}
		pids = append(pids, sum)
		services = append(services, result.Service{Name: name, CPUAvgPct: sum.CPUAvgPct, CPUPeakPct: sum.CPUPeakPct, MemPeakBytes: sum.MemPeakBytes, Samples: sum.Samples})
	}
	if stopSelf != nil {
		g := stopSelf()
		gen = &g
	}
	err = errors.Join(ps.bw.Flush(), ps.f.Close())
	return services, pids, gen, err
}
