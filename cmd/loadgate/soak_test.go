package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/gate/stack"
)

const soakScenarioYAML = `
name: soak-cli
ceilings: {rate: 100, duration: 3h}
phases:
  - {name: ramp, pattern: ramp, from: 1, to: 10, duration: 1s}
  - {name: sustain, rate: 10, duration: 1s}
workloads:
  - {name: a, http: {path: /}}
`

func TestSoakScenarioIsHours(t *testing.T) {
	base, err := scenario.Parse([]byte(soakScenarioYAML), "soak.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := soakScenario(base, 2*time.Hour+30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range sc.Phases {
		got = append(got, p.Name+"="+p.Duration.String())
		if p.Rate != 10 || p.Pattern != scenario.Constant || p.Judged {
			t.Errorf("phase %+v: want constant 10/s, not judged", p)
		}
	}
	if want := "hour-1=1h0m0s hour-2=1h0m0s hour-3=30m0s"; strings.Join(got, " ") != want {
		t.Errorf("phases %v, want %s", got, want)
	}
	if sc.Hash == base.Hash || sc.Hash != sc.ComputeHash() {
		t.Error("the soak's hash is not its own")
	}
	// Above the scenario's ceilings.duration: refused, never clamped.
	if _, err := soakScenario(base, 3*time.Hour); err != nil {
		t.Errorf("a 3h soak under a 3h ceiling: %v", err)
	}
	if _, err := soakScenario(base, 3*time.Hour+time.Second); err == nil || !strings.Contains(err.Error(), "above ceilings.duration 3h") {
		t.Errorf("a soak above ceilings.duration: %v, want refused", err)
	}
}

func TestSoakRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	sc := writeScenario(t, soakScenarioYAML)
	ramp := writeScenario(t, "name: x\nphases: [{name: sustain, pattern: ramp, from: 1, to: 2, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n")
	for _, c := range []struct {
		name string
		args []string
		msg  string
	}{
		{"no duration", []string{"--scenario", sc, "--target", srv.URL}, "--duration is required"},
		{"above the scenario's ceiling", []string{"--scenario", sc, "--target", srv.URL, "--duration", "4h"}, "above ceilings.duration 3h"},
		{"above the operator's ceiling", []string{"--scenario", sc, "--target", srv.URL, "--duration", "2h", "--max-duration", "1h"}, "above the operator's --max-duration 1h"},
		{"not steady", []string{"--scenario", ramp, "--target", srv.URL, "--duration", "1h"}, "a soak holds one steady rate"},
		{"bad threshold", []string{"--scenario", sc, "--target", srv.URL, "--duration", "1h", "--leak-threshold", "lots"}, "--leak-threshold"},
		{"no such pid", []string{"--scenario", sc, "--target", srv.URL, "--duration", "1h", "--watch-pid", "999999999"}, "no such process"},
		{"pid in stack mode", []string{"--scenario", sc, "--target", "api:8080", "--compose", "c.yaml", "--duration", "1h", "--watch-pid", "1"}, "--watch-pid is for plain mode"},
		{"not loopback", []string{"--scenario", sc, "--target", "http://10.1.2.3:80", "--duration", "1h"}, "not a loopback address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"soak", "--out", filepath.Join(t.TempDir(), "out")}, c.args...), &stdout, &stderr)
			if got := code(err); got != 2 {
				t.Fatalf("exit %d, want 2; err %v", got, err)
			}
			if msg := stderr.String() + err.Error(); !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not say %q", msg, c.msg)
			}
		})
	}
}

