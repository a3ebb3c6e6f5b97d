package main

import (
	"math"
	"slices"
	"time"
)

// run is what one generator did at one rate: the row of the table.
type run struct {
	Tool     string
	Stage    string // "fixed", "search" or "low"
	Mode     string // low: "rt" or "normal"
	Rate     int    // target rate, requests per second
	Duration time.Duration

	Skipped string // non-empty: not measured, and why

	Offered   int64   // Rate × Duration: what an exact open-loop schedule sends
	Sent      int64   // requests the tool reports as sent and completed (successes + failures)
	Succeeded int64   // 2xx answers
	Errors    int64   // failures (+ abandoned, for loadgate)
	HeldRate  float64 // successes per second (see README for each tool's window)

	CPU       time.Duration // user + system CPU of the generator process (wait4 rusage, all threads)
	User, Sys time.Duration // the two parts of CPU: ru_utime, ru_stime
	Nvcsw     int64         // voluntary context switches of the generator process (ru_nvcsw)
	Nivcsw    int64         // involuntary context switches (ru_nivcsw)
	MaxRSS    int64         // peak resident set, bytes (wait4 rusage)

	LatenessN   int64   // sample count the lateness percentiles stand beside
	LatenessP50 float64 // ms
	LatenessP99 float64 // ms
	LatenessMax float64 // ms
	Late        int64   // sent more than lateAfterMS late (-1: unknown)

	SpunS    float64 // loadgate: result.json wait.spun_seconds (-1: not written)
	MarginMS float64 // loadgate: wait.margin_ms

	ServerCPU    time.Duration // CPU the server used while this generator ran
	ServerNvcsw  int64         // the server's voluntary context switches meanwhile (-1: unknown)
	ServerNivcsw int64         // and involuntary ones (-1: unknown)
	OtherCPU     time.Duration // CPU anything else used on the two cores meanwhile
	Steal        time.Duration // time the hypervisor gave the two cores to another guest meanwhile
	Conns        int64         // connections the server accepted during the run (-1: unknown)
	SrvReqs      int64         // requests the server answered during the run (-1: unknown)
	Wall         time.Duration // wall time of the generator process
	Pinned       string        // the generator's CPU affinity as read back from /proc

	Unusable string // the tool itself says the run is unusable, and why

	Held bool
	Why  string   // why not held
	Note []string // anything else a reader needs
}

// CPUPerReq is CPU µs per sent request; NaN when nothing was sent.
func (r *run) CPUPerReq() float64 {
	if r.Sent == 0 {
		return math.NaN()
	}
	return float64(r.CPU.Nanoseconds()) / 1e3 / float64(r.Sent)
}

func (r *run) perReq(v float64) float64 {
	if r.Sent == 0 {
		return math.NaN()
	}
	return v / float64(r.Sent)
}

// UserPerReq and SysPerReq are the two parts of CPUPerReq, µs.
func (r *run) UserPerReq() float64 { return r.perReq(float64(r.User.Nanoseconds()) / 1e3) }
func (r *run) SysPerReq() float64  { return r.perReq(float64(r.Sys.Nanoseconds()) / 1e3) }

// VcsPerReq and IvcsPerReq are the generator's context switches per sent request.
func (r *run) VcsPerReq() float64  { return r.perReq(float64(r.Nvcsw)) }
func (r *run) IvcsPerReq() float64 { return r.perReq(float64(r.Nivcsw)) }

// ServerCPUPerReq is the server's CPU µs per request the tool sent.
func (r *run) ServerCPUPerReq() float64 {
	return r.perReq(float64(r.ServerCPU.Nanoseconds()) / 1e3)
}

// ServerVcsPerReq is the server's voluntary context switches per request; NaN: unknown.
func (r *run) ServerVcsPerReq() float64 {
	if r.ServerNvcsw < 0 {
		return math.NaN()
	}
	return r.perReq(float64(r.ServerNvcsw))
}

