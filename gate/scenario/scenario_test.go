package scenario_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

func mustParse(t *testing.T, src string, opts scenario.Options) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse([]byte(src), "scenario.yaml", opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func judged(s *scenario.Scenario) string {
	p, ok := s.JudgedPhase()
	if !ok {
		return ""
	}
	return p.Name
}

func TestParseGood(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, s *scenario.Scenario)
	}{
		{"defaults", `
name: api
phases: [{name: only, rate: 10, duration: 10s}]
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			want := scenario.DefaultCeilings()
			if s.MaxBody != 16<<20 || scenario.DefaultMaxBody != 16<<20 || want.MaxBody != 1<<30 {
				t.Errorf("MaxBody = %d (ceiling %d), want 16MiB (ceiling 1GiB)", s.MaxBody, want.MaxBody)
			}
			if s.Timeout != 5*time.Second || s.MaxInFlight != 512 || s.LateAfter != 5*time.Millisecond ||
				s.Drain != 5*time.Second || s.HTTPVersion != "1.1" || s.Ceilings != want || s.Scale != 1 || s.Stack != nil || s.Warmup != 0 {
				t.Errorf("defaults not applied: %+v", s)
			}
			w := s.Workloads[0]
			if w.HTTP.Method != "GET" || !slices.Equal(w.Expect.Status, []int{200}) || w.Share != 1 ||
				!w.Thresholds.HasErrorRate() || w.Thresholds.ErrorRate != 0.01 || !w.Thresholds.ErrorRateDefault {
				t.Errorf("workload defaults not applied: %+v", w)
			}
			if p := s.Phases[0]; p.Pattern != scenario.Constant || !p.Judged || p.Line != 3 {
				t.Errorf("phase = %+v; want constant, judged, line 3", p)
			}
			if !strings.HasPrefix(s.Hash, "sha256:") || len(s.Hash) != len("sha256:")+64 {
				t.Errorf("Hash = %q", s.Hash)
			}
		}},
		{"drain follows timeout", `
name: api
timeout: 2s
phases: [{name: only, rate: 10, duration: 10s}]
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			if s.Drain != 2*time.Second {
				t.Errorf("Drain = %v, want 2s", s.Drain)
			}
		}},
		{"settings", `
name: api
warmup: 1m30s
timeout: 300ms
drain: 0s
late_after: 5ms
max_in_flight: 64
http_version: 2
ceilings: {rate: 50}
phases: [{name: only, rate: 50, duration: 10s}]
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			if s.Warmup != 90*time.Second || s.Timeout != 300*time.Millisecond || s.Drain != 0 ||
				s.LateAfter != 5*time.Millisecond || s.MaxInFlight != 64 || s.HTTPVersion != "2" {
				t.Errorf("settings not decoded: %+v", s)
			}
			if s.Ceilings.Rate != 50 || s.Ceilings.Duration != time.Hour || s.Ceilings.InFlight != 10000 {
				t.Errorf("partial ceilings = %+v", s.Ceilings)
			}
		}},
		{"patterns", `
name: api
phases:
  - {name: up, pattern: ramp, from: 0, to: 12, duration: 60s}
  - {name: steps, pattern: step, rates: [5, 10, 20], hold: 10s}
  - {name: steps2, pattern: step, rates: [1, 2], hold: 5s, duration: 10s}
  - {name: spikes, pattern: burst, rate: 10, peak: 40, every: 10s, for: 2s, duration: 60s}
  - {name: flat, rate: 12, duration: 30s}
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			ps := s.Phases
			if ps[0].From != 0 || ps[0].To != 12 || ps[0].PeakRate() != 12 {
				t.Errorf("ramp = %+v", ps[0])
			}
			if ps[1].Duration != 30*time.Second || ps[1].Hold != 10*time.Second || ps[1].PeakRate() != 20 {
				t.Errorf("step = %+v", ps[1])
			}
			if ps[2].Duration != 10*time.Second {
				t.Errorf("step with duration = %+v", ps[2])
			}
			if p := ps[3]; p.Rate != 10 || p.Peak != 40 || p.Every != 10*time.Second || p.For != 2*time.Second || p.PeakRate() != 40 {
				t.Errorf("burst = %+v", p)
			}
			if judged(s) != "flat" {
				t.Errorf("judged = %q, want the only constant phase", judged(s))
			}
			if got := s.TotalDuration(); got != 190*time.Second {
				t.Errorf("TotalDuration = %v, want 190s", got)
			}
		}},
		{"judged sustain by name", `
name: api
phases:
  - {name: long, rate: 5, duration: 10m}
  - {name: sustain, rate: 12, duration: 1m}
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			if judged(s) != "sustain" {
				t.Errorf("judged = %q, want sustain", judged(s))
			}
		}},
		{"judged explicit", `
name: api
phases:
  - {name: sustain, rate: 12, duration: 1m}
  - {name: peak, rate: 30, duration: 1m, judged: true}
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			if judged(s) != "peak" || s.Phases[0].Judged {
				t.Errorf("judged = %q, want only peak", judged(s))
			}
		}},
		{"judged longest constant, judged false respected", `
name: api
phases:
  - {name: sustain, rate: 12, duration: 1m, judged: false}
  - {name: a, rate: 5, duration: 2m}
  - {name: b, rate: 5, duration: 3m}
  - {name: c, rate: 5, duration: 3m}
workloads: [{name: read, http: {path: /}}]
`, func(t *testing.T, s *scenario.Scenario) {
			if judged(s) != "b" {
				t.Errorf("judged = %q, want b (longest, first of ties)", judged(s))
			}
		}},
		{"workload fields", `
name: api
phases: [{name: sustain, rate: 12, duration: 1m}]
workloads:
  - name: write
    share: 2.5
    http:
      method: POST
      path: "/users/{user}/items/{n}"
      headers: {Content-Type: application/json, X-Count: 5}
      body: '{"user":"{user}","kind":"{kind}"}'
      vars: {user: [alice, bob, 7], kind: [a]}
    expect: {status: [201, 202]}
    thresholds: {p50: 10ms, p90: 20ms, p95: 30ms, p99: 40ms, p999: 1s, error_rate: 0.001}
  - name: read
    http: {path: /, method: HEAD}
    thresholds: {error_rate: 2.5%}
`, func(t *testing.T, s *scenario.Scenario) {
			w := s.Workloads[0]
			if w.Share != 2.5 || w.HTTP.Method != "POST" || w.HTTP.Headers["X-Count"] != "5" ||
				!slices.Equal(w.HTTP.Vars["user"], []string{"alice", "bob", "7"}) || !slices.Equal(w.Expect.Status, []int{201, 202}) {
				t.Errorf("workload = %+v %+v", w, w.HTTP)
			}
			th := w.Thresholds
			if th.P50 != 10*time.Millisecond || th.P999 != time.Second || th.ErrorRate != 0.001 {
				t.Errorf("thresholds = %+v", th)
			}
			if r := s.Workloads[1].Thresholds.ErrorRate; r != 0.025 {
				t.Errorf("error_rate 2.5%% = %v", r)
			}
			if s.Workloads[0].Line != 5 || s.Workloads[1].Line != 15 {
				t.Errorf("lines = %d, %d", s.Workloads[0].Line, s.Workloads[1].Line)
			}
		}},
		{"anchors, merge keys and x- keys", `
name: api
x-common: &common {method: POST, headers: {X-A: "1"}}
x-flat: &flat {rate: 10, duration: 10s}
phases:
  - {<<: *flat, name: sustain}
  - {<<: *flat, name: more, rate: 20}
workloads:
  - {name: a, http: {<<: *common, path: /a}}
  - {name: b, http: {<<: *common, path: /b, method: PUT}}
`, func(t *testing.T, s *scenario.Scenario) {
			if s.Phases[1].Rate != 20 || s.Phases[1].Duration != 10*time.Second {
				t.Errorf("merged phase = %+v", s.Phases[1])
			}
			if s.Workloads[0].HTTP.Method != "POST" || s.Workloads[1].HTTP.Method != "PUT" || s.Workloads[1].HTTP.Headers["X-A"] != "1" {
				t.Errorf("merged http = %+v %+v", s.Workloads[0].HTTP, s.Workloads[1].HTTP)
			}
		}},
		{"null keys are absent", `
name: api
warmup:
stack:
phases: [{name: sustain, rate: 12, duration: 1m, pattern: ~}]
workloads: [{name: read, http: {path: /, headers: }}]
`, func(t *testing.T, s *scenario.Scenario) {
			if s.Stack != nil || s.Warmup != 0 || s.Phases[0].Pattern != scenario.Constant {
				t.Errorf("null keys not treated as absent: %+v", s)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, mustParse(t, tt.src, scenario.Options{})) })
	}
}

