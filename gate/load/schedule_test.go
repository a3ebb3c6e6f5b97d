package load_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/scenario"
)

func constant(rate float64, d time.Duration) scenario.Phase {
	return scenario.Phase{Name: "constant", Pattern: scenario.Constant, Rate: rate, Duration: d}
}

func ramp(from, to float64, d time.Duration) scenario.Phase {
	return scenario.Phase{Name: "ramp", Pattern: scenario.Ramp, From: from, To: to, Duration: d}
}

func step(hold, d time.Duration, rates ...float64) scenario.Phase {
	return scenario.Phase{Name: "step", Pattern: scenario.Step, Rates: rates, Hold: hold, Duration: d}
}

func burst(rate, peak float64, every, spike, d time.Duration) scenario.Phase {
	return scenario.Phase{Name: "burst", Pattern: scenario.Burst, Rate: rate, Peak: peak, Every: every, For: spike, Duration: d}
}

func sc(warmup time.Duration, phases ...scenario.Phase) *scenario.Scenario {
	return &scenario.Scenario{Name: "test", Warmup: warmup, Phases: phases}
}

func mustSchedule(t testing.TB, s *scenario.Scenario) *load.Schedule {
	t.Helper()
	sch, err := load.NewSchedule(s)
	if err != nil {
		t.Fatalf("NewSchedule: %v", err)
	}
	return sch
}

// demo is the design's example load: warm-up, ramp, sustain, burst, recover.
func demo() *scenario.Scenario {
	return sc(10*time.Second,
		ramp(4, 12, 60*time.Second),
		constant(12, 180*time.Second),
		constant(36, 45*time.Second),
		constant(12, 60*time.Second))
}

