package load

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// result turns the recorder's cells into a result, with Config's stated fields.
func (e *engine) result(startedAt, finishedAt time.Time) *result.Result {
	sc := e.cfg.Scenario
	r := e.rec
	r.mu.Lock()
	defer r.mu.Unlock()

	target := e.cfg.TargetLabel
	if target == "" {
		target = describe(e.cfg.Target.URL)
	}
	var round *result.Round
	if e.cfg.Round != nil {
		rd := *e.cfg.Round
		round = &rd
	}
	res := &result.Result{
		Schema:      result.Schema,
		Scenario:    scenarioInfo(sc),
		StartedAt:   startedAt.UTC(),
		FinishedAt:  finishedAt.UTC(),
		Machine:     e.cfg.Machine,
		Topology:    e.cfg.Topology,
		Target:      target,
		Side:        e.cfg.Side,
		Commit:      e.cfg.Commit,
		Round:       round,
		Late:        r.late,
		LateAfterMS: ms(sc.LateAfter),
		Stalled:     r.stalled.Seconds(),
		LatenessMS:  result.Summarize(r.lateness),
		Precision:   result.Precision,
		NotMeasured: []string{},
	}
	if h, err := result.EncodeHistogram(r.lateness); err == nil {
		res.LatenessHist = h
	}
	e.addSegments(res)
	checkBalance(res)
	res.WallBoundS = (e.sched.Duration() + sc.Drain + WallSlack).Seconds()
	res.Generator = res.GeneratorBehind() // as a decoded result has it
	res.NotMeasured = append(res.NotMeasured,
		"latency of failed requests (failures are counted by class, not timed)",
		"response bodies (drained and dropped, not checked)",
	)
	return res
}

// addSegments adds the recorder's cells to res by segment (r.mu held).
func (e *engine) addSegments(res *result.Result) {
	sc, r := e.cfg.Scenario, e.rec
	// A measured cell without a success still carries (empty) histograms.
	empty, _ := result.EncodeHistogram(result.NewHistogram())
	for s, seg := range e.sched.Segments {
		cells := r.cells[s*r.workloads : (s+1)*r.workloads]
		if seg.Warmup {
			res.Warmup.DurationS = seg.Duration.Seconds()
			for _, c := range cells {
				res.Warmup.Offered += c.offered
				res.Warmup.Recorded += c.succeeded + c.failed + c.abandoned
				res.Warmup.AddFailures(c.failures)
			}
			continue
		}
		ph := sc.Phases[seg.Phase]
		p := result.Phase{
			Name: ph.Name, Pattern: ph.Pattern, Judged: ph.Judged, Recover: ph.Name == "recover",
			DurationS: seg.Duration.Seconds(),
		}
		for w, c := range cells {
			wr := workloadResult(sc.Workloads[w].Name, c, seg.Duration, empty)
			e.sess.fill(s*r.workloads+w, &wr) // ws sessions: session.go
			res.Offered += c.offered
			res.Recorded += c.succeeded + c.failed + c.abandoned
			p.Workloads = append(p.Workloads, wr)
		}
		res.Phases = append(res.Phases, p)
	}
}

// workloadResult is one workload's cell; empty is the encoded empty histogram.
func workloadResult(name string, c cell, d time.Duration, empty string) result.Workload {
	wr := result.Workload{
		Name: name, Offered: c.offered, Succeeded: c.succeeded,
		Failed: c.failed, Abandoned: c.abandoned, Late: c.late, Completed: c.completed,
		Failures:  copyCounts(c.failures),
		LatencyMS: result.Summarize(c.lat),
		ServiceMS: result.Summarize(c.svc),
		Throughput: result.Throughput{
			CompletedPerS: perS(c.completed, d),
			OfferedPerS:   perS(c.offered, d),
		},
	}
	wr.Histogram, wr.ServiceH = empty, empty
	if c.lat != nil { // made at the cell's first success
		wr.Histogram, _ = result.EncodeHistogram(c.lat)
		wr.ServiceH, _ = result.EncodeHistogram(c.svc)
	}
	return wr
}

// checkBalance marks res unusable if an offered request went unrecorded.
func checkBalance(res *result.Result) {
	res.Usable = true
	if res.Offered != res.Recorded {
		res.Usable = false
		res.Unusable = append(res.Unusable, fmt.Sprintf("offered %d requests but recorded %d", res.Offered, res.Recorded))
	}
	if res.Warmup.Offered != res.Warmup.Recorded {
		res.Usable = false
		res.Unusable = append(res.Unusable, fmt.Sprintf("warm-up offered %d requests but recorded %d", res.Warmup.Offered, res.Warmup.Recorded))
	}
}

// pctThr is a session threshold in the results contract (nil: none set).
func pctThr(t scenario.SessionThresholds) *result.PctThr {
	if !t.Set() {
		return nil
	}
	return &result.PctThr{P50MS: ms(t.P50), P90MS: ms(t.P90), P95MS: ms(t.P95), P99MS: ms(t.P99), P999MS: ms(t.P999)}
}

func copyCounts(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func perS(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func scenarioInfo(sc *scenario.Scenario) result.Scenario {
	info := result.Scenario{
		Name: sc.Name, Hash: sc.Hash, File: sc.File, Scale: sc.Scale,
		MaxInFlight: sc.MaxInFlight, TimeoutMS: ms(sc.Timeout),
	}
	if info.Scale == 0 {
		info.Scale = 1
	}
	for _, w := range sc.Workloads {
		t := w.Thresholds
		thr := result.Thr{P50MS: ms(t.P50), P90MS: ms(t.P90), P95MS: ms(t.P95), P99MS: ms(t.P99), P999MS: ms(t.P999)}
		if t.HasErrorRate() {
			v := t.ErrorRate
			thr.ErrorRate = &v
			thr.ErrorRateDefault = t.ErrorRateDefault
		}
		thr.FirstMessage, thr.Connect = pctThr(t.FirstMessage), pctThr(t.Connect)
		if thr != (result.Thr{}) {
			if info.Thresholds == nil {
				info.Thresholds = map[string]result.Thr{}
			}
			info.Thresholds[w.Name] = thr
		}
	}
	return info
}
