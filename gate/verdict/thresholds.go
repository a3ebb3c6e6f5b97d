package verdict

import (
	"sort"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
)

// Metric names of the checks.
const (
	MetricP50       = "p50"
	MetricP90       = "p90"
	MetricP95       = "p95"
	MetricP99       = "p99"
	MetricP999      = "p99.9"
	MetricErrorRate = "error_rate"
)

// Thresholds judges r against its scenario's thresholds per workload on the
// judged and recover phases: latency by the nearest-rank due-time percentile,
// error_rate without abandoned requests. A phase where nothing ran, or an
// interrupted run, is not measured at best.
func Thresholds(r *result.Result) Verdict {
	if notes := unusable(r); len(notes) > 0 {
		return Verdict{Value: Unusable, Workloads: []WorkloadVerdict{}, Notes: notes}
	}
	v := Verdict{Workloads: []WorkloadVerdict{}, Notes: []Note{}}
	values := []Value{}
	if r.Interrupted {
		// The result cannot say which phases it did not reach.
		v.Notes = append(v.Notes, Note{Code: NoteInterrupted})
		values = append(values, NotMeasured)
	}
	for _, p := range r.Phases {
		if !p.Judged && !p.Recover {
			continue
		}
		wvs, notes := judgePhase(p, r.Scenario.Thresholds)
		v.Notes = append(v.Notes, notes...)
		if len(wvs) == 0 {
			v.Notes = append(v.Notes, Note{Code: NoteNoWorkload, Phase: p.Name})
			values = append(values, NotMeasured)
		}
		for _, wv := range wvs {
			values = append(values, wv.Value)
		}
		v.Workloads = append(v.Workloads, wvs...)
	}
	values = append(values, judgeRecovery(r, &v)...) // faults: recovery.go
	v.Value = Worst(values...)
	return v
}

// judgePhase judges the workloads that ran, then the absent ones with thresholds.
func judgePhase(p result.Phase, thr map[string]result.Thr) ([]WorkloadVerdict, []Note) {
	var out []WorkloadVerdict
	var notes []Note
	seen := map[string]bool{}
	for _, w := range p.Workloads {
		if seen[w.Name] {
			continue
		}
		seen[w.Name] = true
		t, has := thr[w.Name]
		wv := judgeWorkload(p.Name, w, t, has)
		if w.Abandoned > 0 {
			notes = append(notes, Note{Code: NoteAbandoned, Phase: p.Name, Workload: w.Name, Abandoned: w.Abandoned})
		}
		out = append(out, wv)
	}
	var missing []string
	for name := range thr {
		if !seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		wv := WorkloadVerdict{Phase: p.Name, Workload: name, Value: NotMeasured, Reason: ReasonAbsent, Checks: []Check{}}
		for _, c := range thresholdChecks(thr[name]) {
			c.Phase, c.Workload, c.Value, c.Reason = p.Name, name, NotMeasured, ReasonAbsent
			wv.Checks = append(wv.Checks, c)
		}
		out = append(out, wv)
	}
	return out, notes
}

func judgeWorkload(phase string, w result.Workload, t result.Thr, hasThr bool) WorkloadVerdict {
	wv := WorkloadVerdict{Phase: phase, Workload: w.Name, Checks: []Check{}}
	measured := w.Succeeded > 0
	switch {
	case w.Offered == 0:
		wv.Reason = ReasonNotOffered
	case !measured:
		wv.Reason, wv.Offered, wv.Failed, wv.Abandoned = ReasonNoSuccess, w.Offered, w.Failed, w.Abandoned
	case !hasThr:
		wv.Reason = ReasonNoThresholds
	}
	values := []Value{}
	if !measured {
		values = append(values, NotMeasured)
	}
	if hasThr {
		for _, c := range thresholdChecks(t) {
			c.Phase, c.Workload = phase, w.Name
			if c.Metric == MetricErrorRate {
				judgeErrorRate(&c, w)
			} else {
				judgeLatency(&c, w)
			}
			values = append(values, c.Value)
			wv.Checks = append(wv.Checks, c)
		}
	}
	if len(values) == 0 {
		values = append(values, Pass)
	}
	wv.Value = Worst(values...)
	return wv
}

