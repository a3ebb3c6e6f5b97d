package procstat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrReused: the PID now names another process: the watched one has exited.
var ErrReused = errors.New("the pid now names another process (its start time changed)")

// Sample is one interval of a process's resource use.
type Sample struct {
	PID         int
	Name        string
	Time        time.Time     // end of the interval
	Interval    time.Duration // since the previous reading
	CPUPct      float64       // percent of one core: the CPU time delta over Interval (CorePct)
	CPUPctOfSet float64       // CPUPct over the cpus it may run on (SampleSelf; else 0)
	MemBytes    int64         // resident set size at Time
	CPUTime     time.Duration // cumulative user + system CPU time at Time
}

// CorePct is cpu over wall as a percent of one core (0 if wall <= 0 or cpu < 0). An
// average over intervals is CorePct of their sums, never a mean of percents.
func CorePct(cpu, wall time.Duration) float64 {
	if wall <= 0 || cpu < 0 {
		return 0
	}
	return float64(cpu) / float64(wall) * 100
}

// Delta is the sample from prev (at prevAt) to cur (at at); CPU time that
// went backwards gives 0 %. Not rounded: the report formats.
func Delta(prev Reading, prevAt time.Time, cur Reading, at time.Time) Sample {
	s := Sample{PID: cur.PID, Name: cur.Name, Time: at.UTC(), Interval: at.Sub(prevAt), MemBytes: cur.RSSBytes, CPUTime: cur.CPUTime}
	if cur.CPUTime >= prev.CPUTime {
		s.CPUPct = CorePct(cur.CPUTime-prev.CPUTime, s.Interval)
	}
	return s
}

// Summary sums a Sample run.
type Summary struct {
	PID          int
	Name         string
	Samples      int
	CPUAvgPct    float64 // CorePct from the first reading to the last (ΔCPU ÷ Δt)
	CPUPeakPct   float64
	MemPeakBytes int64
	// Exited: the process went away (or its PID was reused: ErrReused) at
	// ExitedAt, where the samples stop. Err is any read that failed.
	Exited   bool
	ExitedAt time.Time
	Err      error
}

// Sample emits pid's delta every interval, from its own goroutine, until stop,
// ctx's end or an exit; stop returns the summary, repeatably, from any goroutine.
func (r Reader) Sample(ctx context.Context, pid int, every time.Duration, emit func(Sample)) (stop func() Summary) {
	stop, _ = r.sample(ctx, pid, every, time.Now, emit)
	return stop
}

// sample is Sample with a clock and a channel closed at its end (test seams).
func (r Reader) sample(ctx context.Context, pid int, every time.Duration, now func() time.Time, emit func(Sample)) (stop func() Summary, ended <-chan struct{}) {
	if every <= 0 {
		every = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	sum := Summary{PID: pid}
	go func() {
		defer close(done)
		base, err := r.Read(pid)
		baseAt := now()
		if err != nil {
			sum.Exited, sum.Err = errors.Is(err, ErrNoProcess), err
			if sum.Exited {
				sum.ExitedAt = baseAt.UTC()
			}
			return
		}
		sum.Name = base.Name
		prev, prevAt := base, baseAt
		defer func() {
			if sum.Samples > 0 {
				sum.CPUAvgPct = CorePct(prev.CPUTime-base.CPUTime, prevAt.Sub(baseAt))
			}
		}()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			cur, err := r.Read(pid)
			at := now()
			if err == nil && cur.StartTicks != base.StartTicks {
				err = fmt.Errorf("pid %d: %w (%d ticks after boot, was %d)", pid, ErrReused, cur.StartTicks, base.StartTicks)
			}
			if err != nil {
				sum.Exited, sum.Err = errors.Is(err, ErrNoProcess) || errors.Is(err, ErrReused), err
				if sum.Exited {
					sum.ExitedAt = at.UTC()
				}
				return
			}
			s := Delta(prev, prevAt, cur, at)
			prev, prevAt = cur, at
			if emit != nil {
				emit(s)
			}
			sum.Samples++
			sum.CPUPeakPct = math.Max(sum.CPUPeakPct, s.CPUPct)
			sum.MemPeakBytes = max(sum.MemPeakBytes, s.MemBytes)
		}
	}()
	return func() Summary {
		cancel()
		<-done
		return sum
	}, done
}

// ServiceName names a watched process in the results: "pid 1234 (comm)".
func ServiceName(pid int, comm string) string {
	if comm == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, comm)
}
