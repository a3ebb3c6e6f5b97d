package report_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/soak"
)

var soakT0 = time.Date(2026, 3, 1, 12, 0, 20, 0, time.UTC)

// memSeries is memory sampled every 5 s for dur: base plus perHour of
// growth plus a deterministic 1 MiB wobble.
func memSeries(dur time.Duration, base, perHour float64) []soak.Point {
	var ps []soak.Point
	for s := 0; s <= int(dur.Seconds()); s += 5 {
		t := time.Duration(s) * time.Second
		ps = append(ps, soak.Point{Time: soakT0.Add(t), MemBytes: int64(base + perHour*t.Hours() + math.Sin(float64(s)/35)*(1<<20))})
	}
	return ps
}

// soakRun is the request side of a soak of dur: one phase per hour.
func soakRun(dur time.Duration, interrupted bool) *result.Result {
	r := base()
	r.Scenario.Name, r.Scenario.File = "demo-soak", "examples/demo/soak.yaml"
	r.Scenario.Thresholds = nil
	r.Interrupted = interrupted
	r.FinishedAt = r.StartedAt.Add(20*time.Second + dur)
	r.Phases = nil
	for i, left := 1, dur; left > 0; i++ {
		d := min(left, time.Hour)
		n := int64(d.Seconds() * 20)
		r.Phases = append(r.Phases, result.Phase{Name: "hour-" + string(rune('0'+i)), Pattern: "constant", DurationS: d.Seconds(),
			Workloads: []result.Workload{wl("leak", d.Seconds(), n, nil, 0, 0.41)}})
		left -= d
	}
	r.Stack = &result.Stack{Services: []result.Service{{Name: "pid 4242 (service)", CPUAvgPct: 1.2, CPUPeakPct: 4, MemPeakBytes: 80 << 20, Samples: int(dur.Seconds())}},
		Generator: &result.Service{Name: "loadgate (generator)", CPUAvgPct: 0.8, CPUPeakPct: 2, MemPeakBytes: 31 << 20, Samples: int(dur.Seconds())}}
	total(r)
	return r
}

func soakResult(dur time.Duration, servicePerHour float64, interrupted bool) *soak.Result {
	thr := float64(soak.DefaultThresholdBytesPerHour)
	s := &soak.Result{
		Schema: soak.Schema, Scenario: "demo-soak", ScenarioHash: "sha256:a8355b8426fa", StartedAt: soakT0.Add(-20 * time.Second),
		DurationS: dur.Seconds(), WarmupS: 20, RanS: (dur + 20*time.Second).Seconds(), RatePerS: 20, SampleIntervalS: 1,
		Interrupted: interrupted, Usable: true, ThresholdBytesPerHour: thr,
		Processes: []soak.Process{
			soak.NewProcess("pid 4242 (service)", soak.KindPID, 4242, memSeries(dur, 12<<20, servicePerHour), thr),
			soak.NewProcess("loadgate (generator)", soak.KindGenerator, 0, memSeries(dur, 31<<20, 0), thr),
		},
	}
	for i := range s.Processes {
		s.Processes[i].CPUAvgPct, s.Processes[i].CPUPeakPct = 1.2, 4
	}
	if interrupted {
		s.DurationS = 2 * s.DurationS // asked for twice what ran
	}
	s.Verdict = soak.Overall(s.Processes)
	return s
}

func TestSoakGolden(t *testing.T) {
	for _, tc := range []struct {
		name        string
		dur         time.Duration
		perHour     float64
		interrupted bool
		verdict     soak.Verdict
		exit        int
	}{
		{"soak_leak", 15 * time.Minute, 281.25 * (1 << 20), false, soak.Leak, 1},
		{"soak_stable", 15 * time.Minute, 0, false, soak.Stable, 0},
		{"soak_inconclusive", 2 * time.Minute, 281.25 * (1 << 20), false, soak.Inconclusive, 1},
		{"soak_interrupted", 9 * time.Minute, 0, true, soak.Stable, 3},
		{"soak_unusable", 15 * time.Minute, 0, false, soak.Stable, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, r := soakResult(tc.dur, tc.perHour, tc.interrupted), soakRun(tc.dur, tc.interrupted)
			if tc.name == "soak_unusable" {
				unusableSoak(s, r)
			}
			if s.Verdict != tc.verdict {
				t.Fatalf("fixture verdict %s, want %s", s.Verdict, tc.verdict)
			}
			var m, svg, txt, js bytes.Buffer
			if err := report.SoakMarkdown(&m, s, r, tc.exit); err != nil {
				t.Fatal(err)
			}
			if err := report.SoakSVG(&svg, s); err != nil {
				t.Fatal(err)
			}
			if err := report.SoakText(&txt, s); err != nil {
				t.Fatal(err)
			}
			if err := s.Encode(&js); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name+".md.golden", m.String())
			checkGolden(t, tc.name+".svg.golden", svg.String())
			checkGolden(t, tc.name+".txt.golden", txt.String())
			checkGolden(t, tc.name+".soakjson.golden", js.String()) // not *.json.golden: those are verdict files
		})
	}
}

