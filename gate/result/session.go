package result

import (
	"fmt"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func (w *Workload) IsSession() bool {
	return w.FirstMessageMS != nil || w.ConnectMS != nil
}

func (w *Workload) mergeSession(b *Workload, at string, g *histAcc) error {
	if !w.IsSession() && !b.IsSession() {
		return nil
	}
	w.Cancelled += b.Cancelled
	w.MessagesReceived += b.MessagesReceived
	var err error
	w.FirstMessageH, w.FirstMessageMS, err = g.mergeOptional(at+"first_message_histogram", w.FirstMessageH, w.FirstMessageMS, b.FirstMessageH, b.FirstMessageMS)
	if err != nil {
		return err
	}
	w.ConnectH, w.ConnectMS, err = g.mergeOptional(at+"connect_histogram", w.ConnectH, w.ConnectMS, b.ConnectH, b.ConnectMS)
	return err
}

func (g *histAcc) mergeOptional(path, a string, sa *Summary, b string, sb *Summary) (string, *Summary, error) {
	ca, cb := int64(0), int64(0)
	if sa != nil {
		ca = sa.Count
	}
	if sb != nil {
		cb = sb.Count
	}
	h, s, err := g.merge(path, a, ca, b, cb)
	if err != nil {
		return "", nil, err
	}
	if h == "" {
		h = a
		if h == "" {
			h = b
		}
	}
	return h, &s, nil
}

func (w *Workload) validateSession(at string, check func(path, hist, sumPath string, count int64) error) error {
	for _, x := range []struct {
		name, hist, sum string
		s               *Summary
	}{
		{"first_message_histogram", w.FirstMessageH, "first_message_ms", w.FirstMessageMS},
		{"connect_histogram", w.ConnectH, "connect_ms", w.ConnectMS},
	} {
		switch {
		case x.s == nil && x.hist != "":
			return fmt.Errorf("%s%s without %s%s", at, x.name, at, x.sum)
		case x.s != nil:
			if err := check(at+x.name, x.hist, at+x.sum, x.s.Count); err != nil {
				return err
			}
		}
	}
	if w.Cancelled < 0 || w.Cancelled > w.Succeeded {
		return fmt.Errorf("%scancelled is %d, outside 0..succeeded (%d)", at, w.Cancelled, w.Succeeded)
	}
	if w.MessagesReceived < 0 {
		return fmt.Errorf("%smessages_received is %d, below 0", at, w.MessagesReceived)
	}
	return nil
}

// Timed is how many successes carry a latency sample: all but cancelled sessions.
func (w *Workload) Timed() int64 { return w.Succeeded - w.Cancelled }

// Metric prefixes of the session percentiles ("first_message_p95", "connect_p99").
const (
	FirstMessagePrefix = "first_message_"
	ConnectPrefix      = "connect_"
)

// MetricHistogram decodes the histogram metric is judged on and n, the count it must hold.
func (w *Workload) MetricHistogram(metric string) (h *hdrhistogram.Histogram, n int64, err error) {
	switch {
	case strings.HasPrefix(metric, FirstMessagePrefix):
		if w.FirstMessageMS != nil {
			n = w.FirstMessageMS.Count
		}
		h, err = DecodeHistogram(w.FirstMessageH)
	case strings.HasPrefix(metric, ConnectPrefix):
		if w.ConnectMS != nil {
			n = w.ConnectMS.Count
		}
		h, err = DecodeHistogram(w.ConnectH)
	default:
		n = w.Timed()
		h, err = w.LatencyHistogram()
	}
	return h, n, err
}

func PoolMetric(rs []*Result, phase, workload, metric string) (*hdrhistogram.Histogram, error) {
	acc := NewHistogram()
	seen := map[*Result]bool{}
	for i, r := range rs {
		if r == nil || seen[r] {
			continue
		}
		seen[r] = true
		w := r.PhaseNamed(phase).Workload(workload)
		if w == nil {
			continue
		}
		h, _, err := w.MetricHistogram(metric)
		if err != nil {
			return nil, fmt.Errorf("result: pool: round %d: %s/%s: histogram: %w", i+1, phase, workload, err)
		}
		if dropped := acc.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("result: pool: round %d: %s/%s: %d values dropped", i+1, phase, workload, dropped)
		}
	}
	return acc, nil
}
