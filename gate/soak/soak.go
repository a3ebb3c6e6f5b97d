// Package soak holds and judges a soak: a steady load held for a long time
// while each process's memory is sampled (every second). Scenario shapes
// the load (the judged phase's rate, one phase per hour); Run holds it
// through a Sampler and a Runner (the command supplies Compose-, /proc- and
// engine-backed ones; the tests fakes), the Collector keeps the samples
// from the stats lines, and the judgement below reads them.
//
// The judgement is pure (a function of the samples and the threshold) and
// has no clock of its own: samples carry their times, from the end of the
// warm-up on the engine's clock.
//
// Growth is judged per process on the window after the first quarter of
// its samples' span (a warm-up ramp — caches filling, pools growing, the
// runtime sizing its heap — is not a leak), by two estimates that fail in
// different ways:
//
//   - the least-squares slope of memory over time (uses every sample, but a
//     few outliers at either end of the window pull it), and
//   - the change between the medians of the window's first and last
//     quartiles (of samples), divided by the time between their middles
//     (robust to outliers and to a sawtooth, but blind to the shape in
//     between).
//
// A process leaks when both are above the threshold. Under MinSamples
// samples or MinWindow of window the verdict is Inconclusive, saying which:
// a short soak that found nothing is not a soak that found no leak.
package soak

import (
	"math"
	"slices"
	"time"
)

// DefaultThresholdBytesPerHour is --leak-threshold's default: 32 MiB/h.
//
// Why 32 MiB/h: it is 768 MiB a day, enough to take a typical 1 GiB
// container to its limit within a day or two, so anything above it matters
// to a service that is not restarted daily; and it sits above what a
// healthy process's noise can read as over the shortest window that may
// conclude (MinWindow, 5 min). There the middles of the window's first and
// last quartiles are 3/4 of 300 s = 225 s apart, so a difference of d
// between their medians reads as d × 3600/225 = 16·d per hour: 2 MiB reads
// as exactly 32 MiB/h. A garbage-collected heap's sawtooth and allocator
// noise, which the medians mostly cancel, stay well under 2 MiB between
// them; over an hour's window (2 700 s between the middles) it would take
// 24 MiB of difference.
const DefaultThresholdBytesPerHour = 32 << 20

// The least a window must hold for a verdict other than Inconclusive.
const (
	MinSamples = 12
	MinWindow  = 5 * time.Minute
)

// Reason codes of Growth.Why.
const (
	WhyNoSamples     = "no_samples"       // nothing was sampled
	WhyShortWindow   = "window_too_short" // the window after the first quarter is under MinWindow
	WhyFewSamples    = "too_few_samples"  // it holds under MinSamples samples
	WhySlopeOver     = "slope_over"       // the least-squares slope is above the threshold
	WhyQuartilesOver = "quartiles_over"   // the quartile medians' rate is above it
	WhyNeitherOver   = "neither_over"     // neither is
	WhyExited        = "exited"           // the process went away during the soak (Process.ExitedAt)
)

// Verdict is a process's growth verdict.
type Verdict string

// Verdict values.
const (
	Stable       Verdict = "stable"
	Leak         Verdict = "leak"
	Inconclusive Verdict = "inconclusive"
)

// Point is one memory sample.
type Point struct {
	Time     time.Time
	MemBytes int64
}

// Growth is the judgement of one process's memory over a soak.
type Growth struct {
	Verdict Verdict `json:"verdict"`
	// Why are reason codes (Why...): for Inconclusive which minimum the
	// window missed; else which estimates were above the threshold. The
	// words are gate/report's.
	Why []string `json:"why"`

	ThresholdBytesPerHour float64 `json:"threshold_bytes_per_h"`
	Samples               int     `json:"samples"`        // all samples
	WindowSamples         int     `json:"window_samples"` // samples in the judged window
	WindowStartS          float64 `json:"window_start_s"` // from the first sample
	WindowS               float64 `json:"window_s"`       // the judged window's length

	// The two estimates, bytes per hour (0 when Inconclusive for want of samples).
	SlopeBytesPerHour    float64 `json:"slope_bytes_per_h"`
	QuartileBytesPerHour float64 `json:"quartile_bytes_per_h"`
	FirstQuartileMedian  int64   `json:"first_quartile_median_bytes"`
	LastQuartileMedian   int64   `json:"last_quartile_median_bytes"`

	// ExitedAfterS is, for a process that exited during the soak
	// (WhyExited), when that was seen, from its first sample.
	ExitedAfterS float64 `json:"exited_after_s,omitempty"`
}

// Judge judges points (in any order; sorted by time here) against
// thresholdBytesPerHour (> 0; DefaultThresholdBytesPerHour when not).
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

// Estimate is the least-squares slope (bytes per hour) of the window after
// the first quarter of points (sorted by time), for a progress line; ok is
// false under 2 samples in it. It says nothing about whether it concludes.
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

// slopePerHour is the least-squares slope of ps (>= 2, sorted), bytes/h.
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

// quartileRate compares the medians of the first and last quartiles of ps
// (>= 4, sorted): their difference over the time between the quartiles'
// middle samples, bytes/h.
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
