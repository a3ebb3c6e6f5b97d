package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// countedIntro heads "Counted by the service": the services' own counts beside what was sent.
const countedIntro = "Each counter was read at every phase's start and after the drain; counted is its increase, difference is counted − sent " +
	"(below zero: requests the service never counted; above: counted more than once, e.g. retried). " +
	"A request in flight at a phase boundary may count in the next phase, and a counter that went down (a restart) is said, not subtracted."

func countValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return Count(int64(v))
	}
	return exact(v)
}

func signedCount(v float64) string {
	s := countValue(v)
	if v > 0 {
		s = "+" + s
	}
	return s
}

func countedCells(s result.CountedSpan) (counted, diff string) {
	d, ok := s.Difference()
	if !ok {
		if s.Reset {
			return "reset", "not measured"
		}
		return "not measured", dash
	}
	return countValue(*s.Counted), signedCount(d)
}

func countedWorkload(c result.Counted) string {
	if c.Workload == "" {
		return "every workload"
	}
	return c.Workload
}

// counterAt is where a count's counter was read: service:port/path.
func counterAt(c result.Counted) string {
	return c.Service + ":" + strconv.Itoa(c.Port) + c.Path
}

// uncounted lists r's workloads no count covers.
func uncounted(r *result.Result) []string {
	covered := map[string]bool{}
	if r.Counting != nil {
		for _, c := range r.Counting.Counts {
			if c.Workload == "" {
				return nil
			}
			covered[c.Workload] = true
		}
	}
	var out []string
	for _, p := range r.Phases {
		for _, w := range p.Workloads {
			if !covered[w.Name] {
				covered[w.Name] = true
				out = append(out, w.Name)
			}
		}
	}
	return out
}

func notCountedText(r *result.Result, counts int) string {
	un := uncounted(r)
	switch {
	case counts == 0:
		return "counted by the service: not measured (the scenario names no count:)"
	case len(un) == 0:
		return ""
	}
	return "counted by the service: not measured for " + strings.Join(un, ", ") + " (no count: names a counter of theirs)"
}

func spans(c result.Counted) []result.CountedSpan {
	return append(append([]result.CountedSpan(nil), c.Phases...), c.Total)
}

// readSlack is how far a read may miss its phase boundary unmentioned.
const readSlack = 0.1 // seconds

func whyNot(c result.Counted) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range spans(c) {
		if s.NotMeasured != "" && !seen[s.NotMeasured] {
			seen[s.NotMeasured] = true
			out = append(out, "not measured in "+s.Phase+": "+s.NotMeasured)
		}
	}
	return out
}

// lateReads lists reads off their phase's start by more than readSlack.
func lateReads(r *result.Result, counts []result.Counted) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range counts {
		at := r.Warmup.DurationS // the planned start of phase i, on the run's clock
		for i, s := range c.Phases {
			if i >= len(r.Phases) {
				break
			}
			if s.NotMeasured == "" && math.Abs(s.BeforeS-at) > readSlack {
				t := "the read at the start of " + s.Phase + " was made at " + seconds(s.BeforeS) + ", the phase starts at " + seconds(at) +
					": requests sent in between are counted in the neighbouring phase"
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
			at += r.Phases[i].DurationS
		}
	}
	return out
}

func stubText(s result.Stub) string {
	if s.Config == nil {
		return "configuration not measured: " + s.NotMeasured
	}
	c := s.Config
	parts := []string{"delay " + delayText(c.Delay),
		"answered 500: " + Percent(c.ErrorRate),
		"held open without an answer: " + Percent(c.TimeoutRate) + " (up to " + MS(c.HoldMaxMS) + " ms, then closed)"}
	if st := c.Stream; st != nil {
		parts = append(parts, "streams "+Count(int64(st.Chunks))+" server-sent events to text/event-stream requests, the first after "+delayText(st.First)+", then one every "+MS(st.ChunkEveryMS)+" ms")
	} else {
		parts = append(parts, "no streaming")
	}
	parts = append(parts, "seed "+strconv.FormatUint(c.Seed, 10), "routes "+strings.Join(c.Routes, ", "))
	return strings.Join(parts, " · ")
}

func delayText(d result.StubDelay) string {
	var s string
	switch d.Dist {
	case "uniform":
		s = "uniform " + MS(d.MinMS) + "–" + MS(d.MaxMS) + " ms"
	case "lognormal":
		s = "lognormal p50 " + MS(d.P50MS) + " ms, p99 " + MS(d.P99MS) + " ms (no draw above " + MS(d.CapMS) + " ms)"
	default:
		s = "fixed " + MS(d.MS) + " ms"
	}
	return s
}

func mdCounting(b *md, r *result.Result) {
	b.line("## Counted by the service")
	b.line("")
	var counts []result.Counted
	var stubs []result.Stub
	if r.Counting != nil {
		counts, stubs = r.Counting.Counts, r.Counting.Stubs
	}
	if len(counts) > 0 {
		b.line("%s", countedIntro)
		b.line("")
		b.header("llrrr", "workload", "phase", "sent", "counted", "difference")
		for _, c := range counts {
			for i, s := range spans(c) {
				counted, diff := countedCells(s)
				name := ""
				if i == 0 {
					name = mdtext.Escape(countedWorkload(c))
				}
				b.row(name, mdtext.Escape(s.Phase), Count(s.Sent), counted, diff)
			}
		}
		b.line("")
		for _, c := range counts {
			b.line("- %s: %s at %s", mdtext.Escape(countedWorkload(c)), mdtext.Code(c.Metric), mdtext.Code(counterAt(c)))
			for _, w := range whyNot(c) {
				b.line("  - %s", mdtext.Escape(w))
			}
		}
		for _, l := range lateReads(r, counts) {
			b.line("- %s", mdtext.Escape(l))
		}
		b.line("")
	}
	if t := notCountedText(r, len(counts)); t != "" {
		b.line("%s.", strings.ToUpper(t[:1])+t[1:])
		b.line("")
	}
	for _, s := range stubs {
		b.line("- **stub upstream** %s: %s", mdtext.Code(s.Service+":"+strconv.Itoa(s.Port)), mdtext.Escape(stubText(s)))
	}
	if len(stubs) > 0 {
		b.line("")
	}
}

func textCounting(b *txt, r *result.Result) {
	var counts []result.Counted
	var stubs []result.Stub
	if r.Counting != nil {
		counts, stubs = r.Counting.Counts, r.Counting.Stubs
	}
	b.line("")
	if len(counts) > 0 {
		b.line("counted by the service (counter increase per phase; difference = counted − sent)")
		rows := [][]string{{"workload", "phase", "sent", "counted", "difference"}}
		for _, c := range counts {
			for i, s := range spans(c) {
				counted, diff := countedCells(s)
				name := ""
				if i == 0 {
					name = countedWorkload(c)
				}
				rows = append(rows, []string{name, s.Phase, Count(s.Sent), counted, diff})
			}
		}
		b.table("  ", rows)
		for _, c := range counts {
			b.line("  %s: %s at %s", countedWorkload(c), c.Metric, counterAt(c))
			for _, w := range whyNot(c) {
				b.line("    %s", w)
			}
		}
		for _, l := range lateReads(r, counts) {
			b.line("  %s", l)
		}
	}
	if t := notCountedText(r, len(counts)); t != "" {
		b.line("%s", t)
	}
	for _, s := range stubs {
		b.line("stub upstream %s:%d: %s", s.Service, s.Port, stubText(s))
	}
}
