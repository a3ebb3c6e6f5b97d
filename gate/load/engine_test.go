package load_test

import (
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

func mustScenario(t testing.TB, yaml string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(yaml), "test.yaml", scenario.Options{})
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return sc
}

func runAgainst(t *testing.T, ctx context.Context, sc *scenario.Scenario, base string) *result.Result {
	t.Helper()
	u, err := urlParse(base)
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(ctx, load.Config{Scenario: sc, Target: load.Target{URL: u}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// assertEveryRequestRecorded checks rule 3 at every level of the result.
func assertEveryRequestRecorded(t *testing.T, res *result.Result) {
	t.Helper()
	if res.Offered == 0 {
		t.Fatalf("offered 0: the test sent nothing")
	}
	if res.Offered != res.Recorded {
		t.Errorf("offered %d != recorded %d", res.Offered, res.Recorded)
	}
	if res.Warmup.Offered != res.Warmup.Recorded {
		t.Errorf("warm-up offered %d != recorded %d", res.Warmup.Offered, res.Warmup.Recorded)
	}
	for _, p := range res.Phases {
		for _, w := range p.Workloads {
			if got := w.Succeeded + w.Failed + w.Abandoned; got != w.Offered {
				t.Errorf("%s/%s: offered %d, succeeded+failed+abandoned %d", p.Name, w.Name, w.Offered, got)
			}
			var f int64
			for _, n := range w.Failures {
				f += n
			}
			if f != w.Failed {
				t.Errorf("%s/%s: failed %d, failure classes sum to %d", p.Name, w.Name, w.Failed, f)
			}
		}
	}
	if problems := res.Check(); len(problems) > 0 {
		t.Errorf("result.Check: %v", problems)
	}
}

func failures(res *result.Result) map[string]int64 {
	m := map[string]int64{}
	for _, p := range res.Phases {
		for _, w := range p.Workloads {
			for k, v := range w.Failures {
				m[k] += v
			}
		}
	}
	return m
}

func totals(res *result.Result) (ok, failed, abandoned int64) {
	for _, p := range res.Phases {
		for _, w := range p.Workloads {
			ok += w.Succeeded
			failed += w.Failed
			abandoned += w.Abandoned
		}
	}
	return
}

// stallServer answers at once, except that every response waiting inside the
// first stall of each period is held until the stall ends.
// The coordinated-omission tests: a service stalls every response for S
// out of every P seconds. Sent on time, a request due at offset x inside the
// stall waits S-x, so a fraction S/P of requests is spread evenly over
// (0, S] and the due-time p99 is S - 0.01·P. A small max_in_flight blocks
// the dispatcher during the stall: the queued requests go out late, their
// due-time latency still counts the wait, and their service time does not.
//
// They run on testing/synctest's fake clock, with a fake operation that
// takes its service time on that clock (load.SetFakeClock), so every number
// is exact: a function of the schedule and the service, whatever the
// machine's load. (TestSmokeCoordinatedOmission* run the same against a
// real server on the real clock, and report instead of failing on noise.)

// The two coordinated-omission loads: 200/s for 8 s through 4 permits, and
// 400/s for 4 s with room for every request.
const (
	coSmallInFlight = `
name: co
max_in_flight: 4
phases:
  - {name: sustain, rate: 200, duration: 8s}
workloads:
  - {name: get, share: 1, http: {path: /}}
`
	coOpenArrival = `
name: co
max_in_flight: 1000
late_after: 20ms
phases:
  - {name: sustain, rate: 400, duration: 4s}
workloads:
  - {name: get, share: 1, http: {path: /}}
`
)

// stallOp is the stalling service: S of every P, then 1 ms of work (so no
// completion lands on a due time, a multiple of the schedule's interval).
func stallOp(period, stall time.Duration) load.FakeOperation {
	return func(ctx context.Context, now func() time.Duration, _ int, _ int64) string {
		if in := now() % period; in < stall {
			time.Sleep(stall - in)
		}
		time.Sleep(time.Millisecond)
		return ""
	}
}

// runFake runs sc under the fake clock against op, inside the caller's
// synctest bubble (the target is never dialled).
func runFake(t *testing.T, sc *scenario.Scenario, op load.FakeOperation) *result.Result {
	t.Helper()
	defer load.SetFakeClock(op)()
	return runAgainst(t, context.Background(), sc, "http://127.0.0.1:9")
}

// exactMS checks a latency figure against its exact value, within the
// histograms' precision (3 significant digits), which is no timing margin.
func exactMS(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > want*1e-3 {
		t.Errorf("%s = %.3f ms, want %.0f ms", what, got, want)
	}
}

func TestCoordinatedOmissionSmallInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 200/s for 8 s (due every 5 ms), 4 permits, a 1 s stall every 4 s.
		// Requests 0-3 of a period take the permits and finish at 1 001 ms;
		// the dispatcher waits from request 4's due time (20 ms) on; from
		// 1 001 ms the queue drains 4 per ms (request k sent at
		// 1 001 + ⌊(k-4)/4⌋ ms) until request 211 (due 1 055 ms) is not due
		// yet at 1 052 ms: stalled 1 032 ms a period. Of the 1 600 requests
		// the due-time p99 (rank 1 584, the 17th largest) is request 8's
		// 1 003 - 40 = 963 ms; its service time was 1 ms.
		sc := mustScenario(t, coSmallInFlight)
		res := runFake(t, sc, stallOp(4*time.Second, time.Second))
		assertEveryRequestRecorded(t, res)
		w := res.Phases[0].Workloads[0]
		if res.Offered != 1600 || w.Succeeded != 1600 {
			t.Fatalf("offered %d, succeeded %d, want 1600 each", res.Offered, w.Succeeded)
		}
		exactMS(t, "due-time p99", w.LatencyMS.P99, 963)
		exactMS(t, "service-time p99", w.ServiceMS.P99, 1)
		exactMS(t, "due-time max", w.LatencyMS.Max, 1001)
		// Requests 4-210 of a period went out up to 1 s after their due
		// time, every one held back by the 4 workers busy with the stalled
		// service: the target's time (in their latency and stalled_seconds),
		// not the generator's. Each went out the instant a worker freed, so
		// none is late and the generator's lateness is 0 (issue 45: it was
		// 414 late, lateness p99 943 ms, "generator behind schedule").
		if res.Late != 0 || w.Late != 0 || res.LatenessMS.P99 != 0 || res.GeneratorBehind() != nil {
			t.Errorf("late = %d (workload %d), lateness p99 %v ms: want none, the waits were the target's", res.Late, w.Late, res.LatenessMS.P99)
		}
		if math.Abs(res.Stalled-2.064) > 1e-6 {
			t.Errorf("stalled_seconds = %.6f, want 2.064", res.Stalled)
		}
	})
}

