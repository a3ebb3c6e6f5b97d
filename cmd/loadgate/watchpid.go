package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
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

// plainSampler samples, in plain mode and from the end of the warm-up on
// the schedule's own clock (procstat.Watch, rule 7), the --watch-pid
// processes and (when self) the generator into OUT/stats.jsonl — the same
// lines as a stack's (compose.Sample) — and into tee when not nil. A nil
// plainSampler has no start listener.
type plainSampler struct {
	watch *procstat.Watch
	stats *compose.StatsFile
}

func startPlainSampling(ctx context.Context, out string, pids []int, every, warmup time.Duration, self bool, cpus int, tee io.Writer) (*plainSampler, error) {
	stats, err := compose.CreateStats(out, tee)
	if err != nil {
		return nil, err
	}
	w := procstat.NewWatch(ctx, procstat.Reader{}, procstat.WatchOptions{PIDs: pids, Self: self, CPUs: cpus, Every: every, Warmup: warmup, Emit: stats.Emit})
	return &plainSampler{watch: w, stats: stats}, nil
}

// started is the load's start listener (load.Config.Started).
func (ps *plainSampler) started() func(time.Time) {
	if ps == nil {
		return nil
	}
	return ps.watch.Started()
}

// stop ends the samplers and returns the watched processes as services (a
// process that exited is named so), their summaries, the generator (nil
// unless self) and the file's error.
func (ps *plainSampler) stop() (services []result.Service, pids []procstat.Summary, gen *result.Service, err error) {
	pids, self := ps.watch.Stop()
	for _, sum := range pids {
		name := procstat.ServiceName(sum.PID, sum.Name)
		if sum.Exited {
			name += " (exited during the run)"
		}
		services = append(services, result.Service{Name: name, CPUAvgPct: sum.CPUAvgPct, CPUPeakPct: sum.CPUPeakPct, MemPeakBytes: sum.MemPeakBytes, Samples: sum.Samples})
	}
	if self != nil {
		g := compose.GeneratorService(*self)
		gen = &g
	}
	return services, pids, gen, ps.stats.Close()
}