func TestScheduleLen(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
		want int64
	}{
		// The design's sustain phase: 12 req/s for 180 s.
		{"constant", sc(0, constant(12, 180*s)), 2160},
		// A fractional count rounds up: due at 0, 0.4 s, 0.8 s (1.2 s is past the end).
		{"constant fractional", sc(0, constant(2.5, s)), 3},
		// Rate 0: nothing is due.
		{"constant zero", sc(0, constant(0, 10*s)), 0},
		// Pattern "" is constant.
		{"default pattern", sc(0, scenario.Phase{Rate: 5, Duration: 2 * s}), 10},
		// Linear 10 -> 100 over 10 s: (10+100)/2·10 = 550.
		{"ramp up", sc(0, ramp(10, 100, 10*s)), 550},
		// From 0: N = t²/2 over 10 s.
		{"ramp from zero", sc(0, ramp(0, 10, 10*s)), 50},
		// Falling to 0: N = 10t − t²/2.
		{"ramp down to zero", sc(0, ramp(10, 0, 10*s)), 50},
		// from = to is a constant rate.
		{"ramp flat", sc(0, ramp(7, 7, 10*s)), 70},
		// Both ends 0.
		{"ramp zero", sc(0, ramp(0, 0, 10*s)), 0},
		// 10·10 + 20·10 + 30·10.
		{"step", sc(0, step(10*s, 30*s, 10, 20, 30)), 600},
		// A stretch of rate 0 in the middle.
		{"step with zero", sc(0, step(10*s, 30*s, 10, 0, 30)), 400},
		// The phase outlasts the steps: the last rate holds to the end.
		{"step last holds", sc(0, step(10*s, 40*s, 10, 20)), 10*10 + 30*20},
		// The phase is shorter than the steps: the rest never runs.
		{"step truncated", sc(0, step(10*s, 15*s, 10, 20, 30)), 100 + 100},
		// Three periods of 2 s at 100 and 8 s at 10: 3·(2·100 + 8·10).
		{"burst", sc(0, burst(10, 100, 10*s, 2*s, 30*s)), 840},
		// Base rate 0: only the spikes send.
		{"burst base zero", sc(0, burst(0, 100, 10*s, 2*s, 30*s)), 600},
		// A partial last period: 2 full periods and 5 s of the third (2 s spike + 3 s base).
		{"burst partial period", sc(0, burst(10, 100, 10*s, 2*s, 25*s)), 2*280 + 200 + 30},
		// for = every: all peak.
		{"burst all peak", sc(0, burst(10, 100, s, s, 3*s)), 300},
		// for = 0: all base.
		{"burst no spike", sc(0, burst(10, 100, s, 0, 3*s)), 30},
		// Warm-up repeats the first phase's pattern: 12 req/s for 5 s, then 12 for 10 s.
		{"warm-up constant", sc(5*s, constant(12, 10*s)), 60 + 120},
		// Warm-up over a ramp replays its start: 4·10 + 8·10²/120 = 46.67 -> 47, then 480.
		{"warm-up ramp", sc(10*s, ramp(4, 12, 60*s)), 47 + 480},
		// A warm-up longer than a ramp: the ramp holds To (2 s ramp 0->10 = 10, then 3 s at 10 = 30), then the ramp (10).
		{"warm-up outlasts ramp", sc(5*s, ramp(0, 10, 2*s)), 40 + 10},
		// The design's demo: warm-up 47, ramp 480, sustain 2160, burst 1620, recover 720.
		{"demo", demo(), 47 + 480 + 2160 + 1620 + 720},
		// Rates whose products are inexact in binary still count exactly: 0.1·30 = 3.
		{"inexact float", sc(0, constant(0.1, 30*s)), 3},
		// 1/3 req/s for 9 s is exactly 3 requests (0, 3 s, 6 s), not 4.
		{"third", sc(0, constant(1.0/3, 9*s)), 3},
		// A long, fast run: 5000 req/s for 30 min.
		{"long", sc(0, constant(5000, 30*time.Minute)), 9_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := mustSchedule(t, tc.sc)
			if got := sch.Len(); got != tc.want {
				t.Errorf("Len() = %d, want %d", got, tc.want)
			}
			var sum int64
			for _, g := range sch.Segments {
				sum += g.Count
			}
			if sum != sch.Len() {
				t.Errorf("segment counts sum to %d, Len() = %d", sum, sch.Len())
			}
			if got, want := sch.Duration(), tc.sc.TotalDuration(); got != want {
				t.Errorf("Duration() = %s, want %s", got, want)
			}
		})
	}
}