// Issue 45: lateness is the generator's own. A dispatcher that wakes 3 ms
// late for every 10th request makes exactly those late, whatever the
// target; a wait for a free worker (every one busy with a stalled
// target) is the target's (TestCoordinatedOmissionSmallInFlight), and
// the two add up only where the generator was late on its own.
func TestLatenessIsTheGeneratorsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const sc = `
name: own
max_in_flight: 1000
late_after: 1ms
phases:
  - {name: sustain, rate: 100, duration: 2s}
workloads:
  - {name: get, share: 1, http: {path: /}}
`
		late := func(due time.Duration) time.Duration {
			if due/(10*time.Millisecond)%10 == 9 { // requests 9, 19, …: 20 of 200
				return 3 * time.Millisecond
			}
			return 0
		}
		op := func(ctx context.Context, now func() time.Duration, _ int, _ int64) string {
			time.Sleep(time.Millisecond)
			return ""
		}
		defer load.SetFakeClockWake(op, late)()
		res := runAgainst(t, context.Background(), mustScenario(t, sc), "http://127.0.0.1:9")
		assertEveryRequestRecorded(t, res)
		w := res.Phases[0].Workloads[0]
		if res.Late != 20 || w.Late != 20 || res.Stalled != 0 {
			t.Errorf("late %d (workload %d), stalled %v s: want the 20 sent 3 ms late, no stall", res.Late, w.Late, res.Stalled)
		}
		exactMS(t, "lateness max", res.LatenessMS.Max, 3)
		exactMS(t, "due-time max (3 ms late + 1 ms of service)", w.LatencyMS.Max, 4)
	})
}