func TestLoadDemo(t *testing.T) {
	s, err := scenario.Load("testdata/demo.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/compose.yaml")
	if s.Stack == nil || !slices.Equal(s.Stack.Compose, []string{abs}) || s.Stack.Target != "api:8080" {
		t.Errorf("stack = %+v, want compose %s", s.Stack, abs)
	}
	if s.File != "testdata/demo.yaml" || s.Name != "demo-api" || len(s.Phases) != 4 || len(s.Workloads) != 2 {
		t.Errorf("scenario = %+v", s)
	}
	if judged(s) != "sustain" {
		t.Errorf("judged = %q", judged(s))
	}
	if got := s.TotalDuration(); got != 355*time.Second {
		t.Errorf("TotalDuration = %v, want 355s", got)
	}
	if s.Workloads[1].Thresholds.ErrorRate != 0 || !s.Workloads[1].Thresholds.HasErrorRate() {
		t.Errorf("error_rate 0%% = %+v", s.Workloads[1].Thresholds)
	}
}

func TestScale(t *testing.T) {
	const src = `
name: api
warmup: 10s
phases:
  - {name: up, pattern: ramp, from: 1, to: 10, duration: 60s}
  - {name: steps, pattern: step, rates: [5, 10], hold: 10s}
  - {name: spikes, pattern: burst, rate: 10, peak: 40, every: 10s, for: 2s, duration: 60s}
  - {name: sustain, rate: 12, duration: 3m}
workloads: [{name: read, http: {path: /}}]
`
	s := mustParse(t, src, scenario.Options{Scale: 0.5})
	if s.Scale != 0.5 || s.Warmup != 5*time.Second {
		t.Errorf("Scale = %v, Warmup = %v", s.Scale, s.Warmup)
	}
	ps := s.Phases
	if ps[0].Duration != 30*time.Second || ps[0].From != 1 || ps[0].To != 10 {
		t.Errorf("ramp = %+v", ps[0])
	}
	if ps[1].Hold != 5*time.Second || ps[1].Duration != 10*time.Second || !slices.Equal(ps[1].Rates, []float64{5, 10}) {
		t.Errorf("step = %+v", ps[1])
	}
	if ps[2].Every != 5*time.Second || ps[2].For != time.Second || ps[2].Duration != 30*time.Second || ps[2].Peak != 40 {
		t.Errorf("burst = %+v", ps[2])
	}
	if ps[3].Duration != 90*time.Second || ps[3].Rate != 12 {
		t.Errorf("constant = %+v", ps[3])
	}
	if one := mustParse(t, src, scenario.Options{Scale: 1}); one.Hash != mustParse(t, src, scenario.Options{}).Hash || one.Scale != 1 {
		t.Error("--scale 1 differs from no scale")
	}
}

