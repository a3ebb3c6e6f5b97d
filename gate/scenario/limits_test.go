package scenario_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

// scen builds a small valid scenario with extra top-level lines (settings,
// ceilings) and the given workloads block (default: one workload).
func scen(top, workloads string) string {
	if workloads == "" {
		workloads = "workloads: [{name: read, http: {path: /}}]\n"
	}
	return "name: api\n" + top + "phases: [{name: sustain, rate: 10, duration: 10s}]\n" + workloads
}

// TestLimitsBad lists the inputs of issue 8 that must be refused, each with
// the exact error (file:line: field: message) and its sentinel.
func TestLimitsBad(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // exact error text
		is   error  // sentinel the error must wrap (nil: none of ours)
	}{
		// The case: a timeout of 100000h made a 1 s run last forever.
		{"timeout far above ceiling", scen("timeout: 100000h\n", ""),
			"scenario.yaml:2: timeout 100000h0m0s is above ceilings.timeout 1m0s", scenario.ErrCeiling},
		// Just above the default ceiling of 60s.
		{"timeout just above ceiling", scen("timeout: 61s\n", ""),
			"scenario.yaml:2: timeout 1m1s is above ceilings.timeout 1m0s", scenario.ErrCeiling},
		// An explicit drain is refused at its own line.
		{"drain above ceiling", scen("drain: 2m\n", ""),
			"scenario.yaml:2: drain 2m0s is above ceilings.drain 1m0s", scenario.ErrCeiling},
		// A drain that follows a raised timeout is refused at the timeout's line, saying why.
		{"implicit drain above ceilings.drain", scen("timeout: 90s\nceilings: {timeout: 2m, drain: 1m}\n", ""),
			"scenario.yaml:2: drain 1m30s (drain follows timeout when it is not set) is above ceilings.drain 1m0s: set drain, or raise ceilings.drain", scenario.ErrCeiling},
		// The ceilings themselves must be positive durations.
		{"zero timeout ceiling", scen("ceilings: {timeout: 0s}\n", ""),
			"scenario.yaml:2: ceilings.timeout: must be > 0", nil},
		{"negative drain ceiling", scen("ceilings: {drain: -1s}\n", ""),
			"scenario.yaml:2: ceilings.drain: must be > 0", nil},
		// max_body must be a positive size.
		{"max_body zero", scen("max_body: 0\n", ""),
			`scenario.yaml:2: max_body: invalid byte size "0": use a positive size such as 16MiB, 1MB, 512KiB or a number of bytes`, nil},
		{"max_body negative", scen("max_body: -1MiB\n", ""),
			`scenario.yaml:2: max_body: invalid byte size "-1MiB": use a positive size such as 16MiB, 1MB, 512KiB or a number of bytes`, nil},
		// An unknown unit is not guessed at.
		{"max_body unknown unit", scen("max_body: 16M\n", ""),
			`scenario.yaml:2: max_body: invalid byte size "16M": use a positive size such as 16MiB, 1MB, 512KiB or a number of bytes`, nil},
		// A fraction of a byte is not a size.
		{"max_body fraction of bytes", scen("max_body: 1.5\n", ""),
			`scenario.yaml:2: max_body: invalid byte size "1.5": use a positive size such as 16MiB, 1MB, 512KiB or a number of bytes`, nil},
		// Overflowing int64 is refused, not wrapped.
		{"max_body overflow", scen("max_body: 9999999999TiB\n", ""),
			`scenario.yaml:2: max_body: invalid byte size "9999999999TiB": use a positive size such as 16MiB, 1MB, 512KiB or a number of bytes`, nil},
		// Above the default ceiling of 1 GiB.
		{"max_body above ceiling", scen("max_body: 2GiB\n", ""),
			"scenario.yaml:2: max_body 2GiB is above ceilings.max_body 1GiB", scenario.ErrCeiling},
		// A list is not a size.
		{"max_body wrong type", scen("max_body: [1]\n", ""),
			"scenario.yaml:2: max_body: must be a byte size, not a list", nil},
		// The shares: 1e-300 used to fail later in the mix with exit 3.
		{"share tiny", scen("", "workloads: [{name: read, share: 1e-300, http: {path: /}}]\n"),
			"scenario.yaml:3: workloads[0].share: must be between 1e-06 and 1e+06, not 1e-300", nil},
		{"share huge", scen("", "workloads: [{name: read, share: 1e300, http: {path: /}}]\n"),
			"scenario.yaml:3: workloads[0].share: must be between 1e-06 and 1e+06, not 1e+300", nil},
		// Each share in range, but the smallest is less than a millionth of the largest.
		{"share ratio", scen("", "workloads:\n  - {name: big, share: 2, http: {path: /}}\n  - {name: small, share: 0.000001, http: {path: /}}\n"),
			"scenario.yaml:5: workloads[1].share: share 1e-06 of workload small is less than 1/1e+06 of the largest share (2, workload big): keep the largest share at most 1e+06 × the smallest", nil},
		// The port.
		{"target port 99999", scen("stack: {compose: [c.yaml], target: api:99999}\n", ""),
			`scenario.yaml:2: stack.target: "api:99999": port 99999 is outside 1-65535 (want service:port, such as api:8080)`, nil},
		// Port 0 is not a port one can send to.
		{"target port 0", scen("stack: {compose: [c.yaml], target: api:0}\n", ""),
			`scenario.yaml:2: stack.target: "api:0": port 0 is outside 1-65535 (want service:port, such as api:8080)`, nil},
		// A signed port is not digits.
		{"target port signed", scen("stack: {compose: [c.yaml], target: api:+80}\n", ""),
			`scenario.yaml:2: stack.target: "api:+80": port "+80" is not a number (want service:port, such as api:8080)`, nil},
		// A named port is not resolved.
		{"target port name", scen("stack: {compose: [c.yaml], target: api:http}\n", ""),
			`scenario.yaml:2: stack.target: "api:http": port "http" is not a number (want service:port, such as api:8080)`, nil},
		// No service.
		{"target no service", scen("stack: {compose: [c.yaml], target: \":8080\"}\n", ""),
			`scenario.yaml:2: stack.target: must be service:port, such as api:8080, not ":8080"`, nil},
		// error_rate keeps its range; none is the only word.
		{"error_rate word", scen("", "workloads: [{name: read, http: {path: /}, thresholds: {error_rate: off}}]\n"),
			`scenario.yaml:3: workloads[0].thresholds.error_rate: must be a percent such as "0.1%", a fraction in [0,1], or none, not the string "off"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(tt.src), "scenario.yaml", scenario.Options{})
			if err == nil {
				t.Fatalf("Parse succeeded; want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("err:\n got %s\nwant %s", err, tt.want)
			}
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Errorf("%v is not a *scenario.Error", err)
			}
			for _, s := range []error{scenario.ErrCeiling, scenario.ErrLimit} {
				if errors.Is(err, s) != (s == tt.is) {
					t.Errorf("errors.Is(err, %v) = %v, want %v", s, !(s == tt.is), s == tt.is)
				}
			}
		})
	}
}

// TestLimitsGood lists values at or inside the new bounds that must load.
func TestLimitsGood(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(*scenario.Scenario) bool
	}{
		// Binary units.
		{"max_body MiB", scen("max_body: 16MiB\n", ""), func(s *scenario.Scenario) bool { return s.MaxBody == 16<<20 }},
		// Decimal units.
		{"max_body MB", scen("max_body: 1MB\n", ""), func(s *scenario.Scenario) bool { return s.MaxBody == 1e6 }},
		// A bare integer is bytes.
		{"max_body bytes", scen("max_body: 1048576\n", ""), func(s *scenario.Scenario) bool { return s.MaxBody == 1<<20 }},
		// A fraction with a unit.
		{"max_body fraction", scen("max_body: 1.5KiB\n", ""), func(s *scenario.Scenario) bool { return s.MaxBody == 1536 }},
		// Exactly the default ceiling.
		{"max_body at ceiling", scen("max_body: 1GiB\n", ""), func(s *scenario.Scenario) bool { return s.MaxBody == 1<<30 }},
		// A raised ceiling admits more.
		{"max_body raised ceiling", scen("max_body: 2GiB\nceilings: {max_body: 4GiB}\n", ""), func(s *scenario.Scenario) bool {
			return s.MaxBody == 2<<30 && s.Ceilings.MaxBody == 4<<30
		}},
		// Exactly the default timeout ceiling; drain follows it, also at its ceiling.
		{"timeout at ceiling", scen("timeout: 60s\n", ""), func(s *scenario.Scenario) bool {
			return s.Timeout == time.Minute && s.Drain == time.Minute
		}},
		// Raising ceilings.timeout raises ceilings.drain with it, as drain follows timeout.
		{"drain ceiling follows timeout ceiling", scen("timeout: 90s\nceilings: {timeout: 2m}\n", ""), func(s *scenario.Scenario) bool {
			return s.Ceilings.Timeout == 2*time.Minute && s.Ceilings.Drain == 2*time.Minute && s.Drain == 90*time.Second
		}},
		// Both ceilings set independently.
		{"both ceilings", scen("timeout: 10s\ndrain: 5m\nceilings: {timeout: 10s, drain: 5m}\n", ""), func(s *scenario.Scenario) bool {
			return s.Ceilings.Timeout == 10*time.Second && s.Ceilings.Drain == 5*time.Minute
		}},
		// Shares at the edges of the range and exactly MaxShareRatio apart.
		{"shares at the ratio", scen("", "workloads:\n  - {name: a, share: 1000000, http: {path: /}}\n  - {name: b, share: 1, http: {path: /}}\n"), func(s *scenario.Scenario) bool {
			return s.Workloads[0].Share == 1e6 && s.Workloads[1].Share == 1
		}},
		{"smallest share", scen("", "workloads: [{name: a, share: 0.000001, http: {path: /}}]\n"), func(s *scenario.Scenario) bool {
			return s.Workloads[0].Share == 1e-6
		}},
		// The highest port.
		{"port 65535", scen("stack: {compose: [c.yaml], target: api:65535}\n", ""), func(s *scenario.Scenario) bool {
			return s.Stack.Target == "api:65535"
		}},
		// An IPv6 literal as the service is still service:port.
		{"ipv6 target", scen("stack: {compose: [c.yaml], target: \"[::1]:8080\"}\n", ""), func(s *scenario.Scenario) bool {
			return s.Stack.Target == "[::1]:8080"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, tt.src, scenario.Options{})
			if !tt.check(s) {
				t.Errorf("unexpected scenario: %+v", s)
			}
		})
	}
}

// cellsScenario has the given phases and workloads, and a warm-up when warmup.
func cellsScenario(phases, workloads int, warmup bool) string {
	var b strings.Builder
	b.WriteString("name: api\n")
	if warmup {
		b.WriteString("warmup: 1s\n")
	}
	b.WriteString("phases:\n")
	for i := range phases {
		fmt.Fprintf(&b, "  - {name: p%d, rate: 1, duration: 1s}\n", i)
	}
	b.WriteString("workloads:\n")
	for i := range workloads {
		fmt.Fprintf(&b, "  - {name: w%d, http: {path: /}}\n", i)
	}
	return b.String()
}

// TestRegression_PhasesTimesWorkloadsUnbounded: a 7.7 KB scenario of 101
// phases × 100 workloads took the generator to 3.4 GiB; it is now refused
// naming both numbers, as a fixed limit (exit 2 in cmd).
func TestRegression_PhasesTimesWorkloadsUnbounded(t *testing.T) {
	tests := []struct {
		name              string
		phases, workloads int
		warmup            bool
		want              string // "" when it loads
	}{
		// The scenario.
		{"issue 101x100", 101, 100, false,
			"scenario.yaml:2: phases: 101 phases × 100 workloads = 10100 cells exceeds the limit of 1024 (the engine keeps histograms per segment and workload)"},
		// The warm-up is a segment of its own.
		{"warm-up counts", 32, 32, true,
			"scenario.yaml:3: phases: 33 segments (32 phases + the warm-up) × 32 workloads = 1056 cells exceeds the limit of 1024 (the engine keeps histograms per segment and workload)"},
		// Many workloads in one phase.
		{"one phase, many workloads", 1, 1025, false,
			"scenario.yaml:2: phases: 1 phases × 1025 workloads = 1025 cells exceeds the limit of 1024 (the engine keeps histograms per segment and workload)"},
		// Exactly at the limit.
		{"at the limit", 32, 32, false, ""},
		// At the limit with the warm-up.
		{"at the limit with warm-up", 31, 32, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(cellsScenario(tt.phases, tt.workloads, tt.warmup)), "scenario.yaml", scenario.Options{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err:\n got %v\nwant %s", err, tt.want)
			}
			if !errors.Is(err, scenario.ErrLimit) || errors.Is(err, scenario.ErrCeiling) {
				t.Errorf("err %v: want ErrLimit, not ErrCeiling", err)
			}
		})
	}
}

// TestRegression_TimeoutWithoutCeiling: timeout: 100000h was accepted and a
// 1 s run was still going after 30 s.
func TestRegression_TimeoutWithoutCeiling(t *testing.T) {
	tests := []struct {
		src  string
		line int // 0: loads
	}{
		// The file.
		{scen("timeout: 100000h\n", ""), 2},
		// The same wall time through drain.
		{scen("timeout: 1s\ndrain: 100000h\n", ""), 3},
		// The duration ceiling does not cover the timeout.
		{scen("timeout: 100000h\nceilings: {duration: 200000h}\n", ""), 2},
		// A deliberate opt-in loads: ceilings.drain follows ceilings.timeout.
		{scen("timeout: 100000h\nceilings: {timeout: 100000h}\n", ""), 0},
	}
	for _, tt := range tests {
		_, err := scenario.Parse([]byte(tt.src), "load.yaml", scenario.Options{})
		if tt.line == 0 {
			if err != nil {
				t.Errorf("%q: %v", tt.src, err)
			}
			continue
		}
		var se *scenario.Error
		if !errors.Is(err, scenario.ErrCeiling) || !errors.As(err, &se) || se.Line != tt.line || !strings.HasPrefix(err.Error(), fmt.Sprintf("load.yaml:%d: ", tt.line)) {
			t.Errorf("%q: err = %v, want a ceiling refusal at load.yaml:%d", tt.src, err, tt.line)
		}
	}
}

// TestRegression_ScaleZeroRunsFullScale: --scale 0 ran at full scale though
// the README says 0 < F <= 1. With ScaleSet (what a --scale flag passes) 0
// is refused; Options{} still means "no scaling".
func TestRegression_ScaleZeroRunsFullScale(t *testing.T) {
	tests := []struct {
		opts    scenario.Options
		wantErr string // "" when it loads unscaled
	}{
		// The flag's value 0: refused.
		{scenario.Options{Scale: 0, ScaleSet: true}, "testdata/demo.yaml: --scale: must be > 0 and <= 1, not 0"},
		// Negative, set or not: refused.
		{scenario.Options{Scale: -0.5, ScaleSet: true}, "testdata/demo.yaml: --scale: must be > 0 and <= 1, not -0.5"},
		{scenario.Options{Scale: -0.5}, "testdata/demo.yaml: --scale: must be > 0 and <= 1, not -0.5"},
		// Above 1: refused.
		{scenario.Options{Scale: 1.5, ScaleSet: true}, "testdata/demo.yaml: --scale: must be > 0 and <= 1, not 1.5"},
		// The flag's default 1: unscaled.
		{scenario.Options{Scale: 1, ScaleSet: true}, ""},
		// The zero Options: unscaled.
		{scenario.Options{}, ""},
	}
	for _, tt := range tests {
		s, err := scenario.Load("testdata/demo.yaml", tt.opts)
		if tt.wantErr == "" {
			if err != nil || s.Scale != 1 {
				t.Errorf("%+v: err = %v, scale %v; want unscaled", tt.opts, err, s.Scale)
			}
			continue
		}
		var se *scenario.Error
		if err == nil || err.Error() != tt.wantErr || !errors.As(err, &se) || se.Field != "--scale" {
			t.Errorf("%+v: err = %v, want %s", tt.opts, err, tt.wantErr)
		}
	}
}

// TestRegression_SharesOutOfRangeExit3: shares of 1e-300 and 1e300 passed
// the scenario and failed later in the mix, exit 3 without file:line.
func TestRegression_SharesOutOfRangeExit3(t *testing.T) {
	for _, share := range []string{"1e-300", "1e300", "1.7976931348623157e308", "5e-324"} {
		src := scen("", "workloads:\n  - {name: a, http: {path: /}}\n  - {name: b, share: "+share+", http: {path: /}}\n")
		_, err := scenario.Parse([]byte(src), "load.yaml", scenario.Options{})
		var se *scenario.Error
		if !errors.As(err, &se) || se.Line != 5 || se.Field != "workloads[1].share" {
			t.Errorf("share %s: err = %v, want load.yaml:5: workloads[1].share", share, err)
		}
	}
}

// TestRegression_Port99999Accepted: stack.target api:99999 must be refused
// with file:line; ParsePort and CheckServiceTarget are the helpers for the
// ports cmd reads from flags.
func TestRegression_Port99999Accepted(t *testing.T) {
	_, err := scenario.Parse([]byte(scen("stack: {compose: [c.yaml], target: api:99999}\n", "")), "load.yaml", scenario.Options{})
	var se *scenario.Error
	if !errors.As(err, &se) || se.Line != 2 || se.Field != "stack.target" {
		t.Errorf("err = %v, want load.yaml:2: stack.target", err)
	}
	ports := []struct {
		in string
		ok bool
	}{
		{"1", true},                     // lowest
		{"8080", true},                  // usual
		{"65535", true},                 // highest
		{"0", false},                    // reserved
		{"65536", false},                // one too many
		{"99999", false},                // the issue's
		{"", false},                     // empty
		{"-1", false},                   // signed
		{"+80", false},                  // signed
		{"http", false},                 // a service name
		{"99999999999999999999", false}, // overflows int
	}
	for _, p := range ports {
		if _, err := scenario.ParsePort(p.in); (err == nil) != p.ok {
			t.Errorf("ParsePort(%q) err = %v, want ok %v", p.in, err, p.ok)
		}
	}
	if err := scenario.CheckServiceTarget("api:99999"); err == nil {
		t.Error("CheckServiceTarget(api:99999) accepted")
	}
	if err := scenario.CheckServiceTarget("api:8080"); err != nil {
		t.Errorf("CheckServiceTarget(api:8080): %v", err)
	}
}

// TestRegression_HalfFailingRunPasses: a workload without error_rate passed
// at any error rate. It now carries the documented default (1%), marked as
// the default; a scenario can override it or remove it with none.
func TestRegression_HalfFailingRunPasses(t *testing.T) {
	tests := []struct {
		name        string
		thresholds  string
		rate        float64
		has, isDflt bool
	}{
		// No thresholds at all: the default.
		{"no thresholds", "", scenario.DefaultErrorRate, true, true},
		// Thresholds without error_rate: the default beside them.
		{"latency only", ", thresholds: {p99: 1s}", 0.01, true, true},
		// An explicit value wins.
		{"explicit", ", thresholds: {error_rate: 5%}", 0.05, true, false},
		// An explicit value equal to the default is not the default.
		{"explicit 1%", ", thresholds: {error_rate: 1%}", 0.01, true, false},
		// 100% accepts any error rate, as a threshold the report shows.
		{"100%", ", thresholds: {error_rate: 100%}", 1, true, false},
		// none removes the threshold.
		{"none", ", thresholds: {error_rate: none}", -1, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustParse(t, scen("", "workloads: [{name: read, http: {path: /}"+tt.thresholds+"}]\n"), scenario.Options{})
			th := s.Workloads[0].Thresholds
			if th.ErrorRate != tt.rate || th.HasErrorRate() != tt.has || th.ErrorRateDefault != tt.isDflt {
				t.Errorf("thresholds = %+v, want rate %v has %v default %v", th, tt.rate, tt.has, tt.isDflt)
			}
		})
	}
}

// TestRegression_HugeScenarioFileMemory: a 50 MB scenario of junk keys took
// 1.7 GB. Load and Parse refuse it before parsing: quickly, and with memory
// bounded by MaxFileBytes, not by the file.
func TestRegression_HugeScenarioFileMemory(t *testing.T) {
	const size = 50 << 20
	var b bytes.Buffer
	b.Grow(size + 64)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "junk_key_%d: %d\n", i, i)
	}
	data := b.Bytes()
	path := filepath.Join(t.TempDir(), "junk.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, loadErr := scenario.Load(path, scenario.Options{})
	_, parseErr := scenario.Parse(data, "junk.yaml", scenario.Options{})
	took := time.Since(start)
	runtime.ReadMemStats(&after)

	for _, err := range []error{loadErr, parseErr} {
		var se *scenario.Error
		if !errors.Is(err, scenario.ErrLimit) || !errors.As(err, &se) || !strings.Contains(err.Error(), "above the limit of 1MiB") {
			t.Errorf("err = %v, want a MaxFileBytes refusal", err)
		}
	}
	if !strings.HasPrefix(loadErr.Error(), path+": the scenario file is ") {
		t.Errorf("Load error %q does not name the file", loadErr)
	}
	if took > 2*time.Second {
		t.Errorf("refusing took %v", took)
	}
	// Load may read at most MaxFileBytes+1 bytes; Parse allocates nothing.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*scenario.MaxFileBytes {
		t.Errorf("refusing allocated %d bytes", alloc)
	}

	// A file just under the limit still loads; one byte over does not.
	ok := []byte(scen("", ""))
	pad := append(append([]byte{}, ok...), bytes.Repeat([]byte("#"), scenario.MaxFileBytes-len(ok))...)
	if _, err := scenario.Parse(pad, "pad.yaml", scenario.Options{}); err != nil {
		t.Errorf("a file of exactly MaxFileBytes: %v", err)
	}
	if _, err := scenario.Parse(append(pad, '#'), "pad.yaml", scenario.Options{}); !errors.Is(err, scenario.ErrLimit) {
		t.Errorf("a file of MaxFileBytes+1: err = %v, want ErrLimit", err)
	}
}

// TestLoadNonRegularFile: a stream without a size (a pipe, /dev/zero) is
// read only up to MaxFileBytes+1.
func TestLoadNonRegularFile(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := scenario.Load("/dev/zero", scenario.Options{})
	if !errors.Is(err, scenario.ErrLimit) || err.Error() != "/dev/zero: the scenario file is larger than 1MiB; a scenario is a few KiB" {
		t.Errorf("err = %v", err)
	}
}

// TestMaxBodyInHash: a body limit changes what counts as a failure, so it is
// part of the load's hash; ceilings.max_body is not.
func TestMaxBodyInHash(t *testing.T) {
	base := hashOf(t, scen("", ""), scenario.Options{})
	if got := hashOf(t, scen("max_body: 16MiB\n", ""), scenario.Options{}); got != base {
		t.Error("an explicit default max_body changed the hash")
	}
	if got := hashOf(t, scen("max_body: 1MiB\n", ""), scenario.Options{}); got == base {
		t.Error("max_body did not change the hash")
	}
	if got := hashOf(t, scen("ceilings: {max_body: 2GiB, timeout: 30s, drain: 40s}\n", ""), scenario.Options{}); got != base {
		t.Error("ceilings changed the hash")
	}
	if got := hashOf(t, scen("", "workloads: [{name: read, http: {path: /}, thresholds: {error_rate: none}}]\n"), scenario.Options{}); got != base {
		t.Error("error_rate: none changed the hash")
	}
}

func TestParseBytesAndFormat(t *testing.T) {
	tests := []struct {
		in   string
		want int64 // 0: refused
	}{
		{"1", 1},                           // one byte
		{"100B", 100},                      // explicit bytes
		{"512KiB", 512 << 10},              // binary
		{"16MiB", 16 << 20},                // the default
		{"1GiB", 1 << 30},                  // the default ceiling
		{"1TiB", 1 << 40},                  // large
		{"1kB", 1000},                      // decimal, SI spelling
		{"1KB", 1000},                      // decimal
		{"1MB", 1e6},                       // decimal
		{"2GB", 2e9},                       // decimal
		{"0.5MiB", 512 << 10},              // fraction with unit
		{" 8 MiB ", 8 << 20},               // spaces
		{"0", 0},                           // zero
		{"0.0001B", 0},                     // below a byte
		{"1e6", 0},                         // exponent: ambiguous, refused
		{"0x10", 0},                        // hex
		{"MiB", 0},                         // no number
		{"", 0},                            // empty
		{"NaNMiB", 0},                      // not a number
		{"InfGiB", 0},                      // infinite
		{"9223372036854775807", 1<<63 - 1}, // max int64
		{"8388608TiB", 0},                  // 2^63: overflows
	}
	for _, tt := range tests {
		got, ok := scenario.ParseBytes(tt.in)
		if ok != (tt.want != 0) || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.in, got, ok, tt.want)
		}
	}
	for n, want := range map[int64]string{
		16 << 20: "16MiB",    // whole MiB
		1 << 30:  "1GiB",     // whole GiB
		1536:     "1536B",    // 1.5KiB is not a whole unit
		1e6:      "1000000B", // decimal sizes print as bytes
		1:        "1B",       // one byte
	} {
		if got := scenario.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