// With room in flight, every request goes out on time and waits in the
// service: due-time and service-time latency agree, and nothing is late.
func TestCoordinatedOmissionOpenArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 400/s for 4 s, a 250 ms stall every second: p99 = 250 - 10 + 1 ms.
		sc := mustScenario(t, coOpenArrival)
		res := runFake(t, sc, stallOp(time.Second, 250*time.Millisecond))
		assertEveryRequestRecorded(t, res)
		w := res.Phases[0].Workloads[0]
		exactMS(t, "due-time p99", w.LatencyMS.P99, 241)
		exactMS(t, "service-time p99", w.ServiceMS.P99, 241)
		if res.Stalled != 0 || res.Late != 0 || res.LatenessMS.P99 != 0 {
			t.Errorf("stalled_seconds %v, late %d, lateness p99 %v: want 0 with 1000 permits", res.Stalled, res.Late, res.LatenessMS.P99)
		}
		// Offered rate is the schedule's, whatever the service does (open arrival).
		if got := w.Throughput.OfferedPerS; got != 400 {
			t.Errorf("offered/s = %v, want 400", got)
		}
	})
}

// smokeMS reports a wall-clock latency figure outside ±10% of what the
// fake-clock test computes exactly: on a loaded machine the real clock
// drifts, so it is a report, not a failure.
func smokeMS(t *testing.T, what string, got, want float64) {
	t.Helper()
	if got < want*0.9 || got > want*1.1 {
		t.Logf("SMOKE (not a failure): %s = %.1f ms, want %.0f ms ±10%% on an idle machine", what, got, want)
	}
}

func stallServer(t *testing.T, period, stall time.Duration) *httptest.Server {
	t0 := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := time.Since(t0) % period
		if in < stall {
			time.Sleep(stall - in)
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The same runs against a real server on the real clock (the smoke tier):
// what must hold whatever the noise fails the test, the timing figures are
// reported.
func TestSmokeCoordinatedOmissionSmallInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the wall-clock smoke tier (8 s); TestCoordinatedOmissionSmallInFlight is the exact test")
	}
	const period, stall = 4 * time.Second, time.Second
	srv := stallServer(t, period, stall)
	sc := mustScenario(t, coSmallInFlight)
	res := runAgainst(t, context.Background(), sc, srv.URL)
	assertEveryRequestRecorded(t, res)
	w := res.Phases[0].Workloads[0]
	want := (stall - period/100).Seconds() * 1000 // 960 ms
	smokeMS(t, "due-time p99", w.LatencyMS.P99, want)
	if w.ServiceMS.P99 > want/4 {
		t.Logf("SMOKE (not a failure): service-time p99 = %.1f ms, want far below the due-time p99 %.0f ms", w.ServiceMS.P99, want)
	}
	if res.Late > res.Offered/10 {
		t.Logf("SMOKE (not a failure): late = %d of %d: the waits for a permit are the target's, not the generator's lateness", res.Late, res.Offered)
	}
	if res.Stalled <= 0 {
		t.Errorf("stalled_seconds = %.3f, want > 0: the dispatcher waited at max_in_flight", res.Stalled)
	}
	t.Logf("wall clock: due-time p99 %.1f ms, service-time p99 %.1f ms, stalled %.3f s, lateness p99 %.1f ms (exact on the fake clock: 963, 1, 2.064, 0)",
		w.LatencyMS.P99, w.ServiceMS.P99, res.Stalled, res.LatenessMS.P99)
}

func TestSmokeCoordinatedOmissionOpenArrival(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the wall-clock smoke tier (4 s); TestCoordinatedOmissionOpenArrival is the exact test")
	}
	const period, stall = time.Second, 250 * time.Millisecond
	srv := stallServer(t, period, stall)
	sc := mustScenario(t, coOpenArrival)
	res := runAgainst(t, context.Background(), sc, srv.URL)
	assertEveryRequestRecorded(t, res)
	w := res.Phases[0].Workloads[0]
	smokeMS(t, "due-time p99", w.LatencyMS.P99, (stall-period/100).Seconds()*1000)
	if res.Stalled != 0 {
		t.Errorf("stalled_seconds = %v, want 0 with 1000 permits", res.Stalled)
	}
	// Offered rate is the schedule's, whatever the server does (open arrival):
	// counted from the schedule, not timed.
	if got := w.Throughput.OfferedPerS; got < 399 || got > 401 {
		t.Errorf("offered/s = %.1f, want 400", got)
	}
}