func TestScaleAppliesBeforeCeilings(t *testing.T) {
	const src = `
name: api
ceilings: {duration: 1m}
phases: [{name: sustain, rate: 12, duration: 100s}]
workloads: [{name: read, http: {path: /}}]
`
	_, err := scenario.Parse([]byte(src), "scenario.yaml", scenario.Options{})
	if !errors.Is(err, scenario.ErrCeiling) {
		t.Fatalf("unscaled: err = %v, want a ceiling refusal", err)
	}
	mustParse(t, src, scenario.Options{Scale: 0.5})
}

func TestScaleTooSmall(t *testing.T) {
	const src = `
name: api
phases: [{name: sustain, rate: 12, duration: 1ns}]
workloads: [{name: read, http: {path: /}}]
`
	_, err := scenario.Parse([]byte(src), "scenario.yaml", scenario.Options{Scale: 0.1})
	want := "scenario.yaml:3: phases[0]: --scale 0.1 makes phase sustain too short to run"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func TestCheckCeilings(t *testing.T) {
	s := mustParse(t, `
name: api
phases:
  - {name: sustain, rate: 12, duration: 1m}
  - {name: burst, pattern: burst, rate: 12, peak: 600, every: 10s, for: 1s, duration: 1m}
workloads: [{name: read, http: {path: /}}]
`, scenario.Options{})
	s.Ceilings.Rate = 500
	err := s.CheckCeilings()
	want := "scenario.yaml:5: phase burst asks for 600 req/s, above ceilings.rate 500"
	if !errors.Is(err, scenario.ErrCeiling) || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	s.Ceilings = scenario.DefaultCeilings()
	if err := s.CheckCeilings(); err != nil {
		t.Errorf("default ceilings: %v", err)
	}
	s.Ceilings.Duration = time.Minute
	if err := s.CheckCeilings(); !errors.Is(err, scenario.ErrCeiling) || !strings.Contains(err.Error(), "ceilings.duration 1m0s") {
		t.Errorf("duration: err = %v", err)
	}
}
