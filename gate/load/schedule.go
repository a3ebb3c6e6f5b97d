package load

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// Segment is the warm-up or a phase. Request k is due at inf{t : N(t) > k}, N the
// cumulative rate; Count is ceil(N(Duration)), snapped within float error.
type Segment struct {
	Name   string
	Warmup bool
	Phase  int // index into scenario.Phases; -1 for the warm-up

	Start, Duration time.Duration // offset from run start, length
	First, Count    int64         // global index of its first request, number of requests due in it

	curve curve
}

// Rate returns the rate (requests/s) at offset t in [0, Duration) from the segment's start.
func (g *Segment) Rate(t time.Duration) float64 { return g.curve.rate(t) }

// Cumulative returns N(t), the requests asked for in [0, t), t clamped to [0, Duration].
func (g *Segment) Cumulative(t time.Duration) float64 {
	t = min(max(t, 0), g.Duration)
	return g.curve.cumulative(t)
}

// Schedule is the warm-up then the phases, back to back; immutable, safe for concurrent use.
type Schedule struct {
	Segments []Segment

	total    int64
	duration time.Duration
}

// maxRequests bounds a schedule so that every index is exact in a float64.
const maxRequests = 1 << 53

// NewSchedule builds s's schedule; the warm-up runs on the first phase's rate, held at its
// end if the warm-up outlasts it.
func NewSchedule(s *scenario.Scenario) (*Schedule, error) {
	if s == nil {
		return nil, errors.New("no scenario")
	}
	if len(s.Phases) == 0 {
		return nil, errors.New("no phases")
	}
	if s.Warmup < 0 {
		return nil, fmt.Errorf("warm-up %s is negative", s.Warmup)
	}
	for i := range s.Phases {
		if err := checkPhase(&s.Phases[i]); err != nil {
			return nil, fmt.Errorf("phase %d (%s): %w", i+1, s.Phases[i].Name, err)
		}
	}
	sch := &Schedule{}
	add := func(name string, warmup bool, phase int, p *scenario.Phase, length time.Duration) error {
		if length > math.MaxInt64-sch.duration {
			return errors.New("schedule too long")
		}
		c := buildCurve(p, length)
		n := c.cumulative(length)
		count := int64(0)
		if n > 0 {
			n = math.Ceil(snap(n))
			if n > maxRequests-float64(sch.total) {
				return fmt.Errorf("%s: more than 2^53 requests", name)
			}
			count = int64(n)
		}
		sch.Segments = append(sch.Segments, Segment{
			Name: name, Warmup: warmup, Phase: phase,
			Start: sch.duration, Duration: length,
			First: sch.total, Count: count,
			curve: c,
		})
		sch.duration += length
		sch.total += count
		return nil
	}
	if s.Warmup > 0 {
		if err := add("warmup", true, -1, &s.Phases[0], s.Warmup); err != nil {
			return nil, err
		}
	}
	for i := range s.Phases {
		p := &s.Phases[i]
		if err := add(p.Name, false, i, p, p.Duration); err != nil {
			return nil, err
		}
	}
	return sch, nil
}

func checkPhase(p *scenario.Phase) error {
	if p.Duration <= 0 {
		return fmt.Errorf("duration %s is not positive", p.Duration)
	}
	bad := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%s %v is not a rate (finite, >= 0)", name, v)
		}
		return nil
	}
	switch p.Pattern {
	case "", scenario.Constant:
		return bad("rate", p.Rate)
	case scenario.Ramp:
		return errors.Join(bad("from", p.From), bad("to", p.To))
	case scenario.Step:
		if len(p.Rates) == 0 {
			return errors.New("step without rates")
		}
		if p.Hold <= 0 {
			return fmt.Errorf("hold %s is not positive", p.Hold)
		}
		for _, r := range p.Rates {
			if err := bad("step rate", r); err != nil {
				return err
			}
		}
		return nil
	case scenario.Burst:
		if p.Every <= 0 {
			return fmt.Errorf("every %s is not positive", p.Every)
		}
		if p.For < 0 || p.For > p.Every {
			return fmt.Errorf("for %s is not within [0, every %s]", p.For, p.Every)
		}
		return errors.Join(bad("rate", p.Rate), bad("peak", p.Peak))
	default:
		return fmt.Errorf("unknown pattern %q", p.Pattern)
	}
}

// Len returns the total number of requests, warm-up included.
func (s *Schedule) Len() int64 { return s.total }

// Duration returns the length of the schedule, warm-up included.
func (s *Schedule) Duration() time.Duration { return s.duration }

// Due returns request i's due offset (non-decreasing in i) and segment; out of range:
// (Duration(), -1).
func (s *Schedule) Due(i int64) (due time.Duration, seg int) {
	if i < 0 || i >= s.total {
		return s.duration, -1
	}
	lo, hi := 0, len(s.Segments)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g := &s.Segments[m]; g.First+g.Count <= i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	g := &s.Segments[lo]
	d := g.curve.inverse(float64(i - g.First))
	if d >= g.Duration { // sub-nanosecond rounding at the very end
		d = g.Duration - 1
	}
	return g.Start + d, lo
}

// Pace is vegeta's pacer: the wait before hit number hits, or stop when the schedule is done.
func (s *Schedule) Pace(elapsed time.Duration, hits int64) (wait time.Duration, stop bool) {
	if hits >= s.total {
		return 0, true
	}
	due, _ := s.Due(max(hits, 0))
	if due <= elapsed {
		return 0, false
	}
	return due - elapsed, false
}

