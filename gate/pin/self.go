package pin

import (
	"context"
	"math"
	"time"
)

// SelfSample is one interval of this process's own resource use: what the
// generator cost on its cpus.
type SelfSample struct {
	Time        time.Time
	Interval    time.Duration
	CPUPct      float64       // percent of one core over the interval
	CPUPctOfSet float64       // percent of the generator's cpus (0 when not known)
	MemBytes    int64         // resident set size
	CPUTime     time.Duration // cumulative user+system CPU time
}

// SelfSummary sums a SampleSelf run.
type SelfSummary struct {
	Samples      int
	CPUAvgPct    float64
	CPUPeakPct   float64
	MemPeakBytes int64
}

// SampleSelf samples this process's CPU (getrusage deltas, percent of one
// core and of its cpus) and resident memory every interval, calling emit
// with each sample (from its own goroutine), until stop (or ctx). stop
// returns the summary.
func SampleSelf(ctx context.Context, every time.Duration, cpus int, emit func(SelfSample)) (stop func() SelfSummary) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan SelfSummary, 1)
	go func() {
		var sum SelfSummary
		var cpuSum float64
		prevCPU, prevAt := selfCPU(), time.Now()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if sum.Samples > 0 {
					sum.CPUAvgPct = round3(cpuSum / float64(sum.Samples))
				}
				done <- sum
				return
			case now := <-t.C:
				c := selfCPU()
				dt := now.Sub(prevAt)
				pct := float64(c-prevCPU) / float64(dt) * 100
				prevCPU, prevAt = c, now
				s := SelfSample{Time: now.UTC(), Interval: dt, CPUPct: round3(pct), MemBytes: selfRSS(), CPUTime: c}
				if cpus > 0 {
					s.CPUPctOfSet = round3(pct / float64(cpus))
				}
				if emit != nil {
					emit(s)
				}
				sum.Samples++
				cpuSum += pct
				sum.CPUPeakPct = math.Max(sum.CPUPeakPct, s.CPUPct)
				sum.MemPeakBytes = max(sum.MemPeakBytes, s.MemBytes)
			}
		}
	}()
	return func() SelfSummary {
		cancel()
		return <-done
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
