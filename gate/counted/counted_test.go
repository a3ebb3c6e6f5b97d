package counted_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/internal/promtext"
	"github.com/loadgate/loadgate/internal/stackget"
)

func sel(t testing.TB, s string) scenario.Selector {
	t.Helper()
	x, err := scenario.ParseSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

const page = `# HELP http_requests_total Requests.
# TYPE http_requests_total counter
http_requests_total{route="GET /items",code="200"} 40
http_requests_total{route="GET /items",code="500"} 2
http_requests_total{route="GET /healthz",code="200"} 99
# TYPE temperature gauge
temperature 21.5
untyped_thing{a="b"} 7
`

func TestDecodeSumsTheMatchingSeries(t *testing.T) {
	for _, c := range []struct {
		sel    string
		want   float64
		series int
	}{
		{`http_requests_total{route="GET /items"}`, 42, 2},
		{`http_requests_total{route="GET /items",code="500"}`, 2, 1},
		{`http_requests_total`, 141, 3},
		{`http_requests_total{route="GET /nothing"}`, 0, 0},
		{`http_requests_total{zone=""}`, 141, 3}, // label="" matches series without the label
		{`absent_total`, 0, 0},
		{`untyped_thing`, 7, 1},
	} {
		rd, err := counted.Decode(strings.NewReader(page), sel(t, c.sel))
		if err != nil || rd.Value != c.want || len(rd.Series) != c.series {
			t.Errorf("%s: %v (%d series), %v; want %v (%d series)", c.sel, rd.Value, len(rd.Series), err, c.want, c.series)
		}
	}
}

func TestDecodeRefusesWhatIsNotACount(t *testing.T) {
	for name, c := range map[string]struct{ page, sel string }{
		"a gauge":      {page, "temperature"},
		"not the text": {"{\"json\": true}\n", "x"},
		"negative":     {"x -1\n", "x"},
		"NaN":          {"x NaN\n", "x"},
		"infinite":     {"x +Inf\n", "x"},
		"twice":        {"x{a=\"1\"} 1\nx{a=\"1\"} 2\n", "x"},
		"too large":    {"x 1\n" + strings.Repeat("# comment\n", counted.MaxBytes/10+1), "x"},
	} {
		if _, err := counted.Decode(strings.NewReader(c.page), sel(t, c.sel)); !errors.Is(err, counted.ErrExposition) {
			t.Errorf("%s: err %v, want ErrExposition", name, err)
		}
	}
}

// What promtext writes, counted.Decode reads (label values with quotes,
// backslashes and line breaks included).
func TestDecodeReadsPromtext(t *testing.T) {
	c := promtext.NewCounterVec("req_total", "help", "route")
	c.Inc(`GET /a"b\c` + "\n")
	c.Inc(`GET /a"b\c` + "\n")
	c.Inc("other")
	var b strings.Builder
	if err := promtext.Write(&b, c); err != nil {
		t.Fatal(err)
	}
	rd, err := counted.Decode(strings.NewReader(b.String()), scenario.Selector{Name: "req_total", Labels: []scenario.Label{{Name: "route", Value: `GET /a"b\c` + "\n"}}})
	if err != nil || rd.Value != 2 {
		t.Fatalf("read %v, %v from\n%s", rd.Value, err, b.String())
	}
}

// scripted serves, at its i-th GET, pages[i] (the last one after that).
type scripted struct {
	mu    sync.Mutex
	n     int
	pages []string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p := s.pages[min(s.n, len(s.pages)-1)]
	s.n++
	s.mu.Unlock()
	if p == "fail" {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", promtext.ContentType)
	fmt.Fprint(w, p)
}

func counter(v ...int) string {
	var b strings.Builder
	b.WriteString("# TYPE c counter\n")
	for i, x := range v {
		fmt.Fprintf(&b, "c{route=\"/items\",code=\"%d\"} %d\n", 200+i, x)
	}
	return b.String()
}

// run reads a 3-phase scenario against pages (4 reads: 3 phase starts and
// the one after the drain), the clock driven by the test (no timer).
func run(t *testing.T, pages []string, res *result.Result) result.Counted {
	t.Helper()
	ts := httptest.NewServer(&scripted{pages: pages})
	defer ts.Close()
	sc := &scenario.Scenario{Warmup: time.Second, Phases: []scenario.Phase{
		{Name: "ramp", Duration: time.Second}, {Name: "sustain", Duration: time.Second}, {Name: "recover", Duration: time.Second}}}
	probe := counted.Probe{Workload: "api_read", Addr: strings.TrimPrefix(ts.URL, "http://"),
		Count: &scenario.Count{Service: "api", Port: 9090, Path: "/metrics", Metric: sel(t, `c{route="/items"}`)}}
	tick := make(chan struct{})
	now := res.StartedAt
	rd := counted.NewReader(sc, []counted.Probe{probe}, counted.Options{
		Wait: func(ctx context.Context, at time.Time) error {
			select {
			case <-tick:
				now = at
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Now: func() time.Time { return now },
	})
	rd.Start(context.Background(), res.StartedAt)
	for i := 0; i < len(res.Phases) && i < 3; i++ {
		tick <- struct{}{}
	}
	out := rd.Finish(context.Background(), res)
	if len(out) != 1 {
		t.Fatalf("%d results", len(out))
	}
	return out[0]
}

func sentRes(phases ...string) *result.Result {
	r := &result.Result{StartedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i, p := range phases {
		r.Phases = append(r.Phases, result.Phase{Name: p, Workloads: []result.Workload{
			{Name: "api_read", Offered: int64(10 * (i + 1))}, {Name: "other", Offered: 1000}}})
	}
	return r
}

func spanText(s result.CountedSpan) string {
	if d, ok := s.Difference(); ok {
		return fmt.Sprintf("%s sent %d counted %v diff %v", s.Phase, s.Sent, *s.Counted, d)
	}
	return fmt.Sprintf("%s sent %d not measured (reset %v): %s", s.Phase, s.Sent, s.Reset, s.NotMeasured)
}

func TestReaderSetsCountedBesideSent(t *testing.T) {
	// counter sums at the 4 reads: 5, 15, 33 (one dropped), 63
	c := run(t, []string{counter(5), counter(10, 5), counter(25, 8), counter(50, 13)}, sentRes("ramp", "sustain", "recover"))
	want := []string{
		"ramp sent 10 counted 10 diff 0",
		"sustain sent 20 counted 18 diff -2",
		"recover sent 30 counted 30 diff 0",
		"all phases sent 60 counted 58 diff -2",
	}
	got := []string{spanText(c.Phases[0]), spanText(c.Phases[1]), spanText(c.Phases[2]), spanText(c.Total)}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c.Phases[1].BeforeS != 2 || c.Phases[1].AfterS != 3 {
		t.Errorf("sustain read at %v and %v s, want 2 and 3 (warm-up 1 s, phases of 1 s)", c.Phases[1].BeforeS, c.Phases[1].AfterS)
	}
	if c.Metric != `c{route="/items"}` || c.Workload != "api_read" {
		t.Errorf("counted %+v", c)
	}
}

// Regression guard for the rule: a counter that went down (the
// service restarted) is said, never subtracted.
func TestReaderSaysResetNotSubtracted(t *testing.T) {
	c := run(t, []string{counter(5), counter(15), counter(3), counter(13)}, sentRes("ramp", "sustain", "recover"))
	if s := c.Phases[1]; !s.Reset || s.Counted != nil || !strings.Contains(s.NotMeasured, "restarted") {
		t.Errorf("sustain: %s", spanText(s))
	}
	if s := c.Total; !s.Reset || s.Counted != nil {
		t.Errorf("total across a reset: %s", spanText(s))
	}
	if s := c.Phases[2]; s.Counted == nil || *s.Counted != 10 {
		t.Errorf("recover after the reset: %s", spanText(s))
	}
}

// A restart the counter hides (it grew past its earlier value by the next
// read) shows in process_start_time_seconds: still a reset.
func TestReaderSeesARestartByTheProcessStartTime(t *testing.T) {
	started := func(s float64, v int) string {
		return counter(v) + fmt.Sprintf("# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %v\n", s)
	}
	c := run(t, []string{started(100, 30), started(100, 40), started(200, 87), started(200, 97)}, sentRes("ramp", "sustain", "recover"))
	if s := c.Phases[1]; !s.Reset || s.Counted != nil {
		t.Errorf("sustain (restarted, 40 → 87): %s", spanText(s))
	}
	if s := c.Phases[0]; s.Counted == nil || *s.Counted != 10 {
		t.Errorf("ramp: %s", spanText(s))
	}
	if s := c.Phases[2]; s.Counted == nil || *s.Counted != 10 {
		t.Errorf("recover: %s", spanText(s))
	}
}

func TestReaderSaysWhyNotMeasured(t *testing.T) {
	c := run(t, []string{counter(5), "fail", counter(25), counter(30)}, sentRes("ramp", "sustain", "recover"))
	for _, s := range []result.CountedSpan{c.Phases[0], c.Phases[1]} {
		if s.Counted != nil || !strings.Contains(s.NotMeasured, "answered 503") {
			t.Errorf("next to a failed read: %s", spanText(s))
		}
	}
	if s := c.Total; s.Counted == nil || *s.Counted != 25 {
		t.Errorf("total (its reads both worked): %s", spanText(s))
	}
	// A metric that is not exposed at all is not a count of zero.
	c = run(t, []string{"# nothing\n"}, sentRes("ramp", "sustain", "recover"))
	if s := c.Total; s.Counted != nil || !strings.Contains(s.NotMeasured, "no series") {
		t.Errorf("absent metric: %s", spanText(s))
	}
}

// A run that ended early: the phases that did not run are not measured.
func TestReaderRunEndedEarly(t *testing.T) {
	c := run(t, []string{counter(5), counter(15)}, sentRes("ramp"))
	if s := c.Phases[0]; s.Counted == nil || *s.Counted != 10 {
		t.Errorf("ramp: %s", spanText(s))
	}
	for _, s := range []result.CountedSpan{c.Phases[1], c.Phases[2], c.Total} {
		if s.Counted != nil {
			t.Errorf("%s measured though the run ended in ramp", spanText(s))
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(page), `http_requests_total{route="GET /items"}`)
	f.Add([]byte("x{a=\"\\\"\\n\"} 3 1700000000000\n"), `x{a="\"\n"}`)
	f.Add([]byte("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\nh_sum 1\n"), "h")
	f.Fuzz(func(t *testing.T, data []byte, s string) {
		sl, err := scenario.ParseSelector(s)
		if err != nil {
			return
		}
		rd, err := counted.Decode(strings.NewReader(string(data)), sl)
		if err != nil {
			return
		}
		sum := 0.0
		for _, v := range rd.Series {
			if v < 0 {
				t.Fatalf("negative series %v", v)
			}
			sum += v
		}
		if sum != rd.Value {
			t.Fatalf("value %v is not the series' sum %v", rd.Value, sum)
		}
	})
}

// Regression (rules 14/17): Scrape used a plain http.Client, which follows
// a /metrics answering 302 to another host, so that host got fetched.
func TestRegression_ScrapeFollowsRedirectToAnotherHost(t *testing.T) {
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", promtext.ContentType)
		fmt.Fprint(w, counter(5))
	}))
	defer other.Close()
	ts := httptest.NewServer(http.RedirectHandler(other.URL+"/metrics", http.StatusFound))
	defer ts.Close()
	_, err := counted.Scrape(context.Background(), strings.TrimPrefix(ts.URL, "http://"), "/metrics", sel(t, "c"))
	if !errors.Is(err, stackget.ErrRefused) || hits.Load() != 0 {
		t.Errorf("err %v, the other host got %d requests: want the redirect refused, 0 requests", err, hits.Load())
	}
}

// Regression: run returned on a failed load before Finish, and the
// reader's goroutine went on waiting for the next boundary and scraping a
// stack that was being torn down. Stop ends it: no read after Stop.
func TestRegression_ReaderOutlivesAFailedLoad(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, counter(5))
	}))
	defer ts.Close()
	sc := &scenario.Scenario{Phases: []scenario.Phase{{Name: "a", Duration: time.Second}, {Name: "b", Duration: time.Second}}}
	probe := counted.Probe{Addr: strings.TrimPrefix(ts.URL, "http://"),
		Count: &scenario.Count{Service: "api", Port: 9090, Path: "/metrics", Metric: sel(t, "c")}}
	tick, entered := make(chan struct{}), make(chan struct{}, 2)
	waited := make(chan error, 2)
	rd := counted.NewReader(sc, []counted.Probe{probe}, counted.Options{
		Wait: func(ctx context.Context, at time.Time) error {
			entered <- struct{}{}
			select {
			case <-tick:
				return nil
			case <-ctx.Done():
				waited <- ctx.Err()
				return ctx.Err()
			}
		},
	})
	rd.Start(context.Background(), time.Now())
	<-entered
	tick <- struct{}{} // the read at phase a's start
	<-entered          // made: the reader waits for phase b
	rd.Stop()          // the load failed: no Finish
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("the wait for phase b ended with %v, want Canceled", err)
	}
	n := hits.Load()
	rd.Stop() // twice: nothing more
	if n != 1 || hits.Load() != 1 {
		t.Errorf("%d reads (then %d), want the 1 made before Stop", n, hits.Load())
	}
}

// The reader also ends with Start's ctx (a run interrupted).
func TestReaderEndsWithItsContext(t *testing.T) {
	sc := &scenario.Scenario{Phases: []scenario.Phase{{Name: "a", Duration: time.Second}}}
	probe := counted.Probe{Addr: "127.0.0.1:1", Count: &scenario.Count{Service: "api", Port: 1, Path: "/metrics", Metric: sel(t, "c")}}
	waited := make(chan error, 1)
	rd := counted.NewReader(sc, []counted.Probe{probe}, counted.Options{
		Wait: func(ctx context.Context, at time.Time) error { <-ctx.Done(); waited <- ctx.Err(); return ctx.Err() },
	})
	ctx, cancel := context.WithCancel(context.Background())
	rd.Start(ctx, time.Now())
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("wait ended with %v", err)
	}
	rd.Stop()
}
