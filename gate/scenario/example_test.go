package scenario_test

import (
	"fmt"

	"github.com/loadgate/loadgate/gate/scenario"
)

func ExampleParse() {
	src := []byte(`
name: demo-api
warmup: 10s
phases:
  - {name: ramp,    pattern: ramp, from: 4, to: 12, duration: 60s}
  - {name: sustain, rate: 12, duration: 180s}
  - {name: spikes,  pattern: burst, rate: 12, peak: 36, every: 15s, for: 3s, duration: 45s}
workloads:
  - {name: api_read, share: 45, http: {path: "/items?page={n}"}, thresholds: {p95: 300ms}}
  - {name: ingest, share: 5, http: {method: POST, path: /documents}, expect: {status: [202]}}
`)
	s, err := scenario.Parse(src, "scenario.yaml", scenario.Options{Scale: 0.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, "scale", s.Scale, "total", s.TotalDuration())
	for _, p := range s.Phases {
		fmt.Printf("%-8s %-8s %-5v peak %v req/s judged=%v\n", p.Name, p.Pattern, p.Duration, p.PeakRate(), p.Judged)
	}
	for _, w := range s.Workloads {
		fmt.Println(w.Name, w.Share, w.HTTP.Method, w.HTTP.Path, w.Expect.Status)
	}

	// Every problem of a file comes at once, one a line, by file:line: field.
	_, err = scenario.Parse([]byte("name: x\nphases:\n  - {name: a, rate: 0, duration: 1s}\n"), "scenario.yaml", scenario.Options{})
	fmt.Println(err)
	// Output:
	// demo-api scale 0.5 total 2m27.5s
	// ramp     ramp     30s   peak 12 req/s judged=false
	// sustain  constant 1m30s peak 12 req/s judged=true
	// spikes   burst    22.5s peak 36 req/s judged=false
	// api_read 45 GET /items?page={n} [200]
	// ingest 5 POST /documents [202]
	// scenario.yaml:1: workloads: is required
	// scenario.yaml:3: phases[0].rate: must be > 0
}