// ServerCPUPct is the server's CPU over the generator's wall time, percent of one core.
func (r *run) ServerCPUPct() float64 {
	if r.Wall <= 0 {
		return math.NaN()
	}
	return 100 * r.ServerCPU.Seconds() / r.Wall.Seconds()
}

// OtherCPUPct is CPU others used on the two cores over the wall time, percent of one core.
func (r *run) OtherCPUPct() float64 {
	if r.Wall <= 0 {
		return math.NaN()
	}
	return max(0, 100*r.OtherCPU.Seconds()/r.Wall.Seconds())
}

// StealPct is the hypervisor's steal on the two cores, percent of one core.
func (r *run) StealPct() float64 {
	if r.Wall <= 0 {
		return math.NaN()
	}
	return max(0, 100*r.Steal.Seconds()/r.Wall.Seconds())
}

// ContendedPct is OtherCPUPct plus StealPct.
func (r *run) ContendedPct() float64 { return r.OtherCPUPct() + r.StealPct() }

type criterion struct {
	MinSuccess    float64 // successes ≥ MinSuccess × offered
	MaxLatenessMS float64 // lateness p99 ≤ this
}

func (c criterion) judge(r *run) {
	r.Held, r.Why = false, ""
	switch {
	case r.Skipped != "":
		r.Why = "not measured"
	case r.Unusable != "":
		r.Why = "unusable: " + r.Unusable
	case r.LatenessN == 0:
		r.Why = "lateness not measured"
	case float64(r.Succeeded) < c.MinSuccess*float64(r.Offered):
		r.Why = "successes " + pct(float64(r.Succeeded)/float64(r.Offered)) + " of offered"
	case r.LatenessP99 > c.MaxLatenessMS:
		r.Why = "lateness p99 " + ms(r.LatenessP99) + " ms"
	default:
		r.Held = true
	}
}

func nearestRank(sorted []int64, p float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

type vegetaHit struct {
	Seq     uint64
	TS      int64 // send timestamp, ns since the epoch (vegeta: began + monotonic elapsed)
	Latency int64 // ns
	OK      bool
}

type vegetaSummary struct {
	Hits, OK        int64
	Start           int64   // estimated attack start, ns since the epoch
	Span            float64 // seconds from Start to the last completion
	HeldRate        float64 // OK / Span
	P50, P99, Max   float64 // lateness, ms
	LatenessSamples int64
	Late            int64 // hits more than lateAfterMS late
}

// summarizeVegeta computes lateness and held rate: hit Seq is due at start + Seq/rate,
// start set so the least-late hit is 0 late (understating vegeta's lateness if anything).
func summarizeVegeta(hits []vegetaHit, rate int) vegetaSummary {
	var s vegetaSummary
	if len(hits) == 0 || rate <= 0 {
		return s
	}
	interval := int64(time.Second) / int64(rate)
	s.Start = math.MaxInt64
	for _, h := range hits {
		s.Start = min(s.Start, h.TS-int64(h.Seq)*interval)
	}
	late := make([]int64, len(hits))
	var lastEnd int64
	for i, h := range hits {
		late[i] = h.TS - int64(h.Seq)*interval - s.Start
		lastEnd = max(lastEnd, h.TS+h.Latency)
		if h.OK {
			s.OK++
		}
	}
	slices.Sort(late)
	for _, l := range late {
		if float64(l)/1e6 > lateAfterMS {
			s.Late++
		}
	}
	s.Hits = int64(len(hits))
	s.LatenessSamples = s.Hits
	s.P50 = float64(nearestRank(late, 50)) / 1e6
	s.P99 = float64(nearestRank(late, 99)) / 1e6
	s.Max = float64(late[len(late)-1]) / 1e6
	s.Span = float64(lastEnd-s.Start) / 1e9
	if s.Span > 0 {
		s.HeldRate = float64(s.OK) / s.Span
	}
	return s
}
