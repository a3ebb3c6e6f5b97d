package result

import (
	"fmt"
	"maps"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Merge combines two rounds of the same side into one result exactly, as if all
// samples were recorded at once: histograms merge bucket by bucket, counts and
// durations sum, and derived numbers are recomputed. a and b need the same hash,
// phases and workloads; they are not modified and share no memory with the result.
func Merge(a, b *Result) (*Result, error) {
	return merge(a, b, nil)
}

// MergeError: rs[Index] did not merge into the results before it.
type MergeError struct {
	Index int
	Err   error
}

func (e *MergeError) Error() string { return e.Err.Error() }
func (e *MergeError) Unwrap() error { return e.Err }

// MergeAll is Merge folded over rs, each histogram decoded and encoded once
// rather than once a pair. One result is returned as it is; none is nil.
func MergeAll(rs []*Result) (*Result, error) {
	if len(rs) < 2 {
		if len(rs) == 0 {
			return nil, nil
		}
		return rs[0], nil
	}
	g := &histAcc{hs: map[string]*hdrhistogram.Histogram{}}
	m := rs[0]
	for i, r := range rs[1:] {
		var err error
		if m, err = merge(m, r, g); err != nil {
			return nil, &MergeError{Index: i + 1, Err: err}
		}
	}
	if err := g.encodeInto(m); err != nil {
		return nil, &MergeError{Index: len(rs) - 1, Err: err}
	}
	return m, nil
}

func merge(a, b *Result, g *histAcc) (*Result, error) {
	if err := mergeable(a, b); err != nil {
		return nil, err
	}
	m := a.clone()
	m.addRun(a, b)
	var err error
	if m.LatenessHist, m.LatenessMS, err = g.merge("lateness_histogram",
		a.LatenessHist, a.LatenessMS.Count, b.LatenessHist, b.LatenessMS.Count); err != nil {
		return nil, err
	}
	for i := range m.Phases {
		p, pb := &m.Phases[i], &b.Phases[i]
		p.DurationS += pb.DurationS
		for j := range p.Workloads {
			at := fmt.Sprintf("phases[%d].workloads[%d].", i, j)
			if err := p.Workloads[j].add(&pb.Workloads[j], at, g, p.DurationS); err != nil {
				return nil, err
			}
		}
	}
	m.Generator = m.GeneratorBehind() // derived from the summed counts and the merged lateness
	return m, nil
}

// mergeable refuses two results that are not runs of one load.
func mergeable(a, b *Result) error {
	if a == nil || b == nil {
		return fmt.Errorf("result: merge: nil result")
	}
	if a.Scenario.Hash != b.Scenario.Hash {
		return fmt.Errorf("result: merge: different scenarios: hash %q (%s) and %q (%s)",
			a.Scenario.Hash, a.Scenario.Name, b.Scenario.Hash, b.Scenario.Name)
	}
	if pa, pb := phaseNames(a), phaseNames(b); !slices.Equal(pa, pb) {
		return fmt.Errorf("result: merge: different phases: %q and %q", pa, pb)
	}
	for i := range a.Phases {
		if wa, wb := workloadNames(&a.Phases[i]), workloadNames(&b.Phases[i]); !slices.Equal(wa, wb) {
			return fmt.Errorf("result: merge: phases[%d] (%s): different workloads: %q and %q",
				i, a.Phases[i].Name, wa, wb)
		}
	}
	return nil
}

func (m *Result) addRun(a, b *Result) {
	m.Offered += b.Offered
	m.Recorded += b.Recorded
	m.Late += b.Late
	m.Stalled += b.Stalled
	m.Interrupted = a.Interrupted || b.Interrupted
	m.Usable = a.Usable && b.Usable
	m.Unusable = append(m.Unusable, b.Unusable...)
	m.NotMeasured = union(m.NotMeasured, b.NotMeasured)
	m.Synthetic = union(m.Synthetic, b.Synthetic)
	m.Warmup.DurationS += b.Warmup.DurationS
	m.Warmup.Offered += b.Warmup.Offered
	m.Warmup.Recorded += b.Warmup.Recorded
	m.Warmup.Failed += b.Warmup.Failed
	for class, c := range b.Warmup.Failures {
		if m.Warmup.Failures == nil {
			m.Warmup.Failures = map[string]int64{}
		}
		m.Warmup.Failures[class] += c
	}
	m.Round = nil                                      // a merge of rounds is no one round
	m.Counting = mergeCounting(a.Counting, b.Counting) // summed only where both measured (counted.go)
	if !b.StartedAt.IsZero() && (m.StartedAt.IsZero() || b.StartedAt.Before(m.StartedAt)) {
		m.StartedAt = b.StartedAt
	}
	if b.FinishedAt.After(m.FinishedAt) {
		m.FinishedAt = b.FinishedAt
	}
	m.Stack = mergeStack(m.Stack, b.Stack)
	m.Steal = mergeSteal(a.Steal, b.Steal) // steal.go
	m.Wait = mergeWait(a.Wait, b.Wait)     // wait.go
}

// add adds wb's counts and histograms to w, its throughput over dur seconds.
func (w *Workload) add(wb *Workload, at string, g *histAcc, dur float64) error {
	w.Add(*wb) // the counts (faults.go)
	var err error
	if w.Histogram, w.LatencyMS, err = g.merge(at+"histogram",
		w.Histogram, w.LatencyMS.Count, wb.Histogram, wb.LatencyMS.Count); err != nil {
		return err
	}
	if w.ServiceH, w.ServiceMS, err = g.merge(at+"service_histogram",
		w.ServiceH, w.ServiceMS.Count, wb.ServiceH, wb.ServiceMS.Count); err != nil {
		return err
	}
	if err := w.mergeSession(wb, at, g); err != nil { // session.go
		return err
	}
	w.Throughput = Throughput{}
	if dur > 0 {
		w.Throughput.CompletedPerS = float64(w.Completed) / dur
		w.Throughput.OfferedPerS = float64(w.Offered) / dur
	}
	return nil
}

// histAcc holds MergeAll's decoded histograms by path; nil merges pair by pair.
type histAcc struct {
	hs map[string]*hdrhistogram.Histogram
}

// merge is mergeHist, or adds b's to the held histogram for path; the string
// returned is then stale until encodeInto.
func (g *histAcc) merge(path, a string, countA int64, b string, countB int64) (string, Summary, error) {
	if g == nil {
		return mergeHist(path, a, countA, b, countB)
	}
	ha := g.hs[path]
	if ha == nil {
		if a == "" && b == "" {
			return "", Summary{}, nil
		}
		var err error
		if ha, err = decodeCounted("a", path, a, countA); err != nil {
			return "", Summary{}, err
		}
	}
	hb, err := decodeCounted("b", path, b, countB)
	if err != nil {
		return "", Summary{}, err
	}
	if dropped := ha.Merge(hb); dropped > 0 {
		return "", Summary{}, fmt.Errorf("result: merge: %s: %d values dropped", path, dropped)
	}
	g.hs[path] = ha
	return a, Summarize(ha), nil
}

func (g *histAcc) encodeInto(m *Result) error {
	set := func(path string, dst *string) error {
		h := g.hs[path]
		if h == nil {
			return nil
		}
		s, err := EncodeHistogram(h)
		if err != nil {
			return fmt.Errorf("result: merge: %s: %w", path, err)
		}
		*dst = s
		return nil
	}
	if err := set("lateness_histogram", &m.LatenessHist); err != nil {
		return err
	}
	for i := range m.Phases {
		for j := range m.Phases[i].Workloads {
			w := &m.Phases[i].Workloads[j]
			at := fmt.Sprintf("phases[%d].workloads[%d].", i, j)
			for _, f := range []struct {
				name string
				dst  *string
			}{{"histogram", &w.Histogram}, {"service_histogram", &w.ServiceH},
				{"first_message_histogram", &w.FirstMessageH}, {"connect_histogram", &w.ConnectH}} {
				if err := set(at+f.name, f.dst); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func decodeCounted(side, path, s string, count int64) (*hdrhistogram.Histogram, error) {
	h, err := DecodeHistogram(s)
	if err != nil {
		return nil, fmt.Errorf("result: merge: %s: %s: %w", side, path, err)
	}
	if n := h.TotalCount(); n != count {
		return nil, fmt.Errorf("result: merge: %s: %s holds %d samples, its summary counts %d", side, path, n, count)
	}
	return h, nil
}

func mergeHist(path, a string, countA int64, b string, countB int64) (string, Summary, error) {
	ha, err := decodeCounted("a", path, a, countA)
	if err != nil {
		return "", Summary{}, err
	}
	hb, err := decodeCounted("b", path, b, countB)
	if err != nil {
		return "", Summary{}, err
	}
	if a == "" && b == "" {
		return "", Summary{}, nil
	}
	if dropped := ha.Merge(hb); dropped > 0 {
		return "", Summary{}, fmt.Errorf("result: merge: %s: %d values dropped", path, dropped)
	}
	s, err := EncodeHistogram(ha)
	if err != nil {
		return "", Summary{}, fmt.Errorf("result: merge: %s: %w", path, err)
	}
	return s, Summarize(ha), nil
}

// PoolLatency merges one workload's latency histograms in one phase over one
// side's rounds; a repeated result counts once.
func PoolLatency(rs []*Result, phase, workload string) (*hdrhistogram.Histogram, error) {
	return PoolMetric(rs, phase, workload, "") // session.go
}

// PoolServices merges one side's stack services as Merge does; nil when none had one.
func PoolServices(rs []*Result) []Service {
	var acc *Stack
	seen := map[*Result]bool{}
	for _, r := range rs {
		if r == nil || r.Stack == nil || seen[r] {
			continue
		}
		seen[r] = true
		b := &Stack{Services: slices.Clone(r.Stack.Services)}
		if acc == nil {
			acc = b
			continue
		}
		acc = mergeStack(acc, b)
	}
	if acc == nil {
		return nil
	}
	return acc.Services
}

func mergeStack(a, b *Stack) *Stack {
	if b == nil {
		return a // already a copy
	}
	if a == nil {
		a = &Stack{}
	}
	for _, sb := range b.Services {
		i := slices.IndexFunc(a.Services, func(s Service) bool { return s.Name == sb.Name })
		if i < 0 {
			a.Services = append(a.Services, sb)
			continue
		}
		s := &a.Services[i]
		if n := s.Samples + sb.Samples; n > 0 {
			s.CPUAvgPct = (s.CPUAvgPct*float64(s.Samples) + sb.CPUAvgPct*float64(sb.Samples)) / float64(n)
		}
		s.Samples += sb.Samples
		s.CPUPeakPct = max(s.CPUPeakPct, sb.CPUPeakPct)
		s.MemPeakBytes = max(s.MemPeakBytes, sb.MemPeakBytes)
	}
	return a
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

func phaseNames(r *Result) []string {
	names := make([]string, len(r.Phases))
	for i, p := range r.Phases {
		names[i] = p.Name
	}
	return names
}

func workloadNames(p *Phase) []string {
	names := make([]string, len(p.Workloads))
	for i, w := range p.Workloads {
		names[i] = w.Name
	}
	return names
}

func (r *Result) clone() *Result {
	c := *r
	c.Unusable = slices.Clone(r.Unusable)
	c.NotMeasured = slices.Clone(r.NotMeasured)
	c.Synthetic = slices.Clone(r.Synthetic)
	c.Warmup.Failures = maps.Clone(r.Warmup.Failures)
	if r.Round != nil {
		rd := *r.Round
		c.Round = &rd
	}
	if r.Scenario.Thresholds != nil {
		c.Scenario.Thresholds = make(map[string]Thr, len(r.Scenario.Thresholds))
		for k, t := range r.Scenario.Thresholds {
			if t.ErrorRate != nil {
				e := *t.ErrorRate
				t.ErrorRate = &e
			}
			c.Scenario.Thresholds[k] = t
		}
	}
	c.Phases = slices.Clone(r.Phases)
	for i := range c.Phases {
		p := &c.Phases[i]
		p.Workloads = slices.Clone(p.Workloads)
		for j := range p.Workloads {
			p.Workloads[j].Failures = maps.Clone(p.Workloads[j].Failures)
		}
	}
	if r.Steal != nil {
		st := *r.Steal
		if st.Stack != nil {
			sc := *st.Stack
			st.Stack = &sc
		}
		c.Steal = &st
	}
	if r.Stack != nil {
		s := *r.Stack
		s.Services = slices.Clone(s.Services)
		c.Stack = &s
	}
	return &c
}