// SegmentAt returns the segment whose window contains t, or -1.
func (s *Schedule) SegmentAt(t time.Duration) int {
	if t < 0 || t >= s.duration {
		return -1
	}
	lo, hi := 0, len(s.Segments)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g := &s.Segments[m]; g.Start+g.Duration <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// DueBefore returns the number of requests due before t.
func (s *Schedule) DueBefore(t time.Duration) int64 {
	lo, hi := int64(0), s.total
	for lo < hi {
		m := int64(uint64(lo+hi) >> 1)
		if d, _ := s.Due(m); d < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// snap rounds x to an integer within float error of it (1e-9, or ~1e-12·|x|).
func snap(x float64) float64 {
	r := math.Round(x)
	if math.Abs(x-r) <= max(1e-9, 0x1p-40*math.Abs(x)) {
		return r
	}
	return x
}

// piece is a stretch of linear rate, from at start to to at start+length.
type piece struct {
	start, length time.Duration // offset within the curve (or its period)
	from, to      float64       // requests per second at both ends
	cum0, cum1    float64       // N at both ends (snapped to integers within float error)
}

// mass returns the number of requests due in the first x seconds of p.
func (p *piece) mass(x float64) float64 {
	if p.from == p.to {
		return p.from * x
	}
	return p.from*x + (p.to-p.from)*x*x/(2*p.length.Seconds())
}

// solve returns the x (seconds) with mass(x) = y, for 0 <= y < mass(length).
func (p *piece) solve(y float64) float64 {
	if y <= 0 {
		return 0
	}
	if p.from == p.to {
		return y / p.from // from > 0: a piece of rate 0 holds no request
	}
	// Solve from·x + slope·x²/2 = y without cancellation (also for from = 0, falling ramps).
	slope := (p.to - p.from) / p.length.Seconds()
	disc := max(p.from*p.from+2*slope*y, 0)
	den := p.from + math.Sqrt(disc)
	if den <= 0 {
		return 0
	}
	return 2 * y / den
}

// curve is a piecewise linear rate; with period > 0 its pieces repeat.
type curve struct {
	pieces   []piece
	period   time.Duration
	perCount float64 // N over one period
}

func (c *curve) add(start, length time.Duration, from, to float64) {
	if length <= 0 {
		return
	}
	var cum0 float64
	if n := len(c.pieces); n > 0 {
		cum0 = c.pieces[n-1].cum1
	}
	c.pieces = append(c.pieces, piece{
		start: start, length: length, from: from, to: to,
		cum0: cum0, cum1: snap(cum0 + (from+to)/2*length.Seconds()),
	})
}

// buildCurve returns p's rate over [0, length] (length ≠ p.Duration for the warm-up).
func buildCurve(p *scenario.Phase, length time.Duration) curve {
	var c curve
	switch p.Pattern {
	case scenario.Ramp:
		d := p.Duration
		if length <= d {
			to := p.To
			if length < d {
				to = p.From + (p.To-p.From)*(float64(length)/float64(d))
			}
			c.add(0, length, p.From, to)
		} else {
			c.add(0, d, p.From, p.To)
			c.add(d, length-d, p.To, p.To)
		}
	case scenario.Step:
		for j, r := range p.Rates {
			start := time.Duration(j) * p.Hold
			if start >= length || start/p.Hold != time.Duration(j) {
				break
			}
			n := p.Hold
			if j == len(p.Rates)-1 || n > length-start {
				n = length - start // the last rate holds to the end
			}
			c.add(start, n, r, r)
		}
	case scenario.Burst:
		c.period = p.Every
		c.add(0, p.For, p.Peak, p.Peak)
		c.add(p.For, p.Every-p.For, p.Rate, p.Rate)
		c.perCount = c.pieces[len(c.pieces)-1].cum1
	default:
		c.add(0, length, p.Rate, p.Rate)
	}
	return c
}

// at returns the index of the piece holding offset t (within a period).
func (c *curve) at(t time.Duration) int {
	lo, hi := 0, len(c.pieces)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.pieces[m].start <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

func (c *curve) rate(t time.Duration) float64 {
	if c.period > 0 {
		t %= c.period
	}
	p := &c.pieces[c.at(t)]
	x := min(max(t-p.start, 0), p.length)
	return p.from + (p.to-p.from)*(float64(x)/float64(p.length))
}

func (c *curve) cumulative(t time.Duration) float64 {
	var base float64
	if c.period > 0 {
		m := t / c.period
		t -= m * c.period
		base = float64(m) * c.perCount
	}
	p := &c.pieces[c.at(t)]
	x := min(max(t-p.start, 0), p.length)
	return base + p.cum0 + p.mass(x.Seconds())
}

// find returns the first piece whose end count is past y (len when none).
func (c *curve) find(y float64) int {
	lo, hi := 0, len(c.pieces)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if y < c.pieces[m].cum1 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// inverse returns request k's due offset, inf{t : N(t) > k}, to the ns.
func (c *curve) inverse(k float64) time.Duration {
	var base time.Duration
	y := k
	if c.period > 0 {
		m := math.Floor(snap(k / c.perCount))
		y = max(k-m*c.perCount, 0)
		base = time.Duration(m) * c.period
	}
	j := c.find(y)
	if j == len(c.pieces) {
		if c.period == 0 { // not reached for k < Count
			last := &c.pieces[j-1]
			return last.start + last.length
		}
		// Float error put the end of one period's count on the wrong side.
		base += c.period
		y = 0
		j = c.find(y)
	}
	p := &c.pieces[j]
	x := time.Duration(math.Round(p.solve(y-p.cum0) * 1e9))
	return base + p.start + min(max(x, 0), p.length)
}
