package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

func TestNearestRank(t *testing.T) {
	v := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    float64
		want int64
	}{{50, 5}, {99, 10}, {10, 1}, {10.1, 2}, {100, 10}, {0.0001, 1}} {
		if got := nearestRank(v, c.p); got != c.want {
			t.Errorf("p%g = %d, want %d", c.p, got, c.want)
		}
	}
	if nearestRank(nil, 50) != 0 {
		t.Error("empty")
	}
}

func TestSummarizeVegeta(t *testing.T) {
	// rate 1000/s: interval 1 ms. vegeta's first hit is due one interval
	// after began; the start estimate absorbs that offset.
	const began = int64(1_700_000_000_000_000_000)
	ms := int64(time.Millisecond)
	var hits []vegetaHit
	for i := int64(0); i < 100; i++ {
		ts := began + (i+1)*ms
		if i == 50 {
			ts += 3 * ms // one hit 3 ms late
		}
		hits = append(hits, vegetaHit{Seq: uint64(i), TS: ts, Latency: ms / 2, OK: i != 7})
	}
	s := summarizeVegeta(hits, 1000)
	if s.Start != began+ms {
		t.Fatalf("start %d, want %d", s.Start, began+ms)
	}
	if s.P50 != 0 || s.P99 != 0 || s.Max != 3 {
		t.Errorf("lateness p50 %g p99 %g max %g, want 0 0 3", s.P50, s.P99, s.Max)
	}
	if s.OK != 99 || s.Hits != 100 {
		t.Errorf("ok %d hits %d", s.OK, s.Hits)
	}
	// span: from start (began+1ms) to the last completion (began+100ms+0.5ms).
	if want := 99.0 / 0.0995; abs(s.HeldRate-want) > 1e-6 {
		t.Errorf("held %g, want %g", s.HeldRate, want)
	}

	// A pacer that fell behind: every hit 2 ms later than the one before
	// wants at rate 1000/s → lateness grows by 1 ms per hit.
	hits = hits[:0]
	for i := int64(0); i < 100; i++ {
		hits = append(hits, vegetaHit{Seq: uint64(i), TS: began + 2*i*ms, OK: true})
	}
	s = summarizeVegeta(hits, 1000)
	if s.P50 != 49 || s.P99 != 98 || s.Max != 99 {
		t.Errorf("behind: p50 %g p99 %g max %g, want 49 98 99", s.P50, s.P99, s.Max)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestParseVegetaCSV(t *testing.T) {
	in := "1700000000000100000,200,150000,0,2,,b2s=,,0,GET,http://127.0.0.1:1/,\n" +
		"1700000000000300000,0,5000000000,0,0,\"Get \"\"http://127.0.0.1:1/\"\": context deadline exceeded\",,,1,GET,http://127.0.0.1:1/,\n" +
		"1700000000000500000,503,1000,0,0,,,,2,GET,http://127.0.0.1:1/,\n"
	hits, errs, err := parseVegetaCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || !hits[0].OK || hits[1].OK || hits[2].OK || hits[1].Seq != 1 || hits[0].Latency != 150000 {
		t.Fatalf("hits %+v", hits)
	}
	if errs["context deadline exceeded"] != 1 || errs["status 503"] != 1 {
		t.Fatalf("errs %v", errs)
	}
}

func TestJudge(t *testing.T) {
	c := criterion{MinSuccess: 0.99, MaxLatenessMS: 10}
	r := run{Offered: 1000, Succeeded: 990, LatenessN: 1000, LatenessP99: 10}
	if c.judge(&r); !r.Held {
		t.Errorf("should hold: %s", r.Why)
	}
	r.Succeeded = 989
	if c.judge(&r); r.Held {
		t.Error("989/1000 should not hold")
	}
	r.Succeeded, r.LatenessP99 = 1000, 10.01
	if c.judge(&r); r.Held {
		t.Error("p99 10.01 ms should not hold")
	}
	r.LatenessP99, r.LatenessN = 1, 0
	if c.judge(&r); r.Held {
		t.Error("no lateness samples: not measured, not held")
	}
	r.LatenessN, r.Unusable = 1000, "offered != recorded"
	if c.judge(&r); r.Held {
		t.Error("unusable should not hold")
	}
}

func TestLoadgateResult(t *testing.T) {
	res := result.Result{Schema: result.Schema, Offered: 50000, Recorded: 50000, Usable: true, Late: 3,
		LatenessMS: result.Summary{Count: 50000, P50: 0.021, P90: 0.05, P95: 0.07, P99: 0.31, P999: 1.2, Max: 4.5},
		Phases: []result.Phase{{Name: "sustain", Judged: true, DurationS: 10, Workloads: []result.Workload{{
			Name: "get", Offered: 50000, Succeeded: 49990, Failed: 7, Abandoned: 3, Failures: map[string]int64{"timeout": 7},
			LatencyMS:  result.Summary{Count: 49990, P50: 0.1},
			Throughput: result.Throughput{CompletedPerS: 4999.7, OfferedPerS: 5000},
		}}}}}
	r := run{Offered: 50000}
	fillFromResult(&r, &res)
	if r.Succeeded != 49990 || r.Sent != 49997 || r.Errors != 10 || r.HeldRate != 4999 {
		t.Errorf("counts %+v", r)
	}
	if r.LatenessN != 50000 || r.LatenessP50 != 0.021 || r.LatenessP99 != 0.31 || r.Unusable != "" {
		t.Errorf("lateness %+v", r)
	}
	res.Usable, res.Unusable = false, []string{"offered 50000 != recorded 49999"}
	r = run{Offered: 50000}
	fillFromResult(&r, &res)
	if r.Unusable == "" {
		t.Error("unusable not carried")
	}
}

func TestScenarioYAML(t *testing.T) {
	got := scenarioYAML(5000, 10*time.Second, 5*time.Second, 4096)
	want := `name: bench-5000
timeout: 5s
max_in_flight: 4096
ceilings: {rate: 200000, duration: 10m, in_flight: 10000}
phases:
  - {name: sustain, rate: 5000, duration: 10s}
workloads:
  - {name: get, share: 1, http: {method: GET, path: /}}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestBetterAttempt(t *testing.T) {
	quiet := run{Wall: time.Second, OtherCPU: 10 * time.Millisecond}
	busy := run{Wall: time.Second, OtherCPU: 500 * time.Millisecond, Held: true}
	if better("fixed", &busy, &quiet) {
		t.Error("fixed: the least contended attempt should be kept")
	}
	if !better("search", &busy, &quiet) {
		t.Error("search: a held attempt should be kept over a not-held one")
	}
	skipped := run{Skipped: "crashed"}
	if better("fixed", &skipped, &quiet) || !better("fixed", &quiet, &skipped) {
		t.Error("a measured attempt beats one that was not measured")
	}
}

func TestParseSrvStats(t *testing.T) {
	s, err := parseSrvStats("conns 3 reqs 1000 utime_us 1500 stime_us 2500 nvcsw 990 nivcsw 7")
	if err != nil || s.Conns != 3 || s.Reqs != 1000 || !s.Rusage || s.User != 1500*time.Microsecond ||
		s.Sys != 2500*time.Microsecond || s.Nvcsw != 990 || s.Nivcsw != 7 {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = parseSrvStats("conns 3 reqs 1000") // a server without rusage
	if err != nil || s.Rusage || s.Reqs != 1000 {
		t.Fatalf("counters only: %+v %v", s, err)
	}
	if _, err := parseSrvStats("nonsense"); err == nil {
		t.Fatal("nonsense parsed")
	}
}

func TestTargets(t *testing.T) {
	row := func(tool string, rate int, cpu time.Duration, sent, nvcsw int64, p99 float64) run {
		return run{Tool: tool, Stage: "fixed", Rate: rate, CPU: cpu, Sent: sent, Nvcsw: nvcsw, LatenessN: sent, LatenessP99: p99}
	}
	rep := &report{JudgeRate: 20000, LowRate: 5000, LatenessRates: []int{5000, 10000, 20000},
		MaxHeld: map[string]int{"loadgate": 80000, "vegeta": 40000},
		Runs: []run{
			row("vegeta", 5000, 1000*time.Millisecond, 50000, 13000, 1),
			row("loadgate", 5000, 1000*time.Millisecond, 50000, 50000, 0.05), // ratio 1.0, 1 cs/req: met, met
			row("vegeta", 20000, 4000*time.Millisecond, 200000, 20000, 1),
			row("loadgate", 20000, 3300*time.Millisecond, 200000, 120000, 0.2), // ratio 0.825, 0.6 cs/req: not, not
		}}
	got := map[string]bool{}
	for _, tg := range rep.targets() {
		got[tg.What] = tg.Met
	}
	want := map[string]bool{
		"loadgate lateness p99 at 5000/s ≤ 0.1 ms":                                        true,
		"loadgate lateness p99 at 10000/s ≤ 0.1 ms":                                       false, // not measured
		"loadgate lateness p99 at 20000/s ≤ 0.1 ms":                                       false,
		"CPU per request at 5000/s, loadgate ÷ vegeta ≤ 1":                                true,
		"CPU per request at 20000/s, loadgate ÷ vegeta ≤ 0.8":                             false,
		"highest held rate, loadgate ÷ vegeta ≥ 2":                                        true, // 80000 ÷ 40000
		"loadgate voluntary context switches per request at 5000/s ≤ 1":                   true,
		"loadgate voluntary context switches per request at 20000/s well under 1 (≤ 0.5)": false,
	}
	if len(got) != len(want) {
		t.Fatalf("targets %v", got)
	}
	for k, v := range want {
		if m, ok := got[k]; !ok || m != v {
			t.Errorf("%s: met %v (present %v), want %v", k, m, ok, v)
		}
	}
	// The process's start and exit, measured alone, are stated beside the
	// switches; the target is still judged on every switch.
	rep.Runs[1].Nvcsw = 50254
	rep.Startup = map[string]int64{"loadgate": 146, "vegeta": 37}
	for _, tg := range rep.targets() {
		if strings.HasPrefix(tg.What, "loadgate voluntary context switches per request at 5000/s") {
			if tg.Met || !strings.Contains(tg.Value, "1.01 (50254 for 50000 requests") || !strings.Contains(tg.Value, "a run of one request makes 146 (the process's start and exit): 1.002 a request beyond them") {
				t.Errorf("with the start-up: %+v", tg)
			}
		}
	}
	if got := startupText(rep.Startup); got != ": loadgate 146, vegeta 37" {
		t.Errorf("startupText = %q", got)
	}
}

func TestMarkdownHasTheNewColumns(t *testing.T) {
	r := run{Tool: "loadgate", Stage: "fixed", Rate: 5000, Sent: 50000, Succeeded: 50000, CPU: 3 * time.Second,
		User: time.Second, Sys: 2 * time.Second, Nvcsw: 180000, Nivcsw: 10000, LatenessN: 50000, LatenessP99: 0.05,
		ServerCPU: 2 * time.Second, ServerNvcsw: 125000, ServerNivcsw: 5000, Wall: 10 * time.Second}
	v := r
	v.Tool, v.CPU, v.Nvcsw, v.ServerCPU, v.ServerNvcsw = "vegeta", 4*time.Second, 9000, time.Second, -1
	rep := &report{Server: &server{Addr: "127.0.0.1:1", CPUs: "0"}, JudgeRate: 20000, LowRate: 5000,
		LatenessRates: []int{5000}, MaxHeld: map[string]int{}, SearchNote: map[string]string{}, Runs: []run{v, r},
		Tools: []generator{{name: "vegeta"}, {name: "loadgate"}}}
	md := rep.markdown()
	for _, want := range []string{
		"| loadgate | 5000 | 0 | 60.00 | 20.00 | 40.00 | 3.60 | 0.20 |",        // CPU, user, sys µs/req; vol., invol. cs/req
		"| loadgate | 5000 | 40.00 | 20 | 2.50 | 0.10 | 2.00 |",                // server: µs/req, %, cs/req, ÷ vegeta's
		"| vegeta | 5000 | 20.00 | 10 | – |",                                   // server switches unknown
		"loadgate voluntary context switches per request at 5000/s ≤ 1 | 3.60", // judged, not met
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// Which attempts measure runs again: a contended one, and a search step not
// held even when quiet (one lateness spike decides a step at the limit);
// never past the retries, never a held search step or a skipped run.
func TestAgain(t *testing.T) {
	quiet := run{Wall: time.Second}
	busy := run{Wall: time.Second, Steal: 200 * time.Millisecond} // 20% of a core to the hypervisor
	heldQuiet := run{Wall: time.Second, Held: true}
	heldBusy := run{Wall: time.Second, OtherCPU: 300 * time.Millisecond, Held: true}
	for _, tc := range []struct {
		name       string
		stage      string
		best       run
		try, tries int
		want       bool
	}{
		{"fixed, quiet: kept", "fixed", heldQuiet, 0, 1, false},
		{"fixed, quiet, not held: kept (its figures are judged as measured)", "fixed", quiet, 0, 1, false},
		{"fixed, steal: again", "fixed", busy, 0, 1, true},
		{"fixed, steal, retries spent", "fixed", busy, 1, 1, false},
		{"search, not held, quiet: again", "search", quiet, 0, 1, true},
		{"search, not held, retries spent", "search", quiet, 1, 1, false},
		{"search, held on busy cores: kept", "search", heldBusy, 0, 1, false},
		{"skipped", "search", run{Skipped: "no binary"}, 0, 1, false},
	} {
		if got := again(tc.stage, &tc.best, tc.try, tc.tries); got != tc.want {
			t.Errorf("%s: again = %v", tc.name, got)
		}
	}
}

// The report says how idle cores wait: on a virtual machine whose vCPUs
// halt at once (guest_halt_poll_ns 0) every wake-up goes through the
// hypervisor, which changes both tools' CPU per request.
func TestCPUIdle(t *testing.T) {
	sys := t.TempDir()
	put := func(p, v string) {
		t.Helper()
		p = filepath.Join(sys, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := cpuIdle(sys); got != "unknown" {
		t.Errorf("nothing readable: %q, want unknown", got)
	}
	put("devices/system/cpu/cpuidle/current_driver", "haltpoll")
	put("devices/system/cpu/cpuidle/current_governor", "haltpoll")
	put("module/haltpoll/parameters/guest_halt_poll_ns", "0")
	if got, want := cpuIdle(sys), "cpuidle driver haltpoll, governor haltpoll, guest_halt_poll_ns 0"; got != want {
		t.Errorf("cpuIdle = %q, want %q", got, want)
	}
	put("devices/system/cpu/cpuidle/current_governor_ro", "menu") // the read-only name wins where the kernel has it
	if got, want := cpuIdle(sys), "cpuidle driver haltpoll, governor menu, guest_halt_poll_ns 0"; got != want {
		t.Errorf("cpuIdle = %q, want %q", got, want)
	}
}

// Both generators run under the bench's one scheduling: vegeta under
// chrt, loadgate by its own flag.
func TestGeneratorArgv(t *testing.T) {
	cases := []struct {
		rt, old   bool
		tool, bin string
		wantBin   string
		wantArgs  string
	}{
		{true, false, "vegeta", "vegeta", "chrt", "-r 1 vegeta attack"},
		{true, false, "loadgate", "loadgate", "loadgate", "attack --load-priority rt"},
		{false, false, "vegeta", "vegeta", "vegeta", "attack"},
		{false, false, "loadgate", "loadgate", "loadgate", "attack --load-priority normal"},
		// A loadgate from before --load-priority: under chrt, no flag.
		{true, true, "loadgate", "lg-old", "chrt", "-r 1 lg-old attack"},
		{false, true, "loadgate", "lg-old", "lg-old", "attack"},
	}
	for _, c := range cases {
		b := &bench{rt: c.rt, lgOld: c.old}
		bin, args := b.generatorArgv(c.tool, c.bin, "attack")
		if bin != c.wantBin || strings.Join(args, " ") != c.wantArgs {
			t.Errorf("rt %t old %t %s: %s %v, want %s %s", c.rt, c.old, c.tool, bin, args, c.wantBin, c.wantArgs)
		}
	}
}

// schedulingOf reads a process's scheduling as loadgate's results word it.
func TestSchedulingOf(t *testing.T) {
	want, err := pin.ReadScheduling()
	if err != nil || strings.HasPrefix(want, "mixed") {
		t.Skipf("this process's threads: %q, %v", want, err)
	}
	if got := schedulingOf(os.Getpid()); got != want {
		t.Errorf("schedulingOf(self) = %q, want %q", got, want)
	}
	if got := schedulingOf(-1); got != "?" {
		t.Errorf("schedulingOf(-1) = %q, want ?", got)
	}
}
