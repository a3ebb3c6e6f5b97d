package soak_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/soak"
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
	sc, err := soak.Scenario(base, 2*time.Hour+30*time.Minute)
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
	if _, err := soak.Scenario(base, 3*time.Hour); err != nil {
		t.Errorf("a 3h soak under a 3h ceiling: %v", err)
	}
	if _, err := soak.Scenario(base, 3*time.Hour+time.Second); err == nil || !strings.Contains(err.Error(), "above ceilings.duration 3h") {
		t.Errorf("a soak above ceilings.duration: %v, want refused", err)
	}
}

// The collector reads stats.jsonl lines however the writes split them.
func TestMemCollectorSplitWrites(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		_ = enc.Encode(compose.Sample{Time: at.Add(time.Duration(i) * time.Second), Service: "api", Container: "c1", MemBytes: int64(100 + i), CPUPct: 10})
		_ = enc.Encode(compose.Sample{Time: at.Add(time.Duration(i) * time.Second), Service: "loadgate", Container: "pid 7", MemBytes: 50})
		_ = enc.Encode(compose.Sample{Time: at.Add(time.Duration(i) * time.Second), Service: "pid 42 (svc)", Container: "pid 42", MemBytes: 70})
	}
	c := soak.NewCollector()
	b := buf.Bytes()
	for len(b) > 0 {
		n := min(len(b), 7)
		_, _ = c.Write(b[:n])
		b = b[n:]
	}
	_, _ = c.Write([]byte("not json\n"))
	stack := &result.Stack{Services: []result.Service{{Name: "api", CPUAvgPct: 10, CPUPeakPct: 12}}}
	watched := []procstat.Summary{{PID: 42, Name: "svc", CPUAvgPct: 3, Exited: true, ExitedAt: at.Add(3 * time.Second)}}
	ps := c.Processes(soak.DefaultThresholdBytesPerHour, stack, watched)
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

// The collector decodes stats.jsonl lines: whatever it is fed, it neither
// panics nor keeps more than a bounded partial line.
func FuzzCollector(f *testing.F) {
	f.Add([]byte(`{"time":"2026-12-01T12:00:00Z","service":"api","container":"c","mem_bytes":5}` + "\n"))
	f.Add([]byte(`{"service":"pid 1 (x)","container":"pid x"}` + "\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := soak.NewCollector()
		_, _ = c.Write(b)
		_, _ = c.Write(b)
		if c.Partial() > 1<<20 {
			t.Fatalf("partial line of %d bytes kept", c.Partial())
		}
		_ = c.Processes(soak.DefaultThresholdBytesPerHour, nil, nil)
		_ = c.Estimates()
	})
}

// Regression: a watched process that exited mid-soak (the OOM killer took
// it) was judged on its partial window and could read stable; one that
// went away during the warm-up left no row at all. Both are inconclusive,
// and so is the soak.
func TestSoakExitedWatchedProcessIsInconclusive(t *testing.T) {
	c := soak.NewCollector()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range 1200 { // 20 flat minutes: stable on their own
		ts := at.Add(time.Duration(i) * time.Second)
		_ = enc.Encode(compose.Sample{Time: ts, Service: "pid 42 (svc)", Container: "pid 42", MemBytes: 100 << 20})
		_ = enc.Encode(compose.Sample{Time: ts, Service: "loadgate", Container: "pid 7", MemBytes: 50 << 20})
	}
	_, _ = c.Write(buf.Bytes())
	watched := []procstat.Summary{
		{PID: 42, Name: "svc", Exited: true, ExitedAt: at.Add(1200 * time.Second)},
		{PID: 43, Name: "early", Exited: true, ExitedAt: at.Add(-time.Second)},
	}
	ps := c.Processes(soak.DefaultThresholdBytesPerHour, nil, watched)
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

// An unusable run (offered != recorded, or marked so) makes an unusable
// soak, with the reasons.
func TestSoakUsable(t *testing.T) {
	if ok, why := soak.Usable(&result.Result{Usable: true}); !ok || len(why) != 0 {
		t.Errorf("a consistent result: %v %v", ok, why)
	}
	ok, why := soak.Usable(&result.Result{Usable: false, Unusable: []string{"the stack was not torn down cleanly: x"}, Offered: 5, Recorded: 4})
	if ok || len(why) < 2 || why[0] != "the stack was not torn down cleanly: x" {
		t.Errorf("unusable result: %v %q", ok, why)
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
	if _, err := soak.Scenario(base, 30*time.Hour); err != nil {
		t.Errorf("30 h × 30 workloads = 900 cells: %v", err)
	}
	_, err = soak.Scenario(base, 48*time.Hour)
	if !errors.Is(err, scenario.ErrLimit) || !strings.Contains(err.Error(), "48 phases") || !strings.Contains(err.Error(), "1440 cells") {
		t.Errorf("48 h × 30 workloads: %v, want refused for the cells", err)
	}
	// The bound on hours comes before any phase is built.
	if _, err := soak.Scenario(base, (soak.MaxHours+1)*time.Hour); err == nil || !strings.Contains(err.Error(), "more than 10000 hours") {
		t.Errorf("10001 h: %v", err)
	}
}