func TestScheduleDue(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	// rampDue solves 10t + 4.5t² = k independently (the textbook root).
	rampDue := func(k float64) time.Duration {
		return time.Duration(math.Round((-10 + math.Sqrt(100+18*k)) / 9 * 1e9))
	}
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
		i    int64
		want time.Duration
		seg  int
	}{
		// The first request is due at the start.
		{"constant first", sc(0, constant(4, 10*s)), 0, 0, 0},
		// 4 req/s: request 3 at 3/4 s.
		{"constant 4/s", sc(0, constant(4, 10*s)), 3, 750 * ms, 0},
		// The last of 40.
		{"constant last", sc(0, constant(4, 10*s)), 39, 9750 * ms, 0},
		// 1/3 s rounds to the nanosecond, down.
		{"constant third down", sc(0, constant(3, s)), 1, 333333333, 0},
		// 2/3 s rounds to the nanosecond, up.
		{"constant third up", sc(0, constant(3, s)), 2, 666666667, 0},
		// Ramp 10->100 over 10 s: 10·2 + 4.5·4 = 38 at t = 2 s exactly.
		{"ramp exact 2s", sc(0, ramp(10, 100, 10*s)), 38, 2 * s, 0},
		// 10·4 + 4.5·16 = 112 at 4 s.
		{"ramp exact 4s", sc(0, ramp(10, 100, 10*s)), 112, 4 * s, 0},
		// 10·6 + 4.5·36 = 222 at 6 s.
		{"ramp exact 6s", sc(0, ramp(10, 100, 10*s)), 222, 6 * s, 0},
		// Request 1 at the root of 4.5t² + 10t − 1.
		{"ramp 1", sc(0, ramp(10, 100, 10*s)), 1, rampDue(1), 0},
		// The last request, just before 10 s.
		{"ramp last", sc(0, ramp(10, 100, 10*s)), 549, rampDue(549), 0},
		// From 0: t = sqrt(2k); k = 8 at 4 s.
		{"ramp from zero", sc(0, ramp(0, 10, 10*s)), 8, 4 * s, 0},
		// From 0, k = 0 at 0 (no 0/0).
		{"ramp from zero first", sc(0, ramp(0, 10, 10*s)), 0, 0, 0},
		// Falling 10 -> 0: 10·8 − 64/2 = 48 at 8 s.
		{"ramp down", sc(0, ramp(10, 0, 10*s)), 48, 8 * s, 0},
		// Falling, last request 49: 10t − t²/2 = 49 at t = 10 − sqrt(2).
		{"ramp down last", sc(0, ramp(10, 0, 10*s)), 49, time.Duration(math.Round((10 - math.Sqrt2) * 1e9)), 0},
		// Flat ramp at 5/s: request 3 at 600 ms.
		{"ramp flat", sc(0, ramp(5, 5, 2*s)), 3, 600 * ms, 0},
		// Step [10,20,30] hold 10 s: request 100 opens the second step.
		{"step boundary", sc(0, step(10*s, 30*s, 10, 20, 30)), 100, 10 * s, 0},
		// Then 20/s.
		{"step second", sc(0, step(10*s, 30*s, 10, 20, 30)), 101, 10*s + 50*ms, 0},
		// The third step.
		{"step third", sc(0, step(10*s, 30*s, 10, 20, 30)), 301, 20*s + 100*ms/3, 0},
		// Step [0,10]: nothing is due in the first second; request 0 waits for the rate.
		{"step leading zero", sc(0, step(s, 2*s, 0, 10)), 0, s, 0},
		// Step [10,0,10]: request 10 waits through the gap.
		{"step gap", sc(0, step(s, 3*s, 10, 0, 10)), 10, 2 * s, 0},
		// Burst: in the spike at 100/s.
		{"burst spike", sc(0, burst(10, 100, 10*s, 2*s, 30*s)), 199, 1990 * ms, 0},
		// The base rate starts at the end of the spike.
		{"burst base start", sc(0, burst(10, 100, 10*s, 2*s, 30*s)), 200, 2 * s, 0},
		// Then 10/s.
		{"burst base", sc(0, burst(10, 100, 10*s, 2*s, 30*s)), 201, 2100 * ms, 0},
		// The next spike opens the second period.
		{"burst second period", sc(0, burst(10, 100, 10*s, 2*s, 30*s)), 280, 10 * s, 0},
		// Base 0: request 200 waits for the second spike, not the end of the first.
		{"burst base zero", sc(0, burst(0, 100, 10*s, 2*s, 30*s)), 200, 10 * s, 0},
		// Peak 0 (a "dip"): nothing in the first 2 s of a period.
		{"burst peak zero", sc(0, burst(10, 0, 10*s, 2*s, 30*s)), 80, 12 * s, 0},
		// Warm-up of 2 s at 4/s holds requests 0..7; request 8 opens the phase.
		{"warm-up boundary", sc(2*s, constant(4, 10*s)), 8, 2 * s, 1},
		// The last warm-up request.
		{"warm-up last", sc(2*s, constant(4, 10*s)), 7, 1750 * ms, 0},
		// Long run: request 8 999 999 at 5000/s is due at 1799.9998 s exactly.
		{"long", sc(0, constant(5000, 30*time.Minute)), 8_999_999, 1799*s + 999800*time.Microsecond, 0},
		// Many short burst periods: request of period 100 000 at 1 ms periods.
		{"many periods", sc(0, burst(0, 10_000, time.Millisecond, 100*time.Microsecond, 200*s)), 100_000, 100 * s, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := mustSchedule(t, tc.sc)
			due, seg := sch.Due(tc.i)
			if due != tc.want || seg != tc.seg {
				t.Errorf("Due(%d) = %s (%d ns), %d; want %s (%d ns), %d", tc.i, due, int64(due), seg, tc.want, int64(tc.want), tc.seg)
			}
		})
	}
}