func TestParseLeakThreshold(t *testing.T) {
	for in, want := range map[string]float64{"32MiB": 32 << 20, "32MiB/h": 32 << 20, "1GiB": 1 << 30} {
		if got, err := parseLeakThreshold(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1MiB", "fast"} {
		if _, err := parseLeakThreshold(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The collector reads stats.jsonl lines however the writes split them.
func TestMemCollectorSplitWrites(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		_ = enc.Encode(stack.Sample{Time: at.Add(time.Duration(i) * time.Second), Service: "api", Container: "c1", MemBytes: int64(100 + i), CPUPct: 10})
		_ = enc.Encode(stack.Sample{Time: at.Add(time.Duration(i) * time.Second), Service: "loadgate", Container: "pid 7", MemBytes: 50})
		_ = enc.Encode(stack.Sample{Time: at.Add(time.Duration(i) * time.Second), Service: "pid 42 (svc)", Container: "pid 42", MemBytes: 70})
	}
	c := newMemCollector()
	b := buf.Bytes()
	for len(b) > 0 {
		n := min(len(b), 7)
		_, _ = c.Write(b[:n])
		b = b[n:]
	}
	_, _ = c.Write([]byte("not json\n"))
	stack := &result.Stack{Services: []result.Service{{Name: "api", CPUAvgPct: 10, CPUPeakPct: 12}}}
	watched := []procstat.Summary{{PID: 42, Name: "svc", CPUAvgPct: 3, Exited: true, ExitedAt: at.Add(3 * time.Second)}}
	ps := c.processes(soak.DefaultThresholdBytesPerHour, stack, watched)
	var got []string
	for _, p := range ps {
		got = append(got, p.Name+"/"+p.Kind)
		if p.Growth.Samples != 3 {
			t.Errorf("%s: %d samples, want 3", p.Name, p.Growth.Samples)
		}
	}
	if want := "api/service pid 42 (svc)/pid loadgate (generator)/generator"; strings.Join(got, " ") != want {
		t.Errorf("processes %v, want %s", got, want)
	}
	if ps[0].MemLast != 102 || ps[0].CPUAvgPct != 10 || ps[0].CPUPeakPct != 12 || ps[1].PID != 42 || !ps[1].Exited || ps[1].CPUAvgPct != 3 {
		t.Errorf("api %+v, pid %+v", ps[0], ps[1])
	}
	if g := ps[1].Growth; g.Verdict != soak.Inconclusive || g.Why[0] != soak.WhyExited || g.ExitedAfterS != 3 {
		t.Errorf("exited pid judged %+v, want inconclusive: exited after 3 s", g)
	}
}

// A soak too short to conclude runs, writes everything, and says
// inconclusive in the result, the report and the exit message, with exit 1:
// never a pass.
func TestSoakTooShortIsInconclusive(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "--scenario", writeScenario(t, soakScenarioYAML), "--target", srv.URL,
		"--watch-pid", "1", "--duration", "2s", "--out", out, "--stats-interval", "200ms"}, &stdout, &stderr)
	if got := code(err); got != 1 {
		t.Fatalf("exit %d, want 1; err %v; stderr %s", got, err, stderr.String())
	}
	if !strings.Contains(err.Error(), "INCONCLUSIVE") || !strings.Contains(err.Error(), "NOT a pass") {
		t.Errorf("exit message %q", err)
	}
	if !strings.Contains(stderr.String(), "WARNING: a 2s soak cannot conclude") {
		t.Errorf("no warning up front:\n%s", stderr.String())
	}
	for _, f := range []string{"soak.json", "soak.md", "soak.svg", "result.json", "stats.jsonl", "snapshots.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	var s soak.Result
	data, _ := os.ReadFile(filepath.Join(out, "soak.json"))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Verdict != soak.Inconclusive || len(s.Processes) != 2 {
		t.Fatalf("soak.json: verdict %s, %d processes (want inconclusive, pid 1 and the generator)", s.Verdict, len(s.Processes))
	}
	md, _ := os.ReadFile(filepath.Join(out, "soak.md"))
	if !strings.Contains(string(md), "**INCONCLUSIVE SOAK**") {
		t.Error("soak.md has no inconclusive banner")
	}
}

// SIGINT (the context) keeps what was measured, marked interrupted: exit 3.
func TestSoakInterrupted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"soak", "--scenario", writeScenario(t, soakScenarioYAML), "--target", srv.URL, "--duration", "1h", "--out", out}, &stdout, &stderr)
	if got := code(err); got != 3 {
		t.Fatalf("exit %d, want 3; err %v", got, err)
	}
	var s soak.Result
	data, _ := os.ReadFile(filepath.Join(out, "soak.json"))
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if !s.Interrupted || s.RanS >= 3600 {
		t.Errorf("interrupted %v after %v s", s.Interrupted, s.RanS)
	}
	if !strings.Contains(err.Error(), "INTERRUPTED") {
		t.Errorf("exit message %q", err)
	}
}

