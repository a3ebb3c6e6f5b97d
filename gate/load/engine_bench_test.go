package load_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/loadgate/loadgate/gate/load"
)

// BenchmarkEngine runs the engine at a fixed rate against a loopback server
// and reports the generator's heap allocations per request: allocations
// drive the GC, and a GC cycle on the generator's one core is a hiccup that
// makes requests late.
func BenchmarkEngine(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Listener.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	for _, rate := range []int{5000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			sc := mustScenario(b, fmt.Sprintf(`
name: bench
max_in_flight: 64
phases: [{name: sustain, rate: %d, duration: 1s}]
workloads: [{name: a, share: 1, http: {path: "/items?page={n}"}}]
`, rate))
			u, _ := urlParse(srv.URL)
			var ms0, ms1 runtime.MemStats
			var reqs int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				runtime.ReadMemStats(&ms0)
				res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}})
				runtime.ReadMemStats(&ms1)
				if err != nil {
					b.Fatal(err)
				}
				reqs += res.Offered
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(res.Offered), "allocs/req")
				b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(res.Offered), "B/req")
			}
		})
	}
}
