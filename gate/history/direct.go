package history

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Direct is a paired gate of the last entry's commit straight against the
// Since entry's commit (Options.Direct): its comparisons, not the chain,
// decide the cumulative rule, since a chain's interval widens like √k.
type Direct struct {
	Base      string  `json:"base"`      // the Since entry's commit
	Head      string  `json:"head"`      // the last entry's commit
	Tolerance float64 `json:"tolerance"` // the gate's own, from the base side's scenario
	Steps     []Step  `json:"-"`         // one per latency comparison; Series.Direct
}

// DirectFromGate is the direct gate of o's head against its base.
func DirectFromGate(o rounds.Outcome) (Direct, error) {
	if o.Base.Commit == "" || o.Head.Commit == "" {
		return Direct{}, fmt.Errorf("history: the direct gate names no base or head commit")
	}
	d := Direct{Base: o.Base.Commit, Head: o.Head.Commit, Tolerance: o.Verdict.Tolerance}
	for _, wv := range o.Verdict.Workloads {
		for _, c := range wv.Comparisons {
			if s, ok := stepOf(c, o.Verdict.Confidence); ok {
				d.Steps = append(d.Steps, s)
			} else if c.Metric != verdict.MetricErrorRate {
				// Not measured or without an interval: no ratio, but the gate's call stands.
				d.Steps = append(d.Steps, Step{Phase: c.Phase, Workload: c.Workload, Metric: c.Metric, Value: c.Value, Rounds: c.Rounds})
			}
		}
	}
	return d, nil
}

// check refuses a direct gate of other commits than the cumulative change's.
func (d *Direct) check(c Chain, since int) error {
	from, to := c.Entries[since].Commit, c.Entries[len(c.Entries)-1].Commit
	if !sameCommit(d.Base, from) || !sameCommit(d.Head, to) {
		return fmt.Errorf("history: the direct gate ran %s against %s, but the cumulative change is the last entry %s since %s",
			result.ShortHash(d.Head), result.ShortHash(d.Base), result.ShortHash(to), result.ShortHash(from))
	}
	return nil
}

func (d *Direct) step(k Key) *Step {
	if d == nil {
		return nil
	}
	for _, s := range d.Steps {
		if s.Key() == k {
			return &s
		}
	}
	return nil
}