// run --watch-pid: the watched process appears in the result like a stack
// service.
func TestRunWatchPID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	sc := writeScenario(t, "name: x\nphases: [{name: sustain, rate: 20, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--scenario", sc, "--target", srv.URL, "--out", out,
		"--watch-pid", itoa(os.Getpid()), "--stats-interval", "100ms"}, &stdout, &stderr)
	if got := code(err); got != 0 {
		t.Fatalf("exit %d; err %v; stderr %s", got, err, stderr.String())
	}
	data, _ := os.ReadFile(filepath.Join(out, "result.json"))
	if !strings.Contains(string(data), `"name": "pid `+itoa(os.Getpid())) {
		t.Errorf("result.json has no watched process:\n%s", data)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| pid "+itoa(os.Getpid())) {
		t.Errorf("report.md has no row for the watched process")
	}
	if _, err := os.Stat(filepath.Join(out, "stats.jsonl")); err != nil {
		t.Error(err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The collector decodes stats.jsonl lines: whatever it is fed, it neither
// panics nor keeps more than a bounded partial line.
func FuzzMemCollector(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-01T12:00:00Z","service":"api","container":"c","mem_bytes":5}` + "\n"))
	f.Add([]byte(`{"service":"pid 1 (x)","container":"pid x"}` + "\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newMemCollector()
		_, _ = c.Write(b)
		_, _ = c.Write(b)
		if len(c.partial) > 1<<20 {
			t.Fatalf("partial line of %d bytes kept", len(c.partial))
		}
		_ = c.processes(soak.DefaultThresholdBytesPerHour, nil, nil)
		_ = c.estimates()
	})
}

func TestSoakHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "-h"}, &stdout, &stderr)
	if got := code(err); got != 0 || !strings.Contains(stderr.String(), "--leak-threshold") {
		t.Errorf("exit %d; help:\n%s", got, stderr.String())
	}
}

// Regression: a watched process that exited mid-soak (the OOM killer took
// it) was judged on its partial window and could read stable; one that
// went away during the warm-up left no row at all. Both are inconclusive,
// and so is the soak.
func TestSoakExitedWatchedProcessIsInconclusive(t *testing.T) {
	c := newMemCollector()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range 1200 { // 20 flat minutes: stable on their own
		ts := at.Add(time.Duration(i) * time.Second)
		_ = enc.Encode(stack.Sample{Time: ts, Service: "pid 42 (svc)", Container: "pid 42", MemBytes: 100 << 20})
		_ = enc.Encode(stack.Sample{Time: ts, Service: "loadgate", Container: "pid 7", MemBytes: 50 << 20})
	}
	_, _ = c.Write(buf.Bytes())
	watched := []procstat.Summary{
		{PID: 42, Name: "svc", Exited: true, ExitedAt: at.Add(1200 * time.Second)},
		{PID: 43, Name: "early", Exited: true, ExitedAt: at.Add(-time.Second)},
	}
	ps := c.processes(soak.DefaultThresholdBytesPerHour, nil, watched)
	got := map[string]soak.Growth{}
	for _, p := range ps {
		got[p.Name] = p.Growth
	}
	if g := got["pid 42 (svc)"]; g.Verdict != soak.Inconclusive || g.Why[0] != soak.WhyExited {
		t.Errorf("pid 42: %+v, want inconclusive (exited)", g)
	}
	if g, ok := got["pid 43 (early)"]; !ok || g.Verdict != soak.Inconclusive {
		t.Errorf("pid 43 (gone in the warm-up): %+v (listed %v), want an inconclusive row", g, ok)
	}
	if g := got["loadgate (generator)"]; g.Verdict != soak.Stable {
		t.Errorf("generator %s, want stable", g.Verdict)
	}
	if v := soak.Overall(ps); v != soak.Inconclusive {
		t.Errorf("overall %s, want inconclusive", v)
	}
}