func TestScheduleDueOutOfRange(t *testing.T) {
	sch := mustSchedule(t, sc(0, constant(4, time.Second)))
	for _, i := range []int64{-1, 4, 1 << 40} {
		if due, seg := sch.Due(i); due != time.Second || seg != -1 {
			t.Errorf("Due(%d) = %s, %d; want 1s, -1", i, due, seg)
		}
	}
}

func TestSchedulePace(t *testing.T) {
	s, ms := time.Second, time.Millisecond
	sch := mustSchedule(t, sc(0, constant(4, 2*s))) // 8 hits at 0, 250 ms, ..., 1750 ms
	for _, tc := range []struct {
		elapsed time.Duration
		hits    int64
		wait    time.Duration
		stop    bool
	}{
		{0, 0, 0, false},                      // the first hit is due at once
		{0, 1, 250 * ms, false},               // the second waits a quarter second
		{100 * ms, 1, 150 * ms, false},        // part of the wait has passed
		{250 * ms, 1, 0, false},               // exactly due
		{900 * ms, 2, 0, false},               // behind schedule: send now, never skip
		{10 * s, 7, 0, false},                 // far behind: still send the last one
		{1700 * ms, 7, 50 * ms, false},        // the last hit at 1750 ms
		{1750 * ms, 8, 0, true},               // the schedule is exhausted
		{0, 8, 0, true},                       // exhausted whatever the time
		{0, 1 << 40, 0, true},                 // far past the end
		{-time.Second, 0, time.Second, false}, // before the start
	} {
		wait, stop := sch.Pace(tc.elapsed, tc.hits)
		if wait != tc.wait || stop != tc.stop {
			t.Errorf("Pace(%s, %d) = %s, %v; want %s, %v", tc.elapsed, tc.hits, wait, stop, tc.wait, tc.stop)
		}
	}
	// An empty schedule stops at once.
	empty := mustSchedule(t, sc(0, constant(0, s)))
	if _, stop := empty.Pace(0, 0); !stop {
		t.Error("Pace on an empty schedule does not stop")
	}
}

func TestScheduleSegments(t *testing.T) {
	s := time.Second
	sch := mustSchedule(t, demo())
	want := []struct {
		name     string
		warmup   bool
		phase    int
		start    time.Duration
		duration time.Duration
		count    int64
	}{
		{"warmup", true, -1, 0, 10 * s, 47},           // the first phase's ramp over 10 s
		{"ramp", false, 0, 10 * s, 60 * s, 480},       // (4+12)/2·60
		{"constant", false, 1, 70 * s, 180 * s, 2160}, // sustain
		{"constant", false, 2, 250 * s, 45 * s, 1620}, // burst at 36/s
		{"constant", false, 3, 295 * s, 60 * s, 720},  // recover
	}
	if len(sch.Segments) != len(want) {
		t.Fatalf("%d segments, want %d", len(sch.Segments), len(want))
	}
	var first int64
	for k, w := range want {
		g := sch.Segments[k]
		if g.Name != w.name || g.Warmup != w.warmup || g.Phase != w.phase || g.Start != w.start ||
			g.Duration != w.duration || g.Count != w.count || g.First != first {
			t.Errorf("segment %d = %+v, want %+v first %d", k, g, w, first)
		}
		if due, seg := sch.Due(g.First); due < g.Start || seg != k {
			t.Errorf("Due(First of segment %d) = %s, %d; want >= %s, %d", k, due, seg, g.Start, k)
		}
		first += w.count
	}
	// No warm-up segment when the warm-up is 0.
	if g := mustSchedule(t, sc(0, constant(1, s))).Segments; len(g) != 1 || g[0].Warmup {
		t.Errorf("without warm-up: segments %+v", g)
	}
}

