package result

import (
	"fmt"
	"slices"
	"strings"
)

// Counting is what the stack's services said themselves: their counters and the
// stubs' configurations; a Result's is nil when there was neither.
type Counting struct {
	Counts []Counted `json:"counts"`
	Stubs  []Stub    `json:"stubs"`
}

// Counted is one scenario count read before and after each phase, against one
// workload's requests (or all, Workload ""). A counter that went down is a reset:
// said, never subtracted, and that span is not measured.
type Counted struct {
	Workload string        `json:"workload,omitempty"` // "" for the scenario-wide count
	Service  string        `json:"service"`
	Port     int           `json:"port"`
	Path     string        `json:"path"`
	Metric   string        `json:"metric"` // the selector as written, e.g. http_requests_total{route="/items"}
	Phases   []CountedSpan `json:"phases"`
	// Total spans from the first phase's start to after the drain.
	Total CountedSpan `json:"total"`
}

type CountedSpan struct {
	Phase string `json:"phase"` // the phase's name; TotalSpan for Counted.Total
	Sent  int64  `json:"sent"`  // the generator offered, the workload's or all
	// Counted is the counter's increase, summed over the matching series; nil when not measured.
	Counted *float64 `json:"counted,omitempty"`
	Series  int      `json:"series,omitempty"`
	Reset   bool     `json:"reset,omitempty"` // the counter went down (a restart)
	// BeforeS and AfterS: when the reads started, seconds after started_at.
	BeforeS     float64 `json:"before_s"`
	AfterS      float64 `json:"after_s"`
	NotMeasured string  `json:"not_measured,omitempty"`
}

const TotalSpan = "all phases"

// Difference is Counted − Sent (negative: dropped, positive: retries or
// duplicates); ok is false when not measured.
func (s CountedSpan) Difference() (d float64, ok bool) {
	if s.Counted == nil {
		return 0, false
	}
	return *s.Counted - float64(s.Sent), true
}

// Stub is a service of the stack that is a `loadgate stub`, with the
// configuration it stated at GET /stub/config.
type Stub struct {
	Service     string      `json:"service"`
	Port        int         `json:"port"`
	Config      *StubConfig `json:"config,omitempty"`
	NotMeasured string      `json:"not_measured,omitempty"`
}

type StubConfig struct {
	Delay       StubDelay   `json:"delay"`            // of every answer (streamed ones: before the headers)
	ErrorRate   float64     `json:"error_rate"`       // fraction answered 500
	TimeoutRate float64     `json:"timeout_rate"`     // fraction held open without an answer
	HoldMaxMS   float64     `json:"hold_max_ms"`      // how long a held request is held at most before its connection is closed
	Stream      *StubStream `json:"stream,omitempty"` // to requests accepting text/event-stream
	Seed        uint64      `json:"seed"`
	Routes      []string    `json:"routes"` // the request patterns it answers, e.g. "GET /profile/{id}"
	// Body is the 200 answers' template ({name}: a route wildcard); "": a JSON object.
	Body string `json:"body,omitempty"`
}

// StubDelay is a delay distribution: "fixed" (MS), "uniform" (MinMS to MaxMS)
// or "lognormal" (P50MS, P99MS). No draw exceeds CapMS.
type StubDelay struct {
	Dist  string  `json:"dist"`
	MS    float64 `json:"ms,omitempty"`
	MinMS float64 `json:"min_ms,omitempty"`
	MaxMS float64 `json:"max_ms,omitempty"`
	P50MS float64 `json:"p50_ms,omitempty"`
	P99MS float64 `json:"p99_ms,omitempty"`
	CapMS float64 `json:"cap_ms"`
}

// StubStream: Chunks events, the first after First, then one every ChunkEveryMS.
type StubStream struct {
	Chunks       int       `json:"chunks"`
	First        StubDelay `json:"first_chunk"`
	ChunkEveryMS float64   `json:"chunk_every_ms"`
}