// Regression: the soak's exit code was decided by parsing its summary
// string, and an unusable soak's report said "STABLE (exit 0)". The code
// is soakExit's, from the result as data, in one place (exit.go).
func TestSoakExitIsMappedFromData(t *testing.T) {
	for _, c := range []struct {
		name string
		s    soak.Result
		want int
	}{
		{"stable", soak.Result{Usable: true, Verdict: soak.Stable}, 0},
		{"leak", soak.Result{Usable: true, Verdict: soak.Leak}, 1},
		{"inconclusive", soak.Result{Usable: true, Verdict: soak.Inconclusive}, 1},
		{"interrupted", soak.Result{Usable: true, Verdict: soak.Stable, Interrupted: true}, 3},
		{"unusable but stable", soak.Result{Usable: false, Verdict: soak.Stable}, 3},
		{"unusable leak", soak.Result{Usable: false, Verdict: soak.Leak}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := soakExit(&c.s); got != c.want {
				t.Errorf("soakExit %d, want %d", got, c.want)
			}
			err := soakOutcome(&c.s, "soak: a summary that says nothing of its verdict")
			if got := code(err); got != c.want {
				t.Errorf("exit code %d, want %d (err %v)", got, c.want, err)
			}
		})
	}
}

// An unusable run (offered != recorded, or marked so) makes an unusable
// soak, with the reasons.
func TestSoakUsable(t *testing.T) {
	if ok, why := soakUsable(&result.Result{Usable: true}); !ok || len(why) != 0 {
		t.Errorf("a consistent result: %v %v", ok, why)
	}
	ok, why := soakUsable(&result.Result{Usable: false, Unusable: []string{"the stack was not torn down cleanly: x"}, Offered: 5, Recorded: 4})
	if ok || len(why) < 2 || why[0] != "the stack was not torn down cleanly: x" {
		t.Errorf("unusable result: %v %q", ok, why)
	}
}

// Regression: a faults scenario given to soak was refused with exit 3 after
// the stack was up. It is refused with exit 2 before any bring-up (the
// demo's faults.yaml has a stack: this test would need Docker otherwise).
func TestSoakRefusesAFaultsScenarioBeforeBringUp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"soak", "--scenario", "../../examples/demo/faults.yaml", "--duration", "1h",
		"--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if got := code(err); got != 2 {
		t.Fatalf("exit %d, want 2; err %v", got, err)
	}
	if !strings.Contains(err.Error(), "faults.yaml:24: phase sustain injects faults") {
		t.Errorf("message %q", err)
	}
	base, perr := scenario.Load("../../examples/demo/faults.yaml", scenario.Options{})
	if perr != nil {
		t.Fatal(perr)
	}
	if _, err := soakScenario(base, time.Hour); err == nil {
		t.Error("soakScenario copied a faults scenario's phases")
	}
}