func TestScheduleSegmentAt(t *testing.T) {
	s := time.Second
	sch := mustSchedule(t, demo())
	for _, tc := range []struct {
		t    time.Duration
		want int
	}{
		{-1, -1},        // before the start
		{0, 0},          // the warm-up opens the run
		{10*s - 1, 0},   // last nanosecond of the warm-up
		{10 * s, 1},     // the window is half open: the ramp starts here
		{69 * s, 1},     // inside the ramp
		{70 * s, 2},     // sustain
		{294 * s, 3},    // burst
		{355*s - 1, 4},  // last nanosecond of recover
		{355 * s, -1},   // the end
		{time.Hour, -1}, // long past the end (drain)
	} {
		if got := sch.SegmentAt(tc.t); got != tc.want {
			t.Errorf("SegmentAt(%s) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

// mixed has every pattern, zero-rate stretches and a warm-up.
func mixed() *scenario.Scenario {
	s := time.Second
	return sc(3*s,
		ramp(0, 40, 7*s),
		step(1500*time.Millisecond, 9*s, 20, 0, 55.5, 3),
		burst(5, 120, 2*s, 300*time.Millisecond, 9*s),
		burst(0, 80, 1700*time.Millisecond, 100*time.Millisecond, 5*s),
		ramp(60, 2, 4*s),
		constant(1.0/3, 10*s),
		constant(0, 2*s),
		constant(250, s))
}

func TestScheduleMonotone(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
	}{
		{"demo", demo()},   // the design's example
		{"mixed", mixed()}, // every pattern, gaps, warm-up
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := mustSchedule(t, tc.sc)
			prev, prevSeg := time.Duration(-1), 0
			for i := range sch.Len() {
				due, seg := sch.Due(i)
				if due < prev {
					t.Fatalf("Due(%d) = %s before Due(%d) = %s", i, due, i-1, prev)
				}
				if seg < prevSeg {
					t.Fatalf("Due(%d) in segment %d after segment %d", i, seg, prevSeg)
				}
				g := sch.Segments[seg]
				if i < g.First || i >= g.First+g.Count {
					t.Fatalf("Due(%d) in segment %d holding [%d, %d)", i, seg, g.First, g.First+g.Count)
				}
				if due < g.Start || due >= g.Start+g.Duration {
					t.Fatalf("Due(%d) = %s outside segment %d [%s, %s)", i, due, seg, g.Start, g.Start+g.Duration)
				}
				if at := sch.SegmentAt(due); at != seg {
					t.Fatalf("SegmentAt(Due(%d) = %s) = %d, want %d", i, due, at, seg)
				}
				// The due time inverts N: N(due) = k, within what a nanosecond of rate moves it.
				k := float64(i - g.First)
				off := due - g.Start
				n := g.Cumulative(off)
				r := max(g.Rate(off), g.Rate(max(off-1, 0)))
				if tol := r*1e-9 + 1e-6; math.Abs(n-k) > tol {
					t.Fatalf("Due(%d): N(%s) = %.9f, want %v", i, off, n, k)
				}
				prev, prevSeg = due, seg
			}
		})
	}
}

func TestScheduleWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
	}{
		{"demo", demo()},   // the design's example
		{"mixed", mixed()}, // every pattern, gaps, warm-up
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := mustSchedule(t, tc.sc)
			dues := make([]time.Duration, sch.Len())
			for i := range dues {
				dues[i], _ = sch.Due(int64(i))
			}
			for range 2000 {
				g := sch.Segments[rng.IntN(len(sch.Segments))]
				a := time.Duration(rng.Int64N(int64(g.Duration)))
				b := a + time.Duration(rng.Int64N(int64(g.Duration-a)+1))
				var count int64
				for _, d := range dues {
					if d >= g.Start+a && d < g.Start+b {
						count++
					}
				}
				if got := sch.DueBefore(g.Start+b) - sch.DueBefore(g.Start+a); got != count {
					t.Fatalf("%s [%s, %s): DueBefore says %d, counted %d", g.Name, a, b, got, count)
				}
				want := g.Cumulative(b) - g.Cumulative(a)
				if math.Abs(float64(count)-want) > 1 {
					t.Fatalf("%s [%s, %s): %d due, N(b)-N(a) = %.6f", g.Name, a, b, count, want)
				}
			}
			// Whole segments hold exactly their Count.
			for _, g := range sch.Segments {
				if got := sch.DueBefore(g.Start+g.Duration) - sch.DueBefore(g.Start); got != g.Count {
					t.Errorf("%s: %d due in its window, Count %d", g.Name, got, g.Count)
				}
			}
		})
	}
}

