package verdict

import (
	"math"

	"github.com/loadgate/loadgate/gate/result"
)

// LatenessExplainShare is the part of a change a generator's lateness must
// reach to explain it: lateness below a quarter of the change (or of the
// smallest change the comparison calls) cannot have made it, so a round
// behind its schedule by that little is still judged (issue 45).
const LatenessExplainShare = 0.25

// LatenessExplains says whether a lateness of latenessMS could account for a
// change of changeMS: it reaches LatenessExplainShare of the larger of
// |changeMS| and floorMS (the smallest change that would be called).
// latenessMS is taken at q' = (1+q)/2, not at q: a late send adds its
// lateness to its latency, and whichever sends are late, the latency at q
// moves by at most the service time's and the lateness's quantiles at q'
// (a union bound; at q itself only when the late sends are the slow ones).
func LatenessExplains(latenessMS, changeMS, floorMS float64) bool {
	return latenessMS > 0 && latenessMS >= LatenessBarMS(changeMS, floorMS)
}

// LatenessBarMS is the lateness that would explain changeMS (LatenessExplains).
func LatenessBarMS(changeMS, floorMS float64) float64 {
	return LatenessExplainShare * max(math.Abs(changeMS), floorMS)
}

// LatenessCheck is a behind-schedule round's lateness set against the change
// it shows in one cell, at the judged quantile.
type LatenessCheck struct {
	Phase      string  `json:"phase"`
	Workload   string  `json:"workload"`
	Metric     string  `json:"metric"`
	BaseMS     float64 `json:"base_ms"`     // the round's latency at Metric, base
	HeadMS     float64 `json:"head_ms"`     // … head
	Side       string  `json:"side"`        // whose lateness: the side that could fake the change ("base" or "head")
	LatenessMS float64 `json:"lateness_ms"` // Side's lateness at LatenessAt
	LatenessAt string  `json:"lateness_at"` // the lateness percentile read: the one at or above (1+q)/2 (LatenessExplains)
	BarMS      float64 `json:"bar_ms"`      // LatenessBarMS: what the lateness must reach to explain it
	Explains   bool    `json:"explains"`
}

// latenessAt is a summary's lateness at the first percentile it holds at or
// above q (nearest-rank, as the latency is), and that percentile's name.
func latenessAt(s result.Summary, q float64) (float64, string) {
	switch {
	case q <= 0.5:
		return s.P50, MetricP50
	case q <= 0.9:
		return s.P90, MetricP90
	case q <= 0.95:
		return s.P95, MetricP95
	case q <= 0.99:
		return s.P99, MetricP99
	}
	return s.P999, MetricP999
}

// checkLateness sets one round's lateness against its change at q: a
// slower head can be faked by head's lateness, a faster one by base's; a
// change within the tolerance τ could hide one behind either side's.
// behindB and behindH say which side fell behind its schedule (only a side
// behind is suspect); latB and latH are the lateness summaries, shareB and
// shareH the shares of sends late. Lateness is read at (1+q)/2
// (LatenessExplains); a side with more than (1−q)/2 of its sends late could
// move the quantile by itself, whatever its lateness quantiles say.
func checkLateness(baseMS, headMS, tolerance float64, latB, latH result.Summary, shareB, shareH, q float64, behindB, behindH bool) LatenessCheck {
	floor := tolerance * baseMS
	change := headMS - baseMS
	qq := (1 + q) / 2
	lb, lh, sb, sh := 0.0, 0.0, 0.0, 0.0
	_, at := latenessAt(latB, qq)
	if behindB {
		lb, _ = latenessAt(latB, qq)
		sb = shareB
	}
	if behindH {
		lh, _ = latenessAt(latH, qq)
		sh = shareH
	}
	side, l, share := "head", lh, sh
	switch {
	case change > floor:
	case -change > floor:
		side, l, share = "base", lb, sb
	case lb > lh:
		side, l, share = "base", lb, sb
	}
	return LatenessCheck{BaseMS: baseMS, HeadMS: headMS, Side: side, LatenessMS: l, LatenessAt: at,
		BarMS:    round6(LatenessBarMS(change, floor)),
		Explains: LatenessExplains(l, change, floor) || l > 0 && share >= (1-q)/2}
}

// lateShare is r's share of sends late (0 when nothing was offered).
func lateShare(r *result.Result) float64 {
	if r.Offered == 0 {
		return 0
	}
	return float64(r.Late) / float64(r.Offered)
}

// roundLateness checks every judged cell of round i (base[i], head[i]) at
// each metric judged; it returns the checks that explain, else the one whose
// lateness came nearest to its bar.
func (c *comparer) roundLateness(i int) (explains []LatenessCheck, nearest *LatenessCheck) {
	b, h := c.base[i], c.head[i]
	behindB, behindH := b.GeneratorBehind() != nil, h.GeneratorBehind() != nil
	thr := c.head[0].Scenario.Thresholds
	best := -1.0
	for _, p := range b.Phases {
		if !p.Judged && !p.Recover {
			continue
		}
		for _, w := range p.Workloads {
			hw := h.PhaseNamed(p.Name).Workload(w.Name)
			if hw == nil {
				continue
			}
			for _, metric := range c.metrics(thr[w.Name]) {
				q := quantileOf(metric)
				bh, _, err := w.MetricHistogram(metric)
				if err != nil || bh.TotalCount() == 0 {
					continue
				}
				hh, _, err := hw.MetricHistogram(metric)
				if err != nil || hh.TotalCount() == 0 {
					continue
				}
				ck := checkLateness(float64(result.Quantile(bh, q))/1000, float64(result.Quantile(hh, q))/1000,
					c.opt.Tolerance, b.LatenessMS, h.LatenessMS, lateShare(b), lateShare(h), q, behindB, behindH)
				ck.Phase, ck.Workload, ck.Metric = p.Name, w.Name, metric
				if ck.Explains {
					explains = append(explains, ck)
					continue
				}
				if r := ck.LatenessMS / max(ck.BarMS, 1e-9); r > best {
					best, nearest = r, &ck
				}
			}
		}
	}
	return explains, nearest
}