// Regression: soakScenario built one phase per hour but did not rerun the
// cell check (scenario.MaxCells): 48 h × 30 workloads is 1 440 cells of up
// to two 184 KiB histograms each. Refused (exit 2), naming the limit.
func TestSoakScenarioChecksCells(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: wide\nceilings: {rate: 100, duration: 100h}\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads:\n")
	for i := range 30 {
		fmt.Fprintf(&b, "  - {name: w%d, http: {path: /}}\n", i)
	}
	base, err := scenario.Parse([]byte(b.String()), "wide.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := soakScenario(base, 30*time.Hour); err != nil {
		t.Errorf("30 h × 30 workloads = 900 cells: %v", err)
	}
	_, err = soakScenario(base, 48*time.Hour)
	if !errors.Is(err, scenario.ErrLimit) || !strings.Contains(err.Error(), "48 phases") || !strings.Contains(err.Error(), "1440 cells") {
		t.Errorf("48 h × 30 workloads: %v, want refused for the cells", err)
	}
	// The bound on hours comes before any phase is built.
	if _, err := soakScenario(base, (maxSoakHours+1)*time.Hour); err == nil || !strings.Contains(err.Error(), "more than 10000 hours") {
		t.Errorf("10001 h: %v", err)
	}
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"soak", "--scenario", writeScenario(t, b.String()), "--target", "http://127.0.0.1:1",
		"--duration", "48h", "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if got := code(err); got != 2 {
		t.Errorf("soak of 48 h × 30 workloads: exit %d, want 2 (%v)", got, err)
	}
}

// Regression (rule 7: warm-up excluded): --watch-pid's sampling was armed
// time.AfterFunc(warmup) from the call, but the run spends seconds after
// it before the load starts, so samples included warm-up. It is armed on
// the schedule's t0 (the engine's FaultHook.Start, the clock the counted
// reads use) + the warm-up, and not before.
func TestWatchPIDSamplingStartsAtScheduleStartPlusWarmup(t *testing.T) {
	ps, err := startPlainSampling(context.Background(), t.TempDir(), []int{os.Getpid()}, time.Second, 10*time.Second, false, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var delays []time.Duration
	ps.now = func() time.Time { return t0.Add(3 * time.Second) } // Start is seen 3 s late
	ps.afterFunc = func(d time.Duration, f func()) *time.Timer {
		delays = append(delays, d)
		return time.AfterFunc(time.Hour, func() {})
	}
	start := ps.started()
	if len(delays) != 0 {
		t.Fatalf("armed before the schedule started: %v", delays)
	}
	start(t0)
	start(t0.Add(time.Minute)) // once only
	if len(delays) != 1 || delays[0] != 7*time.Second {
		t.Errorf("armed after %v, want once, 7s (t0 + 10s warm-up, seen at t0 + 3s)", delays)
	}
	if _, _, _, err := ps.stop(); err != nil {
		t.Error(err)
	}
	var none *plainSampler
	if none.started() != nil {
		t.Error("a nil sampler has a start listener")
	}
}

// Regression: if the warm-up timer had fired but its callback waited on
// the lock while stop ran, stop closed the file and the callback then
// started samplers nobody stopped (a goroutine leak writing to a closed
// buffer). Once stop has begun, the callback starts nothing. Run with
// -race.
func TestWatchPIDStopBeforeTheTimerCallbackStartsNothing(t *testing.T) {
	ps, err := startPlainSampling(context.Background(), t.TempDir(), []int{os.Getpid()}, time.Millisecond, 0, true, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fired func()
	ps.afterFunc = func(d time.Duration, f func()) *time.Timer {
		fired = f
		return time.AfterFunc(time.Hour, func() {})
	}
	ps.started()(time.Now())
	if _, _, _, err := ps.stop(); err != nil {
		t.Fatal(err)
	}
	fired() // the callback that was waiting for the lock
	ps.mu.Lock()
	started := len(ps.stopPIDs) > 0 || ps.stopSelf != nil
	ps.mu.Unlock()
	if started {
		t.Error("samplers started after stop: nobody stops them")
	}

	// And with the real timer racing stop: whichever wins, every sampler
	// started is stopped before the file is closed (the race detector and
	// the closed file's writes would tell).
	for range 20 {
		ps, err := startPlainSampling(context.Background(), t.TempDir(), []int{os.Getpid()}, time.Millisecond, 0, true, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps.started()(time.Now())
		if _, _, _, err := ps.stop(); err != nil {
			t.Fatal(err)
		}
	}
}
