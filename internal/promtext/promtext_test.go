package promtext_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loadgate/loadgate/internal/promtext"
)

func ExampleWrite() {
	c := promtext.NewCounterVec("http_requests_total", "Requests by route and code.", "route", "code")
	c.Inc("GET /items", "200")
	c.Inc("GET /items", "200")
	c.Inc(`GET /a"b`, "500")
	_ = promtext.Write(os.Stdout, c)
	// Output:
	// # HELP http_requests_total Requests by route and code.
	// # TYPE http_requests_total counter
	// http_requests_total{route="GET /a\"b",code="500"} 1
	// http_requests_total{route="GET /items",code="200"} 2
}

// Concurrent increments are all counted, and what Handler serves parses
// with expfmt.
func TestHandlerParsesWithExpfmt(t *testing.T) {
	c := promtext.NewCounterVec("n_total", "n", "k")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				c.Inc(fmt.Sprint(i%3), "extra value dropped")
			}
		}()
	}
	wg.Wait()
	rec := httptest.NewRecorder()
	promtext.Handler(c).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != promtext.ContentType {
		t.Errorf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, m := range fams["n_total"].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	if st := fams[promtext.StartMetric].GetMetric(); len(st) != 1 || st[0].GetGauge().GetValue() <= 0 {
		t.Errorf("%s: %v", promtext.StartMetric, st)
	}
	if total != 800 || c.Value("0") != 272 {
		t.Errorf("total %v, k=0 %d; want 800, 272", total, c.Value("0"))
	}
	rec = httptest.NewRecorder()
	promtext.Handler(c).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
}

// The series are bounded: past MaxSeries, new label values count as "other".
func TestSeriesAreBounded(t *testing.T) {
	c := promtext.NewCounterVec("n_total", "n", "k")
	for i := 0; i < promtext.MaxSeries+10; i++ {
		c.Inc(fmt.Sprint(i))
	}
	if got := c.Value("other"); got != 10 {
		t.Errorf("other = %d, want 10", got)
	}
	var b strings.Builder
	_ = promtext.Write(&b, c)
	if n := strings.Count(b.String(), "\nn_total{"); n != promtext.MaxSeries+1 {
		t.Errorf("%d series written, want %d", n, promtext.MaxSeries+1)
	}
}