func TestScheduleErrors(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
	}{
		{"nil", nil},         // no scenario at all
		{"no phases", sc(0)}, // nothing to schedule
		{"negative warm-up", sc(-s, constant(1, s))},                             // a warm-up cannot be negative
		{"zero duration", sc(0, constant(1, 0))},                                 // a phase must last
		{"negative rate", sc(0, constant(-1, s))},                                // rates are >= 0
		{"NaN rate", sc(0, constant(math.NaN(), s))},                             // and numbers
		{"infinite rate", sc(0, constant(math.Inf(1), s))},                       // and finite
		{"negative ramp", sc(0, ramp(10, -1, s))},                                // both ramp ends
		{"step no rates", sc(0, step(s, s))},                                     // a step needs rates
		{"step no hold", sc(0, step(0, s, 1))},                                   // and a hold
		{"step negative", sc(0, step(s, s, 1, -2))},                              // every step rate is checked
		{"burst no every", sc(0, burst(1, 2, 0, 0, s))},                          // a burst needs a period
		{"burst for > every", sc(0, burst(1, 2, s, 2*s, s))},                     // the spike fits the period
		{"burst negative peak", sc(0, burst(1, -2, s, 0, s))},                    // peaks are rates
		{"unknown pattern", sc(0, scenario.Phase{Pattern: "sine", Duration: s})}, // no such pattern
		{"too many", sc(0, constant(1e12, 10000*time.Hour))},                     // indices must stay exact in float64
	} {
		t.Run(tc.name, func(t *testing.T) {
			if sch, err := load.NewSchedule(tc.sc); err == nil {
				t.Errorf("NewSchedule = %d requests, want an error", sch.Len())
			}
		})
	}
}

// TestScheduleIsPure: two schedules of one scenario agree everywhere.
func TestScheduleIsPure(t *testing.T) {
	a, b := mustSchedule(t, mixed()), mustSchedule(t, mixed())
	if a.Len() != b.Len() {
		t.Fatalf("Len %d != %d", a.Len(), b.Len())
	}
	for i := range a.Len() {
		da, sa := a.Due(i)
		db, sb := b.Due(i)
		if da != db || sa != sb {
			t.Fatalf("Due(%d): %s,%d != %s,%d", i, da, sa, db, sb)
		}
	}
}

func BenchmarkDue(b *testing.B) {
	for _, bc := range []struct {
		name string
		sc   *scenario.Scenario
	}{
		{"demo", demo()},   // constant and ramp phases
		{"mixed", mixed()}, // every pattern
		{"burst-1ms", sc(0, burst(1000, 40_000, time.Millisecond, 100*time.Microsecond, 30*time.Minute))}, // 1.8M periods
	} {
		b.Run(bc.name, func(b *testing.B) {
			sch := mustSchedule(b, bc.sc)
			n := sch.Len()
			b.ReportAllocs()
			var i int64
			for b.Loop() {
				sch.Due(i)
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}
