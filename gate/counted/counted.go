// Package counted scrapes each scenario count: (a Prometheus counter) at
// every phase start and after the drain, beside what the generator sent; a
// reset or a failed read leaves a span not measured.
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

// ErrExposition is wrapped by Decode's errors about what a service sent (not about reaching it).
var ErrExposition = errors.New("metrics")

// Reading is a selector's value at one moment: the sum and each series'.
type Reading struct {
	Value   float64
	Series  map[string]float64 // by the series' labels, sorted, as name="value",...
	Started float64            // process_start_time_seconds (0: absent); a change is a restart
}

const startMetric = "process_start_time_seconds"

// Decode sums sel's series (counter or untyped, finite, >= 0) in a text-format page; an
// absent metric reads 0.
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

// matches: as in PromQL, label="" also matches a series without the label.
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

// Scrape GETs http://addr+path (addr only: no proxy, no redirect) and Decodes sel.
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

// increase is after − before, or reset if the process restarted or a series went down or
// vanished.
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
