package history

import (
	"math"

	"github.com/loadgate/loadgate/gate/rounds"
)

// Trend is a gate's head against a history: the change since Since chained with the gate's step.
type Trend struct {
	Key    Key
	Base   int    // the entry of the gate's base commit
	Head   Step   // the gate's step, base to head
	Change Change // from Since to the head (To is Base; Links counts the gate's step)
}

// HeadTrend is o's head on the series with a's largest change since a.Since; false if o's
// base is no entry since.
func (a Analysis) HeadTrend(o rounds.Outcome) (Trend, bool) {
	bi := a.Chain.Index(o.Base.Commit)
	if bi < 0 || bi < a.Since {
		return Trend{}, false
	}
	var best Trend
	found := false
	for _, wv := range o.Verdict.Workloads {
		for _, c := range wv.Comparisons {
			st, ok := stepOf(c, o.Verdict.Confidence)
			if !ok {
				continue
			}
			ch := a.Chain.Cumulative(st.Key(), a.Since, bi, a.Confidence, a.Tolerance)
			if !ch.Known {
				continue
			}
			m, se := logRatio(st)
			prior := (math.Log(ch.CIHigh) - math.Log(ch.Ratio)) / zOf(ch.Confidence)
			ch.Links++
			ch.setInterval(math.Log(ch.Ratio)+m, prior*prior+se*se, a.Tolerance)
			if !found || ch.Ratio > best.Change.Ratio {
				best, found = Trend{Key: st.Key(), Base: bi, Head: st, Change: ch}, true
			}
		}
	}
	return best, found
}
