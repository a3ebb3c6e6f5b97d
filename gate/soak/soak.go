// Package soak holds a steady load while each process's memory is sampled. A process leaks
// when, after the first quarter (a warm-up ramp is no leak), both its least-squares slope and
// its quartile medians' change, estimates that fail differently, exceed the threshold.
package soak

import (
	"math"
	"slices"
	"time"
)

// DefaultThresholdBytesPerHour fills a 1 GiB container in a day or two, above heap noise over MinWindow.
const DefaultThresholdBytesPerHour = 32 << 20

// The least a window must hold for a verdict other than Inconclusive.
const (
	MinSamples = 12
	MinWindow  = 5 * time.Minute
)

const (
	WhyNoSamples     = "no_samples"       // nothing was sampled
	WhyShortWindow   = "window_too_short" // the window after the first quarter is under MinWindow
	WhyFewSamples    = "too_few_samples"  // it holds under MinSamples samples
	WhySlopeOver     = "slope_over"       // the least-squares slope is above the threshold
	WhyQuartilesOver = "quartiles_over"   // the quartile medians' rate is above it
	WhyNeitherOver   = "neither_over"     // neither is
	WhyExited        = "exited"           // the process went away during the soak (Process.ExitedAt)
)

type Verdict string

const (
	Stable       Verdict = "stable"
	Leak         Verdict = "leak"
	Inconclusive Verdict = "inconclusive"
)

type Point struct {
	Time     time.Time
	MemBytes int64
}

// Growth is the judgement of one process's memory over a soak.
type Growth struct {
	Verdict Verdict  `json:"verdict"`
	Why     []string `json:"why"` // the minimums missed, or the estimates over the threshold

	ThresholdBytesPerHour float64 `json:"threshold_bytes_per_h"`
	Samples               int     `json:"samples"`        // all samples
	WindowSamples         int     `json:"window_samples"` // samples in the judged window
	WindowStartS          float64 `json:"window_start_s"` // from the first sample
	WindowS               float64 `json:"window_s"`       // the judged window's length

	// Bytes per hour; 0 when too few samples.
	SlopeBytesPerHour    float64 `json:"slope_bytes_per_h"`
	QuartileBytesPerHour float64 `json:"quartile_bytes_per_h"`
	FirstQuartileMedian  int64   `json:"first_quartile_median_bytes"`
	LastQuartileMedian   int64   `json:"last_quartile_median_bytes"`

	ExitedAfterS float64 `json:"exited_after_s,omitempty"` // from the first sample
}

// Judge judges points (any order) against thresholdBytesPerHour (≤ 0: the default).
func Judge(points []Point, thresholdBytesPerHour float64) Growth {
	if thresholdBytesPerHour <= 0 {
		thresholdBytesPerHour = DefaultThresholdBytesPerHour
	}
	ps := slices.Clone(points)
	slices.SortStableFunc(ps, func(a, b Point) int { return a.Time.Compare(b.Time) })
	g := Growth{ThresholdBytesPerHour: thresholdBytesPerHour, Samples: len(ps)}
	if len(ps) == 0 {
		g.Verdict, g.Why = Inconclusive, []string{WhyNoSamples}
		return g
	}
	t0 := ps[0].Time
	span := ps[len(ps)-1].Time.Sub(t0)
	start := t0.Add(span / 4)
	i := 0
	for i < len(ps) && ps[i].Time.Before(start) {
		i++
	}
	win := ps[i:]
	g.WindowSamples = len(win)
	g.WindowStartS = start.Sub(t0).Seconds()
	windowDur := ps[len(ps)-1].Time.Sub(start)
	g.WindowS = windowDur.Seconds()
	if len(win) >= 2 {
		g.SlopeBytesPerHour = slopePerHour(win)
	}
	if len(win) >= 4 {
		g.QuartileBytesPerHour, g.FirstQuartileMedian, g.LastQuartileMedian = quartileRate(win)
	}
	short := windowDur < MinWindow
	few := len(win) < MinSamples
	slopeOver := g.SlopeBytesPerHour > thresholdBytesPerHour
	quartOver := g.QuartileBytesPerHour > thresholdBytesPerHour
	switch {
	case short || few:
		g.Verdict = Inconclusive
		if short {
			g.Why = append(g.Why, WhyShortWindow)
		}
		if few {
			g.Why = append(g.Why, WhyFewSamples)
		}
	case slopeOver && quartOver:
		g.Verdict, g.Why = Leak, []string{WhySlopeOver, WhyQuartilesOver}
	case slopeOver:
		g.Verdict, g.Why = Stable, []string{WhySlopeOver}
	case quartOver:
		g.Verdict, g.Why = Stable, []string{WhyQuartilesOver}
	default:
		g.Verdict, g.Why = Stable, []string{WhyNeitherOver}
	}
	return g
}

// Estimate is the slope after the first quarter for a progress line, not a verdict.
func Estimate(points []Point) (bytesPerHour float64, ok bool) {
	if len(points) < 2 {
		return 0, false
	}
	t0 := points[0].Time
	start := t0.Add(points[len(points)-1].Time.Sub(t0) / 4)
	i, _ := slices.BinarySearchFunc(points, start, func(p Point, t time.Time) int { return p.Time.Compare(t) })
	if len(points)-i < 2 {
		return 0, false
	}
	return slopePerHour(points[i:]), true
}

func slopePerHour(ps []Point) float64 {
	t0 := ps[0].Time
	var sx, sy float64
	for _, p := range ps {
		sx += p.Time.Sub(t0).Hours()
		sy += float64(p.MemBytes)
	}
	n := float64(len(ps))
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for _, p := range ps {
		dx := p.Time.Sub(t0).Hours() - mx
		sxx += dx * dx
		sxy += dx * (float64(p.MemBytes) - my)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// quartileRate is the change of the first and last quartiles' medians of ps
// (>= 4, sorted) over the time between their middles, bytes/h.
func quartileRate(ps []Point) (perHour float64, first, last int64) {
	q := len(ps) / 4
	a, b := ps[:q], ps[len(ps)-q:]
	first, last = median(a), median(b)
	dt := b[len(b)/2].Time.Sub(a[len(a)/2].Time).Hours()
	if dt <= 0 {
		return 0, first, last
	}
	return float64(last-first) / dt, first, last
}

func median(ps []Point) int64 {
	v := make([]int64, len(ps))
	for i, p := range ps {
		v[i] = p.MemBytes
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return int64(math.Round((float64(v[len(v)/2-1]) + float64(v[len(v)/2])) / 2))
}
