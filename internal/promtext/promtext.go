// Package promtext keeps request counters by label values and serves them in the Prometheus
// text format for loadgate's servers (gate/stub, the demo api); gate/counted reads it back.
// A CounterVec is safe for concurrent use.
package promtext

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

// ContentType is the text exposition format's media type, version 0.0.4.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// MaxSeries bounds a CounterVec's series; past it values count as "other", so clients cannot grow it.
const MaxSeries = 1000

// CounterVec is a counter per combination of label values.
type CounterVec struct {
	name, help string
	labels     []string

	mu   sync.Mutex
	vals map[string]*series // key: the values joined by \xff
}

type series struct {
	values []string
	n      uint64
}

// NewCounterVec returns a counter named name with one label per labels entry. It panics on
// an invalid Prometheus name: names are constants.
func NewCounterVec(name, help string, labels ...string) *CounterVec {
	for _, n := range append([]string{name}, labels...) {
		if !validName(n) {
			panic(fmt.Sprintf("promtext: invalid metric or label name %q", n))
		}
	}
	return &CounterVec{name: name, help: help, labels: labels, vals: map[string]*series{}}
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// Inc adds one to the counter of values, one per label (missing ones are "", extra ones dropped).
func (c *CounterVec) Inc(values ...string) {
	vs := make([]string, len(c.labels))
	copy(vs, values)
	key := strings.Join(vs, "\xff")
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.vals[key]
	if !ok {
		if len(c.vals) >= MaxSeries {
			for i := range vs {
				vs[i] = "other"
			}
			key = strings.Join(vs, "\xff")
			s, ok = c.vals[key]
		}
		if !ok {
			s = &series{values: vs}
			c.vals[key] = s
		}
	}
	s.n++
}

// Value is the counter of values (0 when never incremented).
func (c *CounterVec) Value(values ...string) uint64 {
	vs := make([]string, len(c.labels))
	copy(vs, values)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.vals[strings.Join(vs, "\xff")]; ok {
		return s.n
	}
	return 0
}

func (c *CounterVec) family() *dto.MetricFamily {
	c.mu.Lock()
	list := make([]series, 0, len(c.vals))
	for _, s := range c.vals {
		list = append(list, *s)
	}
	c.mu.Unlock()
	sort.Slice(list, func(i, j int) bool {
		return strings.Join(list[i].values, "\xff") < strings.Join(list[j].values, "\xff")
	})
	mf := &dto.MetricFamily{Name: proto.String(c.name), Help: proto.String(c.help), Type: dto.MetricType_COUNTER.Enum()}
	for _, s := range list {
		m := &dto.Metric{Counter: &dto.Counter{Value: proto.Float64(float64(s.n))}}
		for i, l := range c.labels {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(l), Value: proto.String(s.values[i])})
		}
		mf.Metric = append(mf.Metric, m)
	}
	return mf
}

// Write writes cs in the text format, leaving out a CounterVec never incremented (no series yet).
func Write(w io.Writer, cs ...*CounterVec) error {
	for _, c := range cs {
		mf := c.family()
		if len(mf.Metric) == 0 {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return fmt.Errorf("promtext: %s: %w", c.name, err)
		}
	}
	return nil
}

// StartMetric is the gauge Handler adds, the process start in Unix seconds: readers see restarts by it.
const StartMetric = "process_start_time_seconds"

var started = float64(time.Now().UnixNano()) / 1e9

// Handler serves cs and StartMetric in the text format (GET and HEAD only).
func Handler(cs ...*CounterVec) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		if Write(w, cs...) != nil {
			return
		}
		_, _ = expfmt.MetricFamilyToText(w, &dto.MetricFamily{Name: proto.String(StartMetric),
			Help: proto.String("Start time of the process since unix epoch in seconds."), Type: dto.MetricType_GAUGE.Enum(),
			Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: proto.Float64(started)}}}})
	})
}
