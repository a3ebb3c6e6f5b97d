package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Options set how a history is read.
type Options struct {
	Since      string  // the commit the cumulative change is measured from ("": the first entry)
	Tolerance  float64 // of the cumulative change (0: DefaultTolerance)
	Confidence float64 // of the cumulative intervals (0: 95%)
	Detect     DetectOptions
	// Direct, when set, is the last entry gated straight against Since's
	// commit: its calls decide the cumulative rule; the chain stays the trend.
	Direct *Direct
}

// Analysis is a history read: every series with its chain, change and change points.
type Analysis struct {
	Scenario   string        `json:"scenario"`
	Since      int           `json:"since"` // the entry cumulative changes are measured from
	Tolerance  float64       `json:"tolerance"`
	Confidence float64       `json:"confidence"`
	Detect     DetectOptions `json:"detect"`
	Direct     *Direct       `json:"direct,omitempty"` // the direct gate, when one decides
	Chain      Chain         `json:"-"`
	Series     []Series      `json:"series"`
}

// Series is one workload's percentile over the history.
type Series struct {
	Key          Key           `json:"key"`
	Points       []Point       `json:"points"`           // one per entry, in order
	Total        Change        `json:"total"`            // from the Since entry to the last, chained
	Direct       *Step         `json:"direct,omitempty"` // the direct gate's comparison of the same change
	Rule         verdict.Value `json:"rule"`             // the cumulative rule's call: Direct's, else Total's
	ChangePoints []ChangePoint `json:"change_points"`    // over the entries' absolute values
}

// Point is one entry of a series.
type Point struct {
	Entry   int       `json:"entry"`
	Commit  string    `json:"commit"`
	Date    time.Time `json:"date"`
	Machine string    `json:"machine"` // host, and CPU model when known
	// AbsoluteMS is the entry's own percentile over its rounds, on its machine only.
	AbsoluteMS  float64      `json:"absolute_ms"`
	Count       int64        `json:"count"`
	Step        *Step        `json:"step,omitempty"`         // the link from the previous entry
	Cumulative  Change       `json:"cumulative"`             // from the Since entry
	ChangePoint *ChangePoint `json:"change_point,omitempty"` // a level shift begins here
}

// Analyze reads c per series: links, change since opt.Since, and change points of absolute
// percentiles (not of cumulative levels, whose random walk would split falsely).
func Analyze(c Chain, opt Options) (Analysis, error) {
	a := Analysis{Chain: c, Tolerance: cmp.Or(opt.Tolerance, DefaultTolerance),
		Confidence: cmp.Or(opt.Confidence, verdict.DefaultConfidence), Detect: opt.Detect.withDefaults()}
	if len(c.Entries) == 0 {
		return a, nil
	}
	a.Scenario = c.Entries[len(c.Entries)-1].Result.Scenario.Name
	if opt.Since != "" {
		if a.Since = c.Index(opt.Since); a.Since < 0 {
			return a, fmt.Errorf("history: since %s: no entry of that commit", opt.Since)
		}
	}
	if opt.Direct != nil {
		if err := opt.Direct.check(c, a.Since); err != nil {
			return a, err
		}
		a.Direct = opt.Direct
	}
	for _, k := range c.seriesKeys() {
		s, err := c.series(k, a)
		if err != nil {
			return a, err
		}
		a.Series = append(a.Series, s)
	}
	return a, nil
}

func (c Chain) seriesKeys() []Key {
	ks := c.Keys()
	for _, e := range c.Entries {
		p := e.Result.JudgedPhase()
		if p == nil {
			continue
		}
		for _, w := range p.Workloads {
			if k := (Key{p.Name, w.Name, verdict.MetricP95}); !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
	}
	slices.SortFunc(ks, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Phase, b.Phase), cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Metric, b.Metric))
	})
	return ks
}

func (c Chain) series(k Key, a Analysis) (Series, error) {
	s := Series{Key: k, ChangePoints: []ChangePoint{}}
	var logs []float64
	var at []int // the point of each log value
	for i, e := range c.Entries {
		p := Point{Entry: i, Commit: e.Commit, Date: e.Date, Machine: machine(e.Result.Machine)}
		ms, n, err := absolute(e.Result, k)
		if err != nil {
			return s, fmt.Errorf("history: entry %s: %s: %w", result.ShortHash(e.Commit), k, err)
		}
		p.AbsoluteMS, p.Count = ms, n
		if st, ok := c.Link(i, k); ok {
			p.Step = &st
		}
		if i >= a.Since {
			p.Cumulative = c.Cumulative(k, a.Since, i, a.Confidence, a.Tolerance)
		} else {
			p.Cumulative = Change{Key: k, From: a.Since, To: i, Value: verdict.NotMeasured}
		}
		if n > 0 && ms > 0 {
			logs = append(logs, math.Log(ms))
			at = append(at, i)
		}
		s.Points = append(s.Points, p)
	}
	s.Total = c.Cumulative(k, a.Since, len(c.Entries)-1, a.Confidence, a.Tolerance)
	s.Rule = s.Total.Value
	if s.Direct = a.Direct.step(k); s.Direct != nil {
		s.Rule = s.Direct.Value
	}
	for _, cp := range Detect(logs, a.Detect) {
		cp.Index = at[cp.Index]
		s.ChangePoints = append(s.ChangePoints, cp)
	}
	for i := range s.ChangePoints {
		s.Points[s.ChangePoints[i].Index].ChangePoint = &s.ChangePoints[i]
	}
	return s, nil
}

func absolute(r *result.Result, k Key) (float64, int64, error) {
	w := r.PhaseNamed(k.Phase).Workload(k.Workload)
	if w == nil {
		return 0, 0, nil
	}
	q, ok := verdict.Quantile(k.Metric)
	if !ok {
		return 0, 0, fmt.Errorf("metric %q is not a latency percentile", k.Metric)
	}
	h, n, err := w.MetricHistogram(k.Metric)
	if err != nil || n == 0 {
		return 0, 0, err
	}
	return float64(result.Quantile(h, q)) / 1000, h.TotalCount(), nil
}

func machine(m result.Machine) string {
	if m.CPUModel == "" {
		return m.Host
	}
	return m.Host + " · " + m.CPUModel
}

// Value is regression if a series' cumulative rule calls one (Series.Rule) or its level rose
// past tolerance after Since.
func (a Analysis) Value() verdict.Value {
	for _, s := range a.Series {
		if s.Rule == verdict.Regression {
			return verdict.Regression
		}
		for _, cp := range s.ChangePoints {
			if cp.Index > a.Since && cp.Shift > math.Log1p(a.Tolerance) {
				return verdict.Regression
			}
		}
	}
	return verdict.Pass
}
