// Package counted reads what the services of the stack counted themselves
// ("counted by the service", issue 13): for each count: of a scenario, a
// Prometheus counter scraped in the text exposition format (parsed by
// github.com/prometheus/common/expfmt) at the start of every phase and
// once after the drain, so that each phase's increase can be set beside
// what the generator sent in it.
//
// The reads are made on the run's clock, at the phases' scheduled
// boundaries, while the load goes on: a request in flight at a boundary
// can be counted in the phase next to the one that sent it (at most the
// requests in flight then). The total, from the first phase's start to
// after the drain, has no inner boundary. Warm-up requests are sent before
// the first read and are in no span (measurement rule 7).
//
// A counter that went down between two reads, or a page whose
// process_start_time_seconds changed (the service restarted), is a reset:
// the span says so and is not measured; nothing is subtracted. Without
// that gauge, a restart after which the counter grew past its earlier
// value cannot be seen.
// A read that failed leaves the spans next to it not measured, saying why.
package counted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/internal/stackget"
)

// Bounds of one read.
const (
	ReadTimeout = 2 * time.Second
	MaxBytes    = 8 << 20 // of a metrics page
	MaxSeries   = 10000   // matching series summed
)

// ErrExposition is wrapped by every error of Decode about what a service
// sent (as opposed to not reaching it).
var ErrExposition = errors.New("metrics")

// Reading is the value of a selector at one moment: the sum over the
// series it matched, and each series' value (for reset detection).
type Reading struct {
	Value  float64
	Series map[string]float64 // by the series' labels, sorted, as name="value",...
	// Started is the page's process_start_time_seconds (0 when it has
	// none): a change between two reads is a restart.
	Started float64
}

// startMetric is the gauge every Prometheus client exposes: when its
// process started.
const startMetric = "process_start_time_seconds"

// Decode parses a metrics page in the text exposition format and reads sel
// from it: the sum of the series of metric sel.Name whose labels include
// sel.Labels. The metric must be a counter (or untyped) and every matched
// value finite and >= 0. A metric absent from the page reads 0 with no
// series (a counter not yet incremented is often not exposed at all).
func Decode(r io.Reader, sel scenario.Selector) (Reading, error) {
	lr := &io.LimitedReader{R: r, N: MaxBytes + 1}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(lr)
	if lr.N <= 0 {
		return Reading{}, fmt.Errorf("%w: the page is larger than %d bytes", ErrExposition, MaxBytes)
	}
	if err != nil {
		return Reading{}, fmt.Errorf("%w: not the Prometheus text format: %v", ErrExposition, err)
	}
	rd := Reading{Series: map[string]float64{}}
	if st, ok := fams[startMetric]; ok && st.GetType() == dto.MetricType_GAUGE && len(st.GetMetric()) == 1 {
		if v := st.GetMetric()[0].GetGauge().GetValue(); v > 0 && !math.IsInf(v, 0) {
			rd.Started = v
		}
	}
	mf, ok := fams[sel.Name]
	if !ok {
		return rd, nil
	}
	switch mf.GetType() {
	case dto.MetricType_COUNTER, dto.MetricType_UNTYPED:
	default:
		return Reading{}, fmt.Errorf("%w: %s is a %s, not a counter", ErrExposition, sel.Name, strings.ToLower(mf.GetType().String()))
	}
	for _, m := range mf.GetMetric() {
		if !matches(m, sel) {
			continue
		}
		v := m.GetCounter().GetValue()
		if mf.GetType() == dto.MetricType_UNTYPED {
			v = m.GetUntyped().GetValue()
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return Reading{}, fmt.Errorf("%w: %s has the value %v, not a count", ErrExposition, sel.Name, v)
		}
		key := seriesKey(m)
		if _, dup := rd.Series[key]; dup {
			return Reading{}, fmt.Errorf("%w: %s{%s} is exposed twice", ErrExposition, sel.Name, key)
		}
		if len(rd.Series) == MaxSeries {
			return Reading{}, fmt.Errorf("%w: %s matches more than %d series", ErrExposition, sel, MaxSeries)
		}
		rd.Series[key] = v
		rd.Value += v
	}
	return rd, nil
}

// matches: m has every label of sel with its value; as in PromQL, a
// label="" matches a series without that label.
func matches(m *dto.Metric, sel scenario.Selector) bool {
	for _, want := range sel.Labels {
		got := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == want.Name {
				got = l.GetValue()
				break
			}
		}
		if got != want.Value {
			return false
		}
	}
	return true
}

func seriesKey(m *dto.Metric) string {
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Scrape gets http://addr+path within ReadTimeout and Decodes sel from it.
// addr is the IP:port the engine gave for a service of the stack the
// caller started: the GET (internal/stackget) connects there and nowhere
// else, through no proxy, refuses a redirect and reads at most MaxBytes.
func Scrape(ctx context.Context, addr, path string, sel scenario.Selector) (Reading, error) {
	page, err := stackget.Get(ctx, addr, path, stackget.Request{Accept: "text/plain;version=0.0.4", MaxBytes: MaxBytes, Timeout: ReadTimeout})
	if err != nil {
		return Reading{}, fmt.Errorf("counted: %w", err)
	}
	if ct := page.ContentType; ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil && mt != "text/plain" {
			return Reading{}, fmt.Errorf("%w: GET %s answered %s, not the text format (text/plain)", ErrExposition, path, mt)
		}
	}
	rd, err := Decode(bytes.NewReader(page.Body), sel)
	if err != nil {
		return Reading{}, fmt.Errorf("counted: GET %s: %w", path, err)
	}
	return rd, nil
}

// increase is after − before and whether the counter reset in between:
// the process restarted (its start time changed), some series went down,
// or one that was there is gone.
func increase(before, after Reading) (inc float64, reset bool) {
	if before.Started != 0 && after.Started != 0 && before.Started != after.Started {
		return 0, true
	}
	for k, v := range before.Series {
		a, ok := after.Series[k]
		if !ok || a < v {
			return 0, true
		}
	}
	return after.Value - before.Value, false
}
