package fault

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Recovering is how many recovery seconds the rule judges (verdict.RecoveringSeconds).
type Recovering func(seconds []result.Second, t result.RecoveryTargets) int

// Apply writes res.Faults and takes the requests due during each fault and its recovery out
// of their phases exactly (a count the phase does not hold is an error); a failed fault
// makes res unusable.
func (in *Injector) Apply(res *result.Result, recovering Recovering) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, err := range []error{in.err, in.overrun} {
		if err != nil && !slices.ContainsFunc(res.Unusable, func(u string) bool { return strings.Contains(u, err.Error()) }) {
			res.Usable = false
			res.Unusable = append(res.Unusable, err.Error())
		}
	}
	// A run that stopped early observed no recovery second.
	observedUntil := in.sc.TotalDuration()
	if res.Interrupted || in.err != nil || len(res.Phases) < len(in.sc.Phases) {
		observedUntil = 0
	}
	out := make([][]time.Duration, len(in.sc.Phases))
	for pi := range out {
		out[pi] = make([]time.Duration, len(in.sc.Workloads))
	}
	lat, svc := result.NewHistogram(), result.NewHistogram() // reused by record
	for _, st := range in.faults {
		rf := in.record(st, observedUntil, lat, svc)
		for _, pi := range slices.Sorted(maps.Keys(st.during)) {
			for wi, c := range st.during[pi] {
				out[pi][wi] += in.overlap(pi, st.started, st.ended, !st.isEnded)
				if err := in.takeOut(res, pi, wi, c); err != nil {
					return err
				}
			}
		}
		if st.isEnded && st.err == "" && observedUntil > 0 { // a run that stopped early is not judged: nothing to split
			for wi := range rf.Workloads {
				n := min(max(recovering(rf.Workloads[wi].Seconds, rf.Recovery), 0), len(st.seconds[wi]))
				if err := in.takeRecovering(res, st, wi, n, out, &rf.Workloads[wi], lat, svc); err != nil {
					return err
				}
			}
		}
		res.Faults = append(res.Faults, rf)
	}
	in.throughput(res, out)
	if len(in.faults) > 0 {
		res.NotMeasured = append(res.NotMeasured,
			"the requests due during a fault, and after it until each workload recovered, are not in their phase's numbers: the recovery rule judges them, the faults section counts them")
	}
	return nil
}

func (in *Injector) takeRecovering(res *result.Result, st *state, wi, n int, out [][]time.Duration, fw *result.FaultWorkload, lat, svc *hdrhistogram.Histogram) error {
	fw.RecoveringS = n
	cells := map[int]*cell{}
	cellAt := func(pi int) *cell {
		if cells[pi] == nil {
			cells[pi] = &cell{counts: result.Workload{Name: in.sc.Workloads[wi].Name}}
		}
		return cells[pi]
	}
	for _, s := range st.seconds[wi][:n] {
		for pi, d := range s.due {
			c := cellAt(pi)
			c.counts.Add(d.counts)
			if len(d.lat) > 0 && c.lat == nil {
				c.lat, c.svc = result.NewHistogram(), result.NewHistogram()
			}
			for i := range d.lat {
				_ = c.lat.RecordValue(d.lat[i]) // the engine's values are within the histogram's range
				_ = c.svc.RecordValue(d.svc[i])
			}
		}
		for pi, k := range s.done {
			cellAt(pi).counts.Completed += k
		}
	}
	to := st.ended + min(time.Duration(n)*time.Second, st.rec.Within)
	for _, pi := range slices.Sorted(maps.Keys(cells)) {
		if err := in.takeOut(res, pi, wi, cells[pi]); err != nil {
			return err
		}
	}
	for pi := range out {
		out[pi][wi] += in.overlap(pi, st.ended, to, false)
	}
	fw.Recovering = sumCells(slices.Collect(maps.Values(cells)), lat, svc)
	return nil
}

func (in *Injector) throughput(res *result.Result, out [][]time.Duration) {
	for pi, ds := range out {
		p := res.PhaseNamed(in.sc.Phases[pi].Name)
		if p == nil {
			continue
		}
		for wi, d := range ds {
			w := p.Workload(in.sc.Workloads[wi].Name)
			if d <= 0 || w == nil {
				continue
			}
			left := time.Duration(p.DurationS*float64(time.Second)) - d
			w.Throughput = result.Throughput{}
			if left > 0 {
				w.Throughput.CompletedPerS = float64(w.Completed) / left.Seconds()
				w.Throughput.OfferedPerS = float64(w.Offered) / left.Seconds()
			}
		}
	}
}

func (in *Injector) overlap(pi int, from, to time.Duration, open bool) time.Duration {
	start := in.sc.Warmup
	for i := 0; i < pi; i++ {
		start += in.sc.Phases[i].Duration
	}
	end := start + in.sc.Phases[pi].Duration
	lo, hi := max(start, from), min(end, to)
	if open {
		hi = end
	}
	return max(hi-lo, 0)
}