func TestEveryRequestRecordedUnderFaults(t *testing.T) {
	// A server that times out every 5th request, resets every 7th and stops
	// half-way through the run.
	var n atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i%5 == 0:
			time.Sleep(300 * time.Millisecond) // past the 100 ms timeout
		case i%7 == 0: // RST before any byte of the response
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			return
		case i%13 == 0: // RST in the middle of the response headers
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Le"))
			time.Sleep(time.Millisecond)
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
			return
		case i%11 == 0:
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	}))
	srv.Start()
	defer srv.Close()
	sc := mustScenario(t, `
name: faults
timeout: 100ms
warmup: 200ms
phases:
  - {name: sustain, rate: 200, duration: 2s}
workloads:
  - {name: a, share: 3, http: {path: /a}}
  - {name: b, share: 1, http: {method: POST, path: /b, body: "x={n}"}}
`)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		srv.CloseClientConnections()
		srv.Listener.Close() // refused from now on
	}()
	res := runAgainst(t, context.Background(), sc, srv.URL)
	assertEveryRequestRecorded(t, res)
	f := failures(res)
	for _, class := range []string{"timeout", "closed", "reset", "status 503", "refused"} {
		if f[class] == 0 {
			t.Errorf("no failure of class %q recorded; classes: %v", class, f)
		}
	}
	if f["other"] > 0 {
		t.Errorf("%d failures classified as other: %v", f["other"], f)
	}
}

