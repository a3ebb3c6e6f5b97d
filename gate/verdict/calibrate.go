package verdict

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/loadgate/loadgate/gate/result"
)

// CalibrationMetrics are the percentiles a calibration measures.
var CalibrationMetrics = []string{MetricP50, MetricP90, MetricP95, MetricP99, MetricP999}

// Calibrate computes noise.json from ≥ 2 A/A pairs of rounds of one checkout,
// machine and topology: per phase, workload and percentile, the sample sd of
// ln(head_i/base_i) with pairs − 1 df.
func Calibrate(base, head []*result.Result, date time.Time) (*Noise, error) {
	if err := checkHashes(base, head); err != nil {
		return nil, err
	}
	if rs := sidesUnusable(base, head); len(rs) > 0 {
		return nil, &UnusableError{Op: "calibrate", Notes: rs}
	}
	if len(head) < 2 {
		return nil, errors.New("calibrate: at least 2 pairs of rounds measure a spread")
	}
	ref := head[0]
	n := &Noise{Schema: NoiseSchema, Scenario: ref.Scenario.Name, Hash: ref.Scenario.Hash, Machine: ref.Machine,
		Topology: ref.Topology, Date: date.UTC(), Pairs: len(head), Entries: []NoiseEntry{}}
	for _, rs := range [][]*result.Result{base, head} {
		for i, r := range rs {
			if why := n.Match(r); why != "" {
				return nil, fmt.Errorf("calibrate: round %d has another %s than head round 1", i+1, why)
			}
		}
	}
	z := normQuantile(0.975)
	c := comparer{base: base, head: head, z: z}
	for _, p := range base[0].Phases {
		if !p.Judged && !p.Recover {
			continue
		}
		for _, name := range c.workloadNames(p.Name) {
			bs, err := c.rounds("base", base, p.Name, name, "")
			if err != nil {
				return nil, fmt.Errorf("calibrate: %w", err)
			}
			hs, err := c.rounds("head", head, p.Name, name, "")
			if err != nil {
				return nil, fmt.Errorf("calibrate: %w", err)
			}
			for _, metric := range CalibrationMetrics {
				logs, fewest, ok := pairLogs(bs, hs, quantileOf(metric), z)
				if !ok {
					continue // a round without a bound for this percentile
				}
				n.Entries = append(n.Entries, NoiseEntry{Phase: p.Name, Workload: name, Metric: metric,
					SD: round6(stddev(logs, mean(logs))), DF: len(logs) - 1, Successes: fewest})
			}
		}
	}
	return n, nil
}

// pairLogs is each pair's ln(head/base) of the q-percentile and the fewest
// successes; not ok when a round has no order-statistics bound.
func pairLogs(bs, hs []sideRound, q, z float64) (logs []float64, fewest int64, ok bool) {
	logs = make([]float64, 0, len(hs))
	fewest = int64(math.MaxInt64)
	for i := range hs {
		if bs[i].h == nil || hs[i].h == nil {
			return nil, 0, false
		}
		if _, ok, _ := logSE(bs[i].h, q, z); !ok {
			return nil, 0, false
		}
		if _, ok, _ := logSE(hs[i].h, q, z); !ok {
			return nil, 0, false
		}
		b := max(result.Quantile(bs[i].h, q), 1)
		h := max(result.Quantile(hs[i].h, q), 1)
		logs = append(logs, math.Log(float64(h)/float64(b)))
		fewest = min(fewest, bs[i].h.TotalCount(), hs[i].h.TotalCount())
	}
	return logs, fewest, true
}

// Detectable is the smallest slowdown a gate of R rounds calls a regression
// with probability power, taking the calibrated sd as the rounds' spread.
func (e NoiseEntry) Detectable(R int, tol, conf, power float64) float64 {
	if R < 1 {
		return math.Inf(1)
	}
	df := float64(R - 1)
	if R == 1 {
		df = float64(e.DF)
	}
	se := e.SD / math.Sqrt(float64(R))
	return math.Exp(math.Log1p(tol) + tQuantile(0.5+conf/2, df)*se + normQuantile(power)*se)
}
