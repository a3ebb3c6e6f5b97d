package rounds

import (
	"fmt"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// The protected side sets the bar (design rule 16). On a gate with a base
// side the scenario — its load, thresholds and ceilings — is base's file
// by default: the change being judged cannot loosen its own check. Head's
// version of the file, where it differs, is shown beside it (PolicyChanges)
// and not applied; --scenario-from head applies it, and is unsafe for a
// required check. A scenario that base does not have is judged by head's
// file, and the report says so.

// PolicyChanges says, one line each, where head's scenario sets another
// bar than base's: a threshold of a workload, a ceiling, the load itself
// (its hash), a workload added or removed. Empty when they agree.
func PolicyChanges(base, head *scenario.Scenario) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	bw := map[string]scenario.Workload{}
	for _, w := range base.Workloads {
		bw[w.Name] = w
	}
	hw := map[string]bool{}
	for _, h := range head.Workloads {
		hw[h.Name] = true
		b, ok := bw[h.Name]
		if !ok {
			add("head adds workload %s", h.Name)
			continue
		}
		for _, d := range []struct {
			name string
			b, h time.Duration
		}{{"p50", b.Thresholds.P50, h.Thresholds.P50}, {"p90", b.Thresholds.P90, h.Thresholds.P90},
			{"p95", b.Thresholds.P95, h.Thresholds.P95}, {"p99", b.Thresholds.P99, h.Thresholds.P99},
			{"p999", b.Thresholds.P999, h.Thresholds.P999}} {
			if d.b != d.h {
				add("head changes %s threshold of %s %s → %s", d.name, h.Name, durationOrNone(d.b), durationOrNone(d.h))
			}
		}
		if b.Thresholds.ErrorRate != h.Thresholds.ErrorRate {
			add("head changes error_rate threshold of %s %s → %s", h.Name, rateOrNone(b.Thresholds.ErrorRate), rateOrNone(h.Thresholds.ErrorRate))
		}
	}
	for _, b := range base.Workloads {
		if !hw[b.Name] {
			add("head removes workload %s", b.Name)
		}
	}
	bc, hc := base.Ceilings, head.Ceilings
	if bc.Rate != hc.Rate {
		add("head changes ceilings.rate %v → %v req/s", bc.Rate, hc.Rate)
	}
	if bc.Duration != hc.Duration {
		add("head changes ceilings.duration %v → %v", bc.Duration, hc.Duration)
	}
	if bc.InFlight != hc.InFlight {
		add("head changes ceilings.in_flight %d → %d", bc.InFlight, hc.InFlight)
	}
	if bc.Timeout != hc.Timeout {
		add("head changes ceilings.timeout %v → %v", bc.Timeout, hc.Timeout)
	}
	if bc.Drain != hc.Drain {
		add("head changes ceilings.drain %v → %v", bc.Drain, hc.Drain)
	}
	if bc.MaxBody != hc.MaxBody {
		add("head changes ceilings.max_body %s → %s", scenario.FormatBytes(bc.MaxBody), scenario.FormatBytes(hc.MaxBody))
	}
	if base.Hash != head.Hash {
		add("head changes the load (scenario hash %s → %s)", short(trimHash(base.Hash)), short(trimHash(head.Hash)))
	}
	return out
}

func trimHash(h string) string {
	if len(h) > 7 && h[:7] == "sha256:" {
		return h[7:]
	}
	return h
}

func durationOrNone(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}

func rateOrNone(r float64) string {
	if r < 0 {
		return "none"
	}
	return fmt.Sprintf("%g%%", r*100)
}