// An inconclusive soak says so loudly everywhere: in a banner, the verdict
// and the exit message, and never reads as a pass.
func TestSoakInconclusiveIsLoud(t *testing.T) {
	s, r := soakResult(2*time.Minute, 0, false), soakRun(2*time.Minute, false)
	var m bytes.Buffer
	if err := report.SoakMarkdown(&m, s, r, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**INCONCLUSIVE SOAK**", "not a pass", "under 5m0s", "**INCONCLUSIVE** (exit 1)"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	sum := report.SoakSummary(s)
	if !strings.Contains(sum, "INCONCLUSIVE") || !strings.Contains(sum, "NOT a pass") || strings.Contains(strings.ToLower(sum), "no leak found") {
		t.Errorf("exit message %q", sum)
	}
}

func TestMiBPerHour(t *testing.T) {
	for in, want := range map[float64]string{0: "0.0 MiB/h", 281.25 * (1 << 20): "+281.2 MiB/h", 281.3 * (1 << 20): "+281.3 MiB/h", -2 * (1 << 20): "−2.0 MiB/h", 1: "0.0 MiB/h"} {
		if got := report.MiBPerHour(in); got != want {
			t.Errorf("MiBPerHour(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestSoakProgress(t *testing.T) {
	got := report.SoakProgress("hour-1", 90*time.Second, 15*time.Minute, 20, 19.5, []report.SoakEstimate{{Name: "api", BytesPerHour: 64 << 20, OK: true}, {Name: "loadgate (generator)"}})
	want := "soak 1m30s / 15m0s · hour-1 · offered 20.0/s · completed 19.5/s · api +64.0 MiB/h · loadgate (generator) —"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// unusableSoak makes s and r a soak whose stack was not torn down cleanly.
func unusableSoak(s *soak.Result, r *result.Result) {
	why := "the stack was not torn down cleanly: context deadline exceeded"
	r.Usable, r.Unusable = false, []string{why}
	s.Usable, s.Unusable = false, []string{why}
}

// Regression: an unusable soak's report said "STABLE (exit 0)" while the
// command exited 3. It says UNUSABLE, with the exit code it is given, in
// the report and the exit message, and never reads as a pass.
func TestUnusableSoakIsNotStable(t *testing.T) {
	s, r := soakResult(15*time.Minute, 0, false), soakRun(15*time.Minute, false)
	unusableSoak(s, r)
	var m bytes.Buffer
	if err := report.SoakMarkdown(&m, s, r, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.String(), "**UNUSABLE** (exit 3)") || strings.Contains(m.String(), "**STABLE**") {
		t.Errorf("verdict line of an unusable soak:\n%s", m.String())
	}
	sum := report.SoakSummary(s)
	if !strings.HasPrefix(sum, "soak: UNUSABLE — ") || !strings.Contains(sum, "not torn down cleanly") || !strings.Contains(sum, "NOT a pass") {
		t.Errorf("exit message %q", sum)
	}
	// Unusable for a reason of its own (the run's result is fine): its own banner.
	s, r = soakResult(15*time.Minute, 0, false), soakRun(15*time.Minute, false)
	s.Usable, s.Unusable = false, []string{"the request side is short"}
	m.Reset()
	if err := report.SoakMarkdown(&m, s, r, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(m.String(), "> **UNUSABLE SOAK** — the request side is short. No verdict is drawn from it (exit 3).") {
		t.Errorf("no unusable banner:\n%s", m.String())
	}
}

// Regression: a process's name (a watched process's /proc comm: anything
// its owner chose) reached soak.md unescaped, in the table, the plot and
// the verdict. It is escaped like every other name in gate/report.
func TestSoakMarkdownEscapesProcessNames(t *testing.T) {
	s, r := soakResult(15*time.Minute, 281.25*(1<<20), false), soakRun(15*time.Minute, false)
	evil := "pid 4242 (x\n# owned ``` <b>|*)"
	s.Processes[0].Name = evil
	var m bytes.Buffer
	if err := report.SoakMarkdown(&m, s, r, 1); err != nil {
		t.Fatal(err)
	}
	out := m.String()
	for _, bad := range []string{evil, "\n# owned", "<b>", "```"} {
		if strings.Contains(out, bad) {
			t.Errorf("soak.md holds %q unescaped", bad)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# owned") {
			t.Errorf("the name made a heading: %q", line)
		}
	}
	if !strings.Contains(out, `pid 4242 (x \# owned \`+"`"+`\`+"`"+`\`+"`"+` \<b\>\|\*)`) {
		t.Errorf("the escaped name is not in the report:\n%s", out)
	}
}

// Regression: a watched process that exited mid-soak read as stable in
// the report. It is inconclusive, and the report says it exited.
func TestSoakReportsAnExitedProcess(t *testing.T) {
	s, r := soakResult(15*time.Minute, 0, false), soakRun(15*time.Minute, false)
	s.Processes[0].SetExited(soakT0.Add(10 * time.Minute))
	s.Verdict = soak.Overall(s.Processes)
	var m bytes.Buffer
	if err := report.SoakMarkdown(&m, s, r, 1); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(exited) | **inconclusive**", "exited (or its pid came to name another process) 10m0s after its first sample", "**INCONCLUSIVE** (exit 1)"} {
		if !strings.Contains(m.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, m.String())
		}
	}
}
