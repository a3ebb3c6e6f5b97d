package procstat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrReused: the PID now names another process than the one first read
// (its start time changed): the process that was watched has exited.
var ErrReused = errors.New("the pid now names another process (its start time changed)")

// Sample is one interval of a process's resource use.
type Sample struct {
	PID      int
	Name     string
	Time     time.Time     // end of the interval
	Interval time.Duration // since the previous reading
	CPUPct   float64       // percent of one core: the CPU time delta over Interval (CorePct)
	// CPUPctOfSet is CPUPct as a share of the cpus the process may run
	// on: set by SampleSelf when it knows them, else 0.
	CPUPctOfSet float64
	MemBytes    int64         // resident set size at Time
	CPUTime     time.Duration // cumulative user + system CPU time at Time
}

// CorePct is cpu (CPU time used) over wall (the time it was used in) as a
// percent of one core: 0 for an empty or negative wall time or negative
// cpu. It is the one formula for CPU from cumulative CPU time (rule 11):
// an average over several intervals is CorePct of their summed CPU time
// and wall time (ΔCPU ÷ Δt), never the mean of their percentages.
func CorePct(cpu, wall time.Duration) float64 {
	if wall <= 0 || cpu < 0 {
		return 0
	}
	return float64(cpu) / float64(wall) * 100
}

// Delta is the sample of the interval from reading prev (taken at prevAt)
// to cur (taken at at). CPU time that went backwards and an empty interval
// give 0 %. It is not rounded: measurement keeps every digit, the report
// formats.
func Delta(prev Reading, prevAt time.Time, cur Reading, at time.Time) Sample {
	s := Sample{PID: cur.PID, Name: cur.Name, Time: at.UTC(), Interval: at.Sub(prevAt), MemBytes: cur.RSSBytes, CPUTime: cur.CPUTime}
	if cur.CPUTime >= prev.CPUTime {
		s.CPUPct = CorePct(cur.CPUTime-prev.CPUTime, s.Interval)
	}
	return s
}

// Summary sums a Sample run.
type Summary struct {
	PID     int
	Name    string
	Samples int
	// CPUAvgPct is CorePct of the CPU time used from the first reading to
	// the last over the time between them (ΔCPU ÷ Δt).
	CPUAvgPct    float64
	CPUPeakPct   float64
	MemPeakBytes int64
	// Exited is set when the process went away during the run (the
	// samples stop there), ExitedAt to when that was seen: the first
	// reading that found no process, or found its PID reused by another
	// (Err then matches ErrReused). Err is set when a read failed
	// otherwise too.
	Exited   bool
	ExitedAt time.Time
	Err      error
}

// Sample reads pid every interval, from its own goroutine, calling emit
// with the delta of each interval, until stop (or ctx ends) or the
// process exits. The first reading is the baseline and emits nothing; a
// later reading whose start time differs from it is another process that
// reused the PID, and ends the run as an exit. stop returns the summary;
// it may be called more than once, from any goroutine.
func (r Reader) Sample(ctx context.Context, pid int, every time.Duration, emit func(Sample)) (stop func() Summary) {
	stop, _ = r.sample(ctx, pid, every, time.Now, emit)
	return stop
}

// sample is Sample with a clock, also returning a channel closed when the
// sampling goroutine has ended (seams for tests: export_test.go).
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

// ServiceName is a watched process as a service of the results (the
// service of its stats.jsonl lines, its row in result.json): "pid 1234
// (comm)", or "pid 1234" when its comm is not known.
func ServiceName(pid int, comm string) string {
	if comm == "" {
		return fmt.Sprintf("pid %d", pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, comm)
}