func (in *Injector) takeOut(res *result.Result, pi, wi int, c *cell) error {
	if c == nil {
		return nil
	}
	p := res.PhaseNamed(in.sc.Phases[pi].Name)
	if p == nil {
		return fmt.Errorf("fault: requests due during a fault in phase %s, which the result does not hold", in.sc.Phases[pi].Name)
	}
	w := p.Workload(in.sc.Workloads[wi].Name)
	if w == nil {
		return fmt.Errorf("fault: phase %s has no workload %s", p.Name, in.sc.Workloads[wi].Name)
	}
	if err := w.Sub(c.counts); err != nil {
		return fmt.Errorf("fault: phase %s: %w", p.Name, err)
	}
	if c.lat == nil {
		return nil
	}
	lat, err := result.EncodeHistogram(c.lat)
	if err != nil {
		return fmt.Errorf("fault: %s/%s: %w", p.Name, w.Name, err)
	}
	svc, err := result.EncodeHistogram(c.svc)
	if err != nil {
		return fmt.Errorf("fault: %s/%s: %w", p.Name, w.Name, err)
	}
	if w.Histogram, w.LatencyMS, err = result.SubtractHistogram(w.Histogram, lat); err != nil {
		return fmt.Errorf("fault: %s/%s: %w", p.Name, w.Name, err)
	}
	if w.ServiceH, w.ServiceMS, err = result.SubtractHistogram(w.ServiceH, svc); err != nil {
		return fmt.Errorf("fault: %s/%s: %w", p.Name, w.Name, err)
	}
	return nil
}

func (in *Injector) record(st *state, observedUntil time.Duration, lat, svc *hdrhistogram.Histogram) result.Fault {
	rf := result.Fault{
		Phase: in.sc.Phases[st.phase].Name, Action: st.f.Action, Service: st.f.Service,
		Containers: st.containers, PlannedAtS: st.f.At.Seconds(), PlannedForS: st.f.For.Seconds(),
		PlannedS: st.planned.Seconds(), Undo: st.undo, Error: st.err, ObservedUntilS: observedUntil.Seconds(),
		Recovery: targetsOf(st.rec), Workloads: []result.FaultWorkload{},
	}
	switch {
	case st.isStarted:
		rf.StartedS, rf.EndedS = st.started.Seconds(), st.ended.Seconds()
		if st.isApplied {
			rf.AppliedS, rf.UndoStartedS = st.applied.Seconds(), st.undoStarted.Seconds()
		}
	case rf.Error == "":
		rf.Error = "not injected: the run ended before its time"
	}
	for wi, w := range in.sc.Workloads {
		fw := result.FaultWorkload{Name: w.Name, During: during(st, wi, lat, svc), Seconds: make([]result.Second, len(st.seconds[wi]))}
		fw.During.Name = ""
		for k, s := range st.seconds[wi] {
			end := st.ended + min(time.Duration(k+1)*time.Second, st.rec.Within)
			n := s.counts()
			fw.Seconds[k] = result.Second{Observed: st.isEnded && st.err == "" && end <= observedUntil,
				Succeeded: n.Succeeded, Failed: n.Failed,
				Failures: n.Failures, Over: maps.Clone(s.over), MaxMS: float64(s.maxUS) / 1000}
		}
		rf.Workloads = append(rf.Workloads, fw)
	}
	return rf
}

func during(st *state, wi int, lat, svc *hdrhistogram.Histogram) result.Workload {
	var cells []*cell
	for _, cs := range st.during {
		cells = append(cells, cs[wi])
	}
	return sumCells(cells, lat, svc)
}

func sumCells(cells []*cell, lat, svc *hdrhistogram.Histogram) result.Workload {
	w := result.Workload{Failures: map[string]int64{}}
	lat.Reset()
	svc.Reset()
	for _, c := range cells {
		if c == nil {
			continue
		}
		w.Add(c.counts)
		if c.lat != nil {
			lat.Merge(c.lat)
			svc.Merge(c.svc)
		}
	}
	w.LatencyMS, w.ServiceMS = result.Summarize(lat), result.Summarize(svc)
	w.Histogram, _ = result.EncodeHistogram(lat)
	w.ServiceH, _ = result.EncodeHistogram(svc)
	return w
}

func targetsOf(r scenario.Recovery) result.RecoveryTargets {
	t := result.RecoveryTargets{WithinS: r.Within.Seconds(),
		P50MS: ms(r.P50), P90MS: ms(r.P90), P95MS: ms(r.P95), P99MS: ms(r.P99), P999MS: ms(r.P999)}
	if r.HasErrorRate() {
		e := r.ErrorRate
		t.ErrorRate = &e
	}
	return t
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