// mergeCounting merges two runs' counts: a span is summed when both measured it
// without a reset, else not measured saying why; nil when neither has one.
func mergeCounting(a, b *Counting) *Counting {
	if a == nil && b == nil {
		return nil
	}
	var ca, cb []Counted
	var stubs []Stub
	if a != nil {
		ca, stubs = a.Counts, append(stubs, a.Stubs...)
	}
	if b != nil {
		cb = b.Counts
		for _, s := range b.Stubs {
			if !slices.ContainsFunc(stubs, func(x Stub) bool { return x.Service == s.Service }) {
				stubs = append(stubs, s)
			}
		}
	}
	m := &Counting{Counts: []Counted{}, Stubs: stubs}
	if m.Stubs == nil {
		m.Stubs = []Stub{}
	}
	used := make([]bool, len(cb))
	for _, x := range ca {
		j := slices.IndexFunc(cb, func(y Counted) bool { return sameCount(x, y) })
		if j < 0 {
			m.Counts = append(m.Counts, unmatched(x, "the other part did not read this counter"))
			continue
		}
		used[j] = true
		m.Counts = append(m.Counts, mergeCounted(x, cb[j]))
	}
	for j, y := range cb {
		if !used[j] {
			m.Counts = append(m.Counts, unmatched(y, "the other part did not read this counter"))
		}
	}
	return m
}

func sameCount(x, y Counted) bool {
	return x.Workload == y.Workload && x.Service == y.Service && x.Port == y.Port && x.Path == y.Path && x.Metric == y.Metric
}

func unmatched(c Counted, why string) Counted {
	c.Phases = slices.Clone(c.Phases)
	for i := range c.Phases {
		c.Phases[i] = notMeasuredSpan(c.Phases[i], why)
	}
	c.Total = notMeasuredSpan(c.Total, why)
	return c
}

func notMeasuredSpan(s CountedSpan, why string) CountedSpan {
	if s.Counted != nil || s.NotMeasured == "" {
		s.NotMeasured = why
	}
	s.Counted, s.Series = nil, 0
	return s
}

func mergeCounted(x, y Counted) Counted {
	m := x
	m.Phases = make([]CountedSpan, len(x.Phases))
	for i, s := range x.Phases {
		if i < len(y.Phases) && y.Phases[i].Phase == s.Phase {
			m.Phases[i] = mergeSpan(s, y.Phases[i])
		} else {
			m.Phases[i] = notMeasuredSpan(s, "the parts' phases differ")
		}
	}
	m.Total = mergeSpan(x.Total, y.Total)
	return m
}

func mergeSpan(a, b CountedSpan) CountedSpan {
	m := a
	m.Sent = a.Sent + b.Sent
	m.Reset = a.Reset || b.Reset
	if a.Reset || b.Reset || a.Counted == nil || b.Counted == nil {
		bad := b // the part that did not measure it (a reset first)
		if a.Reset || (a.Counted == nil && !b.Reset) {
			bad = a
		}
		why := bad.NotMeasured
		switch {
		case why == "" && bad.Reset:
			why = "the counter went down (a restart): not subtracted"
		case why == "":
			why = "not measured"
		}
		if !strings.HasPrefix(why, "round ") {
			why = "one of the parts: " + why
		}
		m.Counted, m.Series, m.NotMeasured = nil, 0, why
		return m
	}
	v := *a.Counted + *b.Counted
	m.Counted, m.Series, m.NotMeasured = &v, max(a.Series, b.Series), ""
	return m
}

// PoolCounting merges one side's rounds' counts as Merge does, a span not measured
// naming the first round that did not. A repeated result counts once; nil when
// no result has a Counting.
func PoolCounting(rs []*Result) *Counting {
	var uniq []*Result
	counted := false
	for _, r := range rs {
		if r == nil || slices.Contains(uniq, r) {
			continue
		}
		uniq = append(uniq, r)
		counted = counted || r.Counting != nil
	}
	if !counted {
		return nil
	}
	var acc *Counting
	for i, r := range uniq {
		c := r.Counting
		if c == nil {
			c = &Counting{}
		}
		c = roundLabelled(c, i+1)
		if acc == nil {
			acc = c
			continue
		}
		acc = mergeCounting(acc, c)
	}
	return acc
}

func roundLabelled(c *Counting, n int) *Counting {
	out := &Counting{Stubs: c.Stubs, Counts: make([]Counted, len(c.Counts))}
	for i, x := range c.Counts {
		x.Phases = slices.Clone(x.Phases)
		for j := range x.Phases {
			x.Phases[j] = labelSpan(x.Phases[j], n)
		}
		x.Total = labelSpan(x.Total, n)
		out.Counts[i] = x
	}
	return out
}

func labelSpan(s CountedSpan, n int) CountedSpan {
	if s.NotMeasured != "" {
		s.NotMeasured = fmt.Sprintf("round %d: %s", n, s.NotMeasured)
	}
	return s
}