// thresholdChecks lists the set thresholds of t in a fixed order.
func thresholdChecks(t result.Thr) []Check {
	var cs []Check
	for _, l := range []struct {
		metric string
		limit  float64
	}{
		{MetricP50, t.P50MS}, {MetricP90, t.P90MS}, {MetricP95, t.P95MS},
		{MetricP99, t.P99MS}, {MetricP999, t.P999MS},
	} {
		if l.limit > 0 {
			cs = append(cs, Check{Metric: l.metric, Limit: l.limit})
		}
	}
	for _, st := range []struct {
		prefix string
		t      *result.PctThr
	}{{MetricFirstMessagePrefix, t.FirstMessage}, {MetricConnectPrefix, t.Connect}} {
		if st.t == nil {
			continue
		}
		for _, l := range []struct {
			metric string
			limit  float64
		}{
			{MetricP50, st.t.P50MS}, {MetricP90, st.t.P90MS}, {MetricP95, st.t.P95MS},
			{MetricP99, st.t.P99MS}, {MetricP999, st.t.P999MS},
		} {
			if l.limit > 0 {
				cs = append(cs, Check{Metric: st.prefix + l.metric, Limit: l.limit})
			}
		}
	}
	if t.ErrorRate != nil {
		cs = append(cs, Check{Metric: MetricErrorRate, Limit: *t.ErrorRate})
	}
	return cs
}

// Session threshold metrics: a prefix and a percentile (result.MetricHistogram).
const (
	MetricFirstMessagePrefix = result.FirstMessagePrefix
	MetricConnectPrefix      = result.ConnectPrefix
)

func judgeLatency(c *Check, w result.Workload) {
	s, pct := w.LatencyMS, c.Metric
	for _, m := range []struct {
		prefix string
		s      *result.Summary
		reason Reason
	}{{MetricFirstMessagePrefix, w.FirstMessageMS, ReasonNoMessage}, {MetricConnectPrefix, w.ConnectMS, ReasonNoHandshake}} {
		if rest, ok := strings.CutPrefix(c.Metric, m.prefix); ok {
			pct = rest
			if m.s == nil || m.s.Count == 0 {
				c.Value, c.Reason = NotMeasured, m.reason
				return
			}
			s = *m.s
		}
	}
	c.Count = s.Count
	if s.Count == 0 {
		c.Value, c.Reason = NotMeasured, ReasonNoSuccess
		return
	}
	switch pct {
	case MetricP50:
		c.Observed = s.P50
	case MetricP90:
		c.Observed = s.P90
	case MetricP95:
		c.Observed = s.P95
	case MetricP99:
		c.Observed = s.P99
	case MetricP999:
		c.Observed = s.P999
	}
	c.Value = Pass
	if c.Observed > c.Limit {
		c.Value = Fail
	}
}

func judgeErrorRate(c *Check, w result.Workload) {
	rate, n := w.ErrorRate()
	c.Count = n
	if w.Abandoned > 0 {
		c.Reason, c.Abandoned = ReasonAbandonedExcluded, w.Abandoned
	}
	if n <= 0 {
		c.Value, c.Reason, c.Abandoned = NotMeasured, ReasonNoCompletion, 0
		return
	}
	c.Observed = rate
	c.Value = Pass
	if c.Observed > c.Limit {
		c.Value = Fail
	}
}

// unusable returns why r cannot be judged, or nil.
func unusable(r *result.Result) []Note {
	if r == nil {
		return []Note{{Code: NoteNoResult}}
	}
	var rs []Note
	add := func(n Note) { rs = addNote(rs, n) }
	if !r.Usable {
		if len(r.Unusable) == 0 {
			add(Note{Code: NoteMarkedUnusable})
		}
		for _, s := range r.Unusable {
			add(Note{Code: NoteResult, Detail: s})
		}
	}
	for _, s := range r.Check() {
		add(Note{Code: NoteResult, Detail: s})
	}
	judged := false
	for _, p := range r.Phases {
		judged = judged || p.Judged
		for _, w := range p.Workloads {
			if w.LatencyMS.Count != w.Timed() { // Timed: successes less cancelled sessions
				add(Note{Code: NoteLatencyCount, Phase: p.Name, Workload: w.Name, Samples: w.LatencyMS.Count, Successes: w.Timed()})
			}
		}
	}
	if !judged {
		add(Note{Code: NoteNoJudgedPhase})
	}
	return rs
}