func TestRefusedTarget(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	sc := mustScenario(t, `
name: refused
phases: [{name: sustain, rate: 100, duration: 500ms}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	res := runAgainst(t, context.Background(), sc, "http://"+addr)
	assertEveryRequestRecorded(t, res)
	ok, failed, _ := totals(res)
	if ok != 0 || failed != res.Offered || failures(res)["refused"] != res.Offered {
		t.Errorf("ok %d failed %d of %d; classes %v: want every request refused", ok, failed, res.Offered, failures(res))
	}
	if w := res.Phases[0].Workloads[0]; w.LatencyMS.Count != 0 {
		t.Errorf("latency count %d: a refused request is not fast, it is not a latency sample (rule 4)", w.LatencyMS.Count)
	}
}

// A server that never answers: at the end, what is still in flight after the
// drain is recorded as abandoned, and the sums still hold.
func TestAbandonedAfterDrain(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	sc := mustScenario(t, `
name: hang
timeout: 10s
drain: 200ms
phases: [{name: sustain, rate: 50, duration: 500ms}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	res := runAgainst(t, context.Background(), sc, srv.URL)
	assertEveryRequestRecorded(t, res)
	if _, _, ab := totals(res); ab != res.Offered {
		t.Errorf("abandoned %d of %d, want all", ab, res.Offered)
	}
	if !res.Usable {
		t.Errorf("unusable (%v): abandoned requests are recorded, the run stays usable", res.Unusable)
	}
}

func TestInterruptedRunRecordsEverything(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
	}))
	defer srv.Close()
	sc := mustScenario(t, `
name: int
max_in_flight: 4
phases: [{name: sustain, rate: 200, duration: 30s}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	res := runAgainst(t, ctx, sc, srv.URL)
	if !res.Interrupted || res.Usable {
		t.Errorf("interrupted=%v usable=%v, want an interrupted, unusable result", res.Interrupted, res.Usable)
	}
	if res.Offered != res.Recorded {
		t.Errorf("offered %d != recorded %d", res.Offered, res.Recorded)
	}
	if res.Offered >= 200*30 {
		t.Errorf("offered %d: the run did not stop", res.Offered)
	}
}

func TestHeadersBodyAndEnvReachServer(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		buf := make([]byte, 64)
		n, _ := r.Body.Read(buf)
		b.Write(buf[:n])
		got.Store(r.Method + " " + r.URL.RequestURI() + " " + r.Header.Get("Authorization") + " " + b.String())
		w.WriteHeader(202)
	}))
	defer srv.Close()
	sc := mustScenario(t, `
name: env
phases: [{name: sustain, rate: 10, duration: 100ms}]
workloads:
  - name: ingest
    share: 1
    http:
      method: POST
      path: "/docs/{id}?n={n}"
      headers: {Authorization: "Bearer ${TOKEN}"}
      body: '{"title":"load-{n}"}'
      vars: {id: [a, b]}
    expect: {status: [202]}
`)
	u, _ := urlParse(srv.URL)
	res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}, Env: map[string]string{"TOKEN": "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	assertEveryRequestRecorded(t, res)
	if ok, _, _ := totals(res); ok != res.Offered {
		t.Errorf("ok %d of %d; failures %v", ok, res.Offered, failures(res))
	}
	if g, want := got.Load(), `POST /docs/a?n=0 Bearer s3cret {"title":"load-0"}`; g != want {
		t.Errorf("first request = %q, want %q", g, want)
	}
}

// Secrets resolved from the environment reach the server and never the result.
func TestSecretNotInResult(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sc := mustScenario(t, `
name: redact
phases: [{name: sustain, rate: 10, duration: 100ms}]
workloads: [{name: a, share: 1, http: {path: "/?token=${T}"}}]
`)
	u, _ := urlParse(srv.URL + "/base")
	res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}, Env: map[string]string{"T": "zzsecretzz"}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.Encode(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "zzsecretzz") {
		t.Errorf("result.json holds the secret value")
	}
}

// http_version: "2" speaks HTTP/2: h2c with prior knowledge to an http
// target, ALPN h2 to an https one.
func TestHTTP2(t *testing.T) {
	var protos sync.Map
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
	})
	h2c := httptest.NewUnstartedServer(h)
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	defer h2c.Close()
	tlsSrv := httptest.NewUnstartedServer(h)
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()

	sc := mustScenario(t, `
name: h2
http_version: "2"
phases: [{name: sustain, rate: 50, duration: 200ms}]
workloads: [{name: a, share: 1, http: {path: /}}]
`)
	for _, base := range []string{h2c.URL, tlsSrv.URL} {
		protos.Clear()
		u, _ := urlParse(base)
		res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u, Insecure: true}})
		if err != nil {
			t.Fatal(err)
		}
		assertEveryRequestRecorded(t, res)
		if ok, _, _ := totals(res); ok != res.Offered {
			t.Errorf("%s: ok %d of %d; failures %v", base, ok, res.Offered, failures(res))
		}
		protos.Range(func(k, _ any) bool {
			if k != "HTTP/2.0" {
				t.Errorf("%s: server saw %v, want only HTTP/2.0", base, k)
			}
			return true
		})
	}
}

// A run at a low rate says in its result what its early wake measured and
// cost (issue 51): every gap of 20 ms sleeps, its wake-up delay is measured,
// and the CPU spun before due times is within what the margin allows (at
// most the 2 ms ceiling per wait, and 0.1 s for preemptions on a busy core).
func TestLowRateResultSaysWhatTheEarlyWakeCost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sc := mustScenario(t, `
name: low
phases: [{name: sustain, rate: 50, duration: 1s}]
workloads: [{name: get, share: 1, http: {method: GET, path: /}}]
`)
	res := runAgainst(t, context.Background(), sc, srv.URL)
	assertEveryRequestRecorded(t, res)
	w := res.Wait
	if w == nil {
		t.Fatal("no wait in the result of a run whose every wait slept")
	}
	if w.Wakes > res.Offered || w.EarlyWakes > w.Wakes {
		t.Errorf("wakes %d, early wakes %d, of %d requests 20 ms apart", w.Wakes, w.EarlyWakes, res.Offered)
	}
	// A send more than a gap late leaves the next one due at once, with no
	// sleep: only a run that kept its schedule must have slept before each.
	if onTime := res.LatenessMS.Max < 15; onTime && w.Wakes < res.Offered-2 {
		t.Errorf("wakes %d of %d requests 20 ms apart, on schedule (lateness max %v ms)", w.Wakes, res.Offered, res.LatenessMS.Max)
	}
	if w.MarginMS < 0.03 || w.MarginMS > 2 {
		t.Errorf("margin %v ms, want within 0.03..2", w.MarginMS)
	}
	if max := float64(w.EarlyWakes) * 0.002; w.SpunS < 0 || w.SpunS > max+0.1 {
		t.Errorf("spun %v s over %d early wakes, want ≤ %v", w.SpunS, w.EarlyWakes, max)
	}
}
