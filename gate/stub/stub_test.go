package stub_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/loadgate/loadgate/gate/stub"
	"github.com/loadgate/loadgate/internal/stackget"
)

func serve(t *testing.T, cfg stub.Config) *httptest.Server {
	t.Helper()
	s, err := stub.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// counts parses the stub's /metrics with expfmt: the requests counter by
// route and outcome.
func counts(t *testing.T, base string) map[[2]string]float64 {
	t.Helper()
	resp, body, err := get(t, base+stub.PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("metrics content type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("expfmt does not parse the stub's metrics: %v\n%s", err, body)
	}
	out := map[[2]string]float64{}
	mf, ok := fams[stub.Metric]
	if !ok {
		return out
	}
	if mf.GetType().String() != "COUNTER" {
		t.Errorf("%s is a %s", stub.Metric, mf.GetType())
	}
	for _, m := range mf.GetMetric() {
		var route, outcome string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "route":
				route = l.GetValue()
			case "outcome":
				outcome = l.GetValue()
			}
		}
		out[[2]string{route, outcome}] = m.GetCounter().GetValue()
	}
	return out
}

func TestAnswersAndCountsByRouteAndOutcome(t *testing.T) {
	ts := serve(t, stub.Config{Routes: []string{"GET /profile/{id}", `POST /odd"route\`}, Body: `{"id":"{id}","name":"user-{id}","x":"{nope}"}`})
	resp, body, err := get(t, ts.URL+"/profile/7")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /profile/7: %v %v", resp, err)
	}
	if want := `{"id":"7","name":"user-7","x":""}` + "\n"; body != want {
		t.Errorf("body %q, want %q", body, want)
	}
	get(t, ts.URL+"/profile/8")
	resp, _, _ = get(t, ts.URL+"/nothing")
	if resp.StatusCode != 404 {
		t.Errorf("unrouted path: %d, want 404", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+`/odd"route\`, strings.NewReader("x"))
	if r, err := http.DefaultClient.Do(req); err == nil {
		r.Body.Close()
	}
	got := counts(t, ts.URL)
	want := map[[2]string]float64{{"GET /profile/{id}", "ok"}: 2, {`POST /odd"route\`, "ok"}: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}

func TestErrorRateOneAnswers500(t *testing.T) {
	ts := serve(t, stub.Config{ErrorRate: 1})
	for i := 0; i < 3; i++ {
		if resp, _, err := get(t, ts.URL+"/x"); err != nil || resp.StatusCode != 500 {
			t.Fatalf("got %v %v, want 500", resp, err)
		}
	}
	if got := counts(t, ts.URL)[[2]string{"/", "error"}]; got != 3 {
		t.Errorf("error count %v, want 3", got)
	}
}

// A held request gets no answer: its connection is closed after HoldMax.
func TestTimeoutRateOneHoldsWithoutAnswer(t *testing.T) {
	ts := serve(t, stub.Config{TimeoutRate: 1, HoldMax: time.Millisecond})
	if resp, _, err := get(t, ts.URL+"/x"); err == nil {
		t.Fatalf("a held request was answered: %d", resp.StatusCode)
	}
	if got := counts(t, ts.URL)[[2]string{"/", "timeout"}]; got != 1 {
		t.Errorf("timeout count %v, want 1", got)
	}
}

// The client giving up ends a held request (bounded by the client, not by
// HoldMax).
func TestHeldRequestEndsWhenClientGivesUp(t *testing.T) {
	ts := serve(t, stub.Config{TimeoutRate: 1, HoldMax: stub.MaxHold})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/x", nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the client's deadline", err)
	}
	ts.Close() // waits for the handler: it returns once the client is gone
}

func TestStreamsServerSentEvents(t *testing.T) {
	ts := serve(t, stub.Config{Stream: &stub.Stream{Chunks: 3, First: stub.Delay{Dist: "fixed", Fixed: time.Millisecond}, Every: time.Millisecond}})
	resp, body, err := get(t, ts.URL+"/v1/chat", "Accept", "text/event-stream")
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var events []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			events = append(events, d)
		}
	}
	want := []string{`{"chunk":1,"of":3}`, `{"chunk":2,"of":3}`, `{"chunk":3,"of":3}`, "[DONE]"}
	if !slices.Equal(events, want) {
		t.Errorf("events %q, want %q", events, want)
	}
	// Without Accept: text/event-stream, the same stub answers JSON.
	if resp, _, _ := get(t, ts.URL+"/v1/chat"); resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("plain request: content type %q", resp.Header.Get("Content-Type"))
	}
}

// statuses is the status of n requests in turn.
func statuses(t *testing.T, seed uint64, n int) []int {
	ts := serve(t, stub.Config{ErrorRate: 0.5, Seed: seed})
	var out []int
	for i := 0; i < n; i++ {
		resp, _, err := get(t, ts.URL+"/x")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, resp.StatusCode)
	}
	return out
}

func TestSeedGivesTheSameDraws(t *testing.T) {
	a, b, c := statuses(t, 7, 64), statuses(t, 7, 64), statuses(t, 8, 64)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different outcomes:\n%v\n%v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 drew the same 64 outcomes")
	}
}

func TestConfigEndpointStatesTheConfiguration(t *testing.T) {
	d, err := stub.ParseDelay("lognormal:p50=20ms,p99=80ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg := stub.Config{Delay: d, ErrorRate: 0.01, TimeoutRate: 0.02, Seed: 3, Routes: []string{"GET /profile/{id}"},
		Stream: &stub.Stream{Chunks: 5, First: stub.Delay{Dist: "uniform", Min: time.Millisecond, Max: 2 * time.Millisecond}, Every: 3 * time.Millisecond}}
	ts := serve(t, cfg)
	got, err := stub.FetchConfig(context.Background(), strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if want := cfg.Stated(); !reflect.DeepEqual(got, want) {
		t.Errorf("stated %+v, want %+v", got, want)
	}
	if got.Delay.P50MS != 20 || got.Delay.P99MS != 80 || got.HoldMaxMS != 30000 || got.Stream.First.MaxMS != 2 {
		t.Errorf("stated %+v", got)
	}
}

func TestNewRefusesBadConfigs(t *testing.T) {
	for name, cfg := range map[string]stub.Config{
		"rates above 1":       {ErrorRate: 0.6, TimeoutRate: 0.5},
		"negative rate":       {ErrorRate: -0.1},
		"own path":            {Routes: []string{"GET /metrics"}},
		"bad pattern":         {Routes: []string{"GET  /x {"}},
		"hold too long":       {HoldMax: stub.MaxHold + 1},
		"no chunks":           {Stream: &stub.Stream{}},
		"delay past MaxDelay": {Delay: stub.Delay{Dist: "fixed", Fixed: stub.MaxDelay + 1}},
		"unknown dist":        {Delay: stub.Delay{Dist: "pareto"}},
	} {
		if _, err := stub.New(cfg); !errors.Is(err, stub.ErrConfig) {
			t.Errorf("%s: err %v, want ErrConfig", name, err)
		}
	}
}

func TestParseDelay(t *testing.T) {
	ok := map[string]stub.Delay{
		"20ms":                        {Dist: "fixed", Fixed: 20 * time.Millisecond},
		"fixed:1s":                    {Dist: "fixed", Fixed: time.Second},
		"uniform:10ms-30ms":           {Dist: "uniform", Min: 10 * time.Millisecond, Max: 30 * time.Millisecond},
		"lognormal:p99=80ms,p50=20ms": {Dist: "lognormal", P50: 20 * time.Millisecond, P99: 80 * time.Millisecond},
	}
	for in, want := range ok {
		got, err := stub.ParseDelay(in)
		if err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := stub.ParseDelay(got.String()); err != nil || again != got {
			t.Errorf("ParseDelay(%q.String() = %q) = %+v, %v", in, got.String(), again, err)
		}
	}
	for _, in := range []string{"", "-1ms", "2m", "uniform:30ms-10ms", "uniform:10ms", "lognormal:p50=20ms", "lognormal:p50=0s,p99=1s",
		"lognormal:p50=2s,p99=1s", "lognormal:p50=1s,p50=1s,p99=2s", "pareto:1s", "fixed:abc"} {
		if _, err := stub.ParseDelay(in); !errors.Is(err, stub.ErrDelay) {
			t.Errorf("ParseDelay(%q): err %v, want ErrDelay", in, err)
		}
	}
}

// The lognormal's draws have the stated median and 99th percentile (10 000
// seeded draws: within 5% and 10%).
func TestLognormalDrawsMatchTheirPercentiles(t *testing.T) {
	d, _ := stub.ParseDelay("lognormal:p50=20ms,p99=80ms")
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]time.Duration, 10000)
	for i := range v {
		v[i] = d.Draw(r)
	}
	slices.Sort(v)
	p50, p99 := v[len(v)/2], v[len(v)*99/100]
	if p50 < 19*time.Millisecond || p50 > 21*time.Millisecond {
		t.Errorf("median %s, want 20ms ±5%%", p50)
	}
	if p99 < 72*time.Millisecond || p99 > 88*time.Millisecond {
		t.Errorf("p99 %s, want 80ms ±10%%", p99)
	}
	u, _ := stub.ParseDelay("uniform:10ms-30ms")
	for i := 0; i < 1000; i++ {
		if x := u.Draw(r); x < 10*time.Millisecond || x > 30*time.Millisecond {
			t.Fatalf("uniform draw %s outside [10ms, 30ms]", x)
		}
	}
}

func TestDecodeConfigRefusesNonsense(t *testing.T) {
	good := `{"delay":{"dist":"fixed","ms":20,"cap_ms":60000},"error_rate":0,"timeout_rate":0,"hold_max_ms":30000,"seed":1,"routes":["/"]}`
	if _, err := stub.DecodeConfig(strings.NewReader(good)); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	for _, in := range []string{
		`{}`, `[]`, good + `{}`,
		strings.Replace(good, `"error_rate":0`, `"error_rate":2`, 1),
		strings.Replace(good, `"dist":"fixed"`, `"dist":"zipf"`, 1),
		strings.Replace(good, `"seed":1`, `"seed":1,"extra":1`, 1),
		strings.Replace(good, `"ms":20`, `"ms":20,"p50_ms":3`, 1),
		strings.Replace(good, `"hold_max_ms":30000`, `"hold_max_ms":-1`, 1),
		`{"delay":` + strings.Repeat(" ", stub.MaxConfigBytes) + `}`,
	} {
		if _, err := stub.DecodeConfig(strings.NewReader(in)); !errors.Is(err, stub.ErrStated) {
			t.Errorf("DecodeConfig(%.80q): err %v, want ErrStated", in, err)
		}
	}
}

func FuzzParseDelay(f *testing.F) {
	for _, s := range []string{"20ms", "uniform:10ms-30ms", "lognormal:p50=20ms,p99=80ms", "lognormal:p50=1ns,p99=1m", "uniform:-"} {
		f.Add(s)
	}
	r := rand.New(rand.NewPCG(1, 1))
	f.Fuzz(func(t *testing.T, s string) {
		d, err := stub.ParseDelay(s)
		if err != nil {
			return
		}
		again, err := stub.ParseDelay(d.String())
		if err != nil || again != d {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, d, d.String(), again, err)
		}
		if x := d.Draw(r); x < 0 || x > stub.MaxDelay {
			t.Fatalf("%q drew %s", s, x)
		}
	})
}

func FuzzDecodeConfig(f *testing.F) {
	f.Add([]byte(`{"delay":{"dist":"fixed","ms":20,"cap_ms":60000},"error_rate":0,"timeout_rate":0,"hold_max_ms":30000,"seed":1,"routes":["/"]}`))
	f.Add([]byte(`{"delay":{"dist":"lognormal","p50_ms":20,"p99_ms":80,"cap_ms":60000},"error_rate":0.1,"timeout_rate":0.2,"hold_max_ms":1,"stream":{"chunks":3,"first_chunk":{"dist":"uniform","min_ms":1,"max_ms":2,"cap_ms":60000},"chunk_every_ms":5},"seed":9,"routes":["GET /a/{id}"],"body":"{}"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := stub.DecodeConfig(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		if c.ErrorRate < 0 || c.ErrorRate+c.TimeoutRate > 1+1e-9 || len(c.Routes) == 0 {
			t.Fatalf("accepted %+v", c)
		}
	})
}

// Regression (rules 14/17): FetchConfig used a plain http.Client, which
// follows a redirect to any host; it now refuses it, and that host gets no
// request.
func TestRegression_FetchConfigFollowsRedirect(t *testing.T) {
	other := serve(t, stub.Config{})
	var hits atomic.Int64
	counted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		other.Config.Handler.ServeHTTP(w, r)
	}))
	defer counted.Close()
	ts := httptest.NewServer(http.RedirectHandler(counted.URL+stub.PathConfig, http.StatusFound))
	defer ts.Close()
	_, err := stub.FetchConfig(context.Background(), strings.TrimPrefix(ts.URL, "http://"))
	if !errors.Is(err, stackget.ErrRefused) || hits.Load() != 0 {
		t.Errorf("err %v, the other host got %d requests: want the redirect refused", err, hits.Load())
	}
}
