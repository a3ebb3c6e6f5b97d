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

// Calibrate computes a calibration (noise.json) from A/A pairs of rounds:
// base[i] and head[i] ran the same checkout, in ABBA order, as a gate
// runs them. For every judged and recover phase, workload and percentile
// that has an order-statistics bound in every round, the entry is the
// sample sd of the pairs' log ratios ln(head_i/base_i), with pairs − 1
// degrees of freedom. Machine, topology and hash are head[0]'s; every
// result must share them (else the calibration would mix machines). It
// needs at least 2 pairs (10 or more make a useful one: the entries' t
// quantile with 9 df is 2.26). date is when it finished.
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
				q := quantileOf(metric)
				logs := make([]float64, 0, len(head))
				fewest := int64(math.MaxInt64)
				for i := range head {
					if bs[i].h == nil || hs[i].h == nil {
						break
					}
					if _, ok, _ := logSE(bs[i].h, q, z); !ok {
						break
					}
					if _, ok, _ := logSE(hs[i].h, q, z); !ok {
						break
					}
					b := max(result.Quantile(bs[i].h, q), 1)
					h := max(result.Quantile(hs[i].h, q), 1)
					logs = append(logs, math.Log(float64(h)/float64(b)))
					fewest = min(fewest, bs[i].h.TotalCount(), hs[i].h.TotalCount())
				}
				if len(logs) < len(head) {
					continue // a round without a bound for this percentile
				}
				n.Entries = append(n.Entries, NoiseEntry{Phase: p.Name, Workload: name, Metric: metric,
					SD: round6(stddev(logs, mean(logs))), DF: len(logs) - 1, Successes: fewest})
			}
		}
	}
	return n, nil
}

// Detectable is the smallest slowdown (a ratio head/base) a gate of R
// paired rounds on the calibrated machine calls a regression with
// probability power (e.g. 0.8), at tolerance τ and confidence conf:
// exp(ln(1+τ) + t_{R−1}·sd/√R + z_power·sd/√R), taking the rounds'
// spread to be the calibrated sd. R = 1: the calibration stands for the
// spread (its own df).
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
