package soak

import (
	"encoding/json"
	"io"
	"time"
)

const Schema = "loadgate/soak/v1"

const (
	KindService   = "service"   // a service of the stack (the Docker engine's stats)
	KindGenerator = "generator" // loadgate itself
	KindPID       = "pid"       // a process of this host named by --watch-pid
)

// Result is soak.json: memory; the request side is the run's result.json.
type Result struct {
	Schema          string    `json:"schema"`
	Scenario        string    `json:"scenario"`
	ScenarioHash    string    `json:"scenario_hash"`
	StartedAt       time.Time `json:"started_at"`
	DurationS       float64   `json:"duration_s"` // asked for (--duration), without the warm-up
	WarmupS         float64   `json:"warmup_s"`
	RanS            float64   `json:"ran_s"` // warm-up and load, as run
	RatePerS        float64   `json:"rate_per_s"`
	SampleIntervalS float64   `json:"sample_interval_s"`
	Interrupted     bool      `json:"interrupted"`
	// Usable is false when the request side or teardown cannot be trusted.
	Usable                bool      `json:"usable"`
	Unusable              []string  `json:"unusable,omitempty"`
	ThresholdBytesPerHour float64   `json:"threshold_bytes_per_h"`
	Verdict               Verdict   `json:"verdict"` // Overall of the processes'
	Processes             []Process `json:"processes"`
}

// Process is one process's memory and CPU, sampled after the warm-up.
type Process struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	PID  int    `json:"pid,omitempty"`
	// Exited: a --watch-pid process went away or its PID was reused.
	Exited        bool          `json:"exited,omitempty"`
	ExitedAt      time.Time     `json:"exited_at,omitzero"`
	CPUAvgPct     float64       `json:"cpu_avg_pct"` // percent of one core, from CPU-time deltas
	CPUPeakPct    float64       `json:"cpu_peak_pct"`
	FirstSampleAt time.Time     `json:"first_sample_at,omitzero"` // t = 0 of Series
	MemFirst      int64         `json:"mem_first_bytes"`
	MemLast       int64         `json:"mem_last_bytes"`
	MemPeakBytes  int64         `json:"mem_peak_bytes"`
	Growth        Growth        `json:"growth"`
	Series        []SeriesPoint `json:"series"` // thinned to MaxSeries points
}

type SeriesPoint struct {
	TS       float64 `json:"t_s"`
	MemBytes int64   `json:"mem_bytes"`
}

// MaxSeries bounds a Process's Series.
const MaxSeries = 720

func NewProcess(name, kind string, pid int, points []Point, thresholdBytesPerHour float64) Process {
	p := Process{Name: name, Kind: kind, PID: pid, Growth: Judge(points, thresholdBytesPerHour), Series: []SeriesPoint{}}
	if len(points) == 0 {
		return p
	}
	p.MemFirst, p.MemLast = points[0].MemBytes, points[len(points)-1].MemBytes
	p.FirstSampleAt = points[0].Time.UTC()
	for _, pt := range points {
		p.MemPeakBytes = max(p.MemPeakBytes, pt.MemBytes)
	}
	p.Series = Thin(points, MaxSeries)
	return p
}

// SetExited marks p exited at at: Inconclusive, estimates kept.
func (p *Process) SetExited(at time.Time) {
	p.Exited, p.ExitedAt = true, at.UTC()
	p.Growth.Verdict, p.Growth.Why = Inconclusive, []string{WhyExited}
	if !p.FirstSampleAt.IsZero() {
		p.Growth.ExitedAfterS = max(p.ExitedAt.Sub(p.FirstSampleAt).Seconds(), 0)
	}
}

// Thin keeps at most n (>= 2) of the sorted points, evenly spaced, ends included.
func Thin(points []Point, n int) []SeriesPoint {
	n = max(n, 2)
	if len(points) == 0 {
		return []SeriesPoint{}
	}
	t0 := points[0].Time
	sp := func(p Point) SeriesPoint {
		return SeriesPoint{TS: float64(p.Time.Sub(t0).Milliseconds()) / 1000, MemBytes: p.MemBytes}
	}
	if len(points) <= n {
		out := make([]SeriesPoint, len(points))
		for i, p := range points {
			out[i] = sp(p)
		}
		return out
	}
	out := make([]SeriesPoint, n)
	for i := range n {
		out[i] = sp(points[i*(len(points)-1)/(n-1)])
	}
	return out
}

// Overall is Leak if any process leaks, else Inconclusive if any is or there is none, else Stable.
func Overall(ps []Process) Verdict {
	v := Stable
	if len(ps) == 0 {
		v = Inconclusive
	}
	for _, p := range ps {
		switch p.Growth.Verdict {
		case Leak:
			return Leak
		case Inconclusive:
			v = Inconclusive
		}
	}
	return v
}

func (r *Result) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ExitCode is 3 for an unusable or interrupted soak, 0 when every process is stable, else 1.
func (s *Result) ExitCode() int {
	switch {
	case !s.Usable || s.Interrupted:
		return 3
	case s.Verdict == Stable:
		return 0
	}
	return 1
}
