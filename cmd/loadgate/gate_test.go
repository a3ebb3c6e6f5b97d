package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// runResult runs scenario body against a loopback server that answers after
// delay and returns the result file's path.
func runResult(t *testing.T, body string, delay time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"run", "--scenario", writeScenario(t, body), "--target", srv.URL, "--out", out, "--progress", "never"}, &stdout, &stderr)
	if code(err) > 1 {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	return filepath.Join(out, "result.json")
}

const cmpScenario = `
name: cmp
phases:
  - {name: sustain, rate: 200, duration: 1s}
  - {name: recover, rate: 100, duration: 500ms}
workloads:
  - {name: a, http: {path: /}}
`

func TestCompareRefusesDifferentLoads(t *testing.T) {
	a := runResult(t, cmpScenario, 0)
	b := runResult(t, strings.Replace(cmpScenario, "rate: 200", "rate: 201", 1), 0)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", a, b}, &stdout, &stderr)
	if code(err) != 2 {
		t.Fatalf("exit %d (%v), want 2: results of different loads are never compared", code(err), err)
	}
	ra, _ := result.ReadFile(a)
	rb, _ := result.ReadFile(b)
	for _, h := range []string{ra.Scenario.Hash, rb.Scenario.Hash} {
		if !strings.Contains(err.Error(), h) {
			t.Errorf("error %q does not name hash %s", err, h)
		}
	}
}

// recordedWorkload is workload a of a recorded round: n successes whose
// latencies (µs) are fixed, spread evenly from ½ to 1½ times med.
func recordedWorkload(t *testing.T, durS float64, n int, med float64) result.Workload {
	t.Helper()
	h := result.NewHistogram()
	for i := 0; i < n; i++ {
		if err := h.RecordValue(int64(med * (0.5 + (float64(i)+0.5)/float64(n)))); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := result.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	w := result.Workload{Name: "a", Offered: int64(n), Succeeded: int64(n), Completed: int64(n),
		Failures: map[string]int64{}, Histogram: enc, ServiceH: enc, LatencyMS: result.Summarize(h)}
	w.ServiceMS = w.LatencyMS
	w.Throughput = result.Throughput{CompletedPerS: float64(n) / durS, OfferedPerS: float64(n) / durS}
	return w
}

// recordedRound writes one side's result of cmpScenario's round (0, 1, …)
// from fixed latencies, factor times a 2 ms median, and returns its path.
func recordedRound(t *testing.T, side string, round int, factor float64) string {
	t.Helper()
	r := &result.Result{
		Schema:   result.Schema,
		Scenario: result.Scenario{Name: "cmp", Hash: "sha256:0a0a", Scale: 1, MaxInFlight: 512, TimeoutMS: 5000},
		Machine:  result.Machine{Host: "ci-1", CPUs: 4, OS: "linux", Arch: "amd64"},
		Topology: result.Topology{StackCPUs: "2-3", LoadCPUs: "0-1", Pinned: true},
		Side:     side, Usable: true, LateAfterMS: 1, Precision: result.Precision,
		Phases: []result.Phase{
			{Name: "sustain", Pattern: "constant", Judged: true, DurationS: 1,
				Workloads: []result.Workload{recordedWorkload(t, 1, 200, 2000*factor)}},
			{Name: "recover", Pattern: "constant", Recover: true, DurationS: 0.5,
				Workloads: []result.Workload{recordedWorkload(t, 0.5, 100, 2000*factor)}},
		},
		Round: &result.Round{Number: round/2 + 1, First: round%2 == 0, OtherPaused: true},
	}
	for _, p := range r.Phases {
		for _, w := range p.Workloads {
			r.Offered += w.Offered
			r.Recorded += w.Succeeded
		}
	}
	path := filepath.Join(t.TempDir(), "result.json")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// compareMarkdown runs `compare --format markdown` on the rounds' files and
// returns its exit code and report.
func compareMarkdown(t *testing.T, bases, heads []string) (int, string) {
	t.Helper()
	args := []string{"compare", "--format", "markdown"}
	for i := range bases {
		args = append(args, "--base", bases[i], "--head", heads[i])
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	return code(err), stdout.String()
}

// TestCompareRounds: three A/A rounds, recorded (so the test does not
// depend on the machine's timing), compared as repeated --base/--head
// pairs: a pass, each round paired with its own, n per side over all
// rounds, and the verdict last.
func TestCompareRounds(t *testing.T) {
	var bases, heads []string
	for i, jitter := range []float64{0, 0.004, -0.004} {
		bAt, hAt := 2*i, 2*i+1
		if i%2 == 1 {
			bAt, hAt = hAt, bAt
		}
		bases = append(bases, recordedRound(t, "base", bAt, 1))
		heads = append(heads, recordedRound(t, "head", hAt, 1+jitter))
	}
	c, md := compareMarkdown(t, bases, heads)
	if c != 0 {
		t.Fatalf("A/A compare exit %d, want 0\n%s", c, md)
	}
	if i := strings.LastIndex(md, "## "); i < 0 || !strings.HasPrefix(md[i:], "## Verdict") {
		t.Errorf("the verdict is not the last section:\n%s", md)
	}
	for _, want := range []string{
		"- **rounds** 3 paired, ABBA (round: first→second): 1 base→head · 2 head→base · 3 base→head\n",
		"| workload | metric | base | head | Δ | 95% CI | n base | n head | CI from | verdict |\n",
		// p95 of latencies spread evenly over 1–3 ms: 2.90 ms; n = 3 rounds × 200.
		"\n| a | p95 ms | 2.90 | 2.90 | +0.0% ~ | −2.0% … +2.0% | 600 | 600 | sampling | **pass** |\n",
		"| 300 | 300 | sampling | **pass** |\n",                 // recover: n = 3 rounds × 100
		"Per-round ratios head/base: a p95: 1.000 1.004 0.996.", // the jitter of round i's head, against round i's base
		"## Verdict\n\n**PASS** (exit 0)",
		"| sustain | a | **pass** | p95 pass: p95 +0.0% (95% CI −2.0% … +2.0%): no slowdown beyond the +10.0% tolerance (n=600, 600);",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

// TestCompareRoundsSmoke runs the same A/A comparison on results measured
// against loopback servers: a smoke test of run → compare. On a loaded
// machine the verdict may be noise, so it is logged, not asserted.
func TestCompareRoundsSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("measures against real servers: not with -short")
	}
	n := 1 // one round a side by default; three in make e2e
	if testtier.On(t, testtier.E2E) {
		n = 3
	}
	var bases, heads []string
	for i := 0; i < n; i++ {
		bases = append(bases, runResult(t, cmpScenario, 2*time.Millisecond))
		heads = append(heads, runResult(t, cmpScenario, 2*time.Millisecond))
	}
	c, md := compareMarkdown(t, bases, heads)
	if c > 1 {
		t.Fatalf("A/A compare of measured results: exit %d, want 0 or 1 (a verdict)\n%s", c, md)
	}
	if c != 0 {
		t.Logf("A/A compare of measured results: exit %d (noise on this machine?)\n%s", c, md)
	}
}

func TestBaselineSaveAndGateAgainstIt(t *testing.T) {
	res := runResult(t, cmpScenario, 0)
	root := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"baseline", "save", "--result", res, "--name", "main", "--dir", root, "--commit", "abc123"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("baseline save: %v\n%s", err, stderr.String())
	}
	b, err := rounds.LoadBaseline(root, "main", "")
	if err != nil {
		t.Fatal(err)
	}
	if b.Commit != "abc123" || b.Scenario.Name != "cmp" {
		t.Errorf("baseline commit %q scenario %q", b.Commit, b.Scenario.Name)
	}
	if _, err := os.Stat(filepath.Join(root, "baselines", "cmp", "main.json")); err != nil {
		t.Errorf("not stored as baselines/<scenario>/<name>.json: %v", err)
	}
	if _, err := rounds.LoadBaseline(root, "nope", ""); err == nil || !strings.Contains(err.Error(), "baseline save") {
		t.Errorf("a missing baseline should say how to save one, got %v", err)
	}
	if got := code(run(context.Background(), []string{"baseline", "save", "--result", res, "--name", "../x", "--dir", root}, &stdout, &stderr)); got != 2 {
		t.Errorf("a baseline name with a path: exit %d, want 2", got)
	}
}

func TestBaselineNotesWarnOnOtherMachine(t *testing.T) {
	b := &result.Result{Machine: result.Machine{Host: "ci-1", CPUs: 2}, Topology: result.Topology{StackCPUs: "0", LoadCPUs: "1", Pinned: true}}
	h := &result.Result{Machine: result.Machine{Host: "laptop", CPUs: 8}, Topology: result.Topology{StackCPUs: "0-3", LoadCPUs: "4-7", Pinned: true}}
	notes := strings.Join(report.NoteTexts(rounds.BaselineNotes(b, []*result.Result{h})), "\n")
	if !strings.Contains(notes, "another machine") || !strings.Contains(notes, "topology differs") {
		t.Errorf("no warning about machine and topology:\n%s", notes)
	}
}

// Regression: this development machine's VMs are all "vm", 2 CPUs, one
// session on an Intel Xeon and the next on an AMD EPYC, whose noise differs;
// a baseline of one is another machine for the other.
func TestBaselineNotesWarnOnOtherProcessor(t *testing.T) {
	top := result.Topology{StackCPUs: "0", LoadCPUs: "1", Pinned: true}
	b := &result.Result{Machine: result.Machine{Host: "vm", CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, Kernel: "6.18"}, Topology: top}
	h := &result.Result{Machine: result.Machine{Host: "vm", CPUModel: "AMD EPYC", CPUs: 2, Kernel: "6.18"}, Topology: top}
	notes := strings.Join(report.NoteTexts(rounds.BaselineNotes(b, []*result.Result{h})), "\n")
	if !strings.Contains(notes, "another machine (vm, Intel(R) Xeon(R) Processor, 2 cpus") {
		t.Errorf("no warning about the processor:\n%s", notes)
	}
	h.Machine.CPUModel = b.Machine.CPUModel
	if notes := strings.Join(report.NoteTexts(rounds.BaselineNotes(b, []*result.Result{h})), "\n"); strings.Contains(notes, "another machine") {
		t.Errorf("the same processor warned:\n%s", notes)
	}
}

func TestGateRefusals(t *testing.T) {
	var stdout, stderr bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gate"}, "--scenario is required"},
		{[]string{"gate", "--scenario", "x.yaml"}, "--base REF is required"},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--rounds", "0"}, "--rounds must be at least 1"},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--rounds", "many"}, "or auto"},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--rounds", "auto", "--max-rounds", "1"}, "--max-rounds must be from 2"},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--rounds", "auto", "--budget", "-1m"}, "--budget must be positive"},
		{[]string{"gate", "--scenario", "x.yaml", "--against", "nonsense"}, "--against must be base or baseline:NAME"},
		{[]string{"gate", "--scenario", "x.yaml", "--against", "baseline:x", "--scenario-from", "base"}, "--scenario-from base needs --base"},
		{[]string{"gate", "--scenario", "x.yaml", "--against", "baseline:x", "--baseline-missing", "store"}, "--baseline-missing must be refuse or record"},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--baseline-missing", "record"}, "--baseline-missing record needs --against baseline:NAME"},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--fail-on", "always"}, `--fail-on "always": want regression, inconclusive, threshold or never`},
		{[]string{"gate", "--scenario", "x.yaml", "--base", "main", "--tolerance-floor", "2s"}, "--tolerance-floor 2s: must be from 0 to 1s"},
	} {
		err := run(context.Background(), c.args, &stdout, &stderr)
		if code(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d %v, want 2 saying %q", c.args, code(err), err, c.want)
		}
	}
}

// Against a stored baseline the report shows the baseline once, with its own
// sample counts, however many head rounds it is paired with.
func TestBaselineReportCounts(t *testing.T) {
	b, err := result.ReadFile(recordedRound(t, "base", 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	var heads, base []*result.Result
	for i, jitter := range []float64{0, 0.004, -0.004} {
		h, err := result.ReadFile(recordedRound(t, "head", 2*i+1, 1+jitter))
		if err != nil {
			t.Fatal(err)
		}
		heads, base = append(heads, h), append(base, b)
	}
	v, err := verdict.Gate(base, heads, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gr := rounds.Outcome{
		Base: rounds.SideResults{Name: "baseline", Ref: "baseline:main", Results: []*result.Result{b}},
		Head: rounds.SideResults{Name: "head", Ref: "HEAD", Results: heads}, Rounds: 3, Verdict: v,
	}
	var md bytes.Buffer
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	n := b.JudgedPhase().Workload("a").LatencyMS.Count
	// The row's "n base | n head": the baseline once, head over its 3 rounds.
	if want := fmt.Sprintf("| %d | %d |", n, 3*n); !strings.Contains(md.String(), want) {
		t.Errorf("no row with n base %d and n head %d (%q):\n%s", n, 3*n, want, md.String())
	}
	if strings.Contains(md.String(), fmt.Sprintf("| %d | %d |", 3*n, 3*n)) {
		t.Errorf("the baseline's samples are counted once per round (n=%d)", 3*n)
	}
}

// compare reads baselines/<scenario>/noise.json of the repository (here:
// the directory) it runs in: a bad file is refused naming it, a good one
// stands for the noise of one run each.
func TestCompareReadsTheCalibration(t *testing.T) {
	var rs []*result.Result
	var files []string
	for i, jitter := range []float64{0, 0.004, -0.003, 0.002} {
		p := recordedRound(t, []string{"base", "head"}[i%2], i, 1+jitter)
		r, err := result.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rs, files = append(rs, r), append(files, p)
	}
	t.Chdir(t.TempDir())
	p := filepath.Join("baselines", "cmp", "noise.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte(`{"schema": "loadgate/noise/v1", "nope": 1}`), 0o644)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", files[0], files[1]}, &stdout, &stderr)
	if code(err) != 2 || !strings.Contains(err.Error(), p) {
		t.Fatalf("a bad noise.json: exit %d %v, want 2 naming %s", code(err), err, p)
	}
	n, err := verdict.Calibrate(rs[:2], rs[2:], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := n.Encode(&b); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, b.Bytes(), 0o644)
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"compare", "--format", "json", files[0], files[1]}, &stdout, &stderr)
	if code(err) > 1 {
		t.Fatalf("compare with a calibration: exit %d %v\n%s", code(err), err, stderr.String())
	}
	// One run each: the rounds cannot measure the noise between runs, so
	// the calibration is the noise floor whatever the runs' own sampling
	// noise (which part is the widest depends on this machine's load).
	var f report.GateVerdictFile
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		t.Fatalf("verdict.json: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(stderr.String(), "noise calibration "+p) || f.Noise == nil || f.Noise.Source != verdict.NoiseCalibration || f.Noise.Pairs != 2 {
		t.Errorf("the calibration is not used (noise %+v):\n%s\n%s", f.Noise, stderr.String(), stdout.String())
	}
}

// Duet rounds are the gate's default (make gate-quality chose them):
// -h says so and how to turn them off, and a gate against a baseline, which
// has no second side, is not refused for the default (an explicit --duet is).
func TestGateDuetIsTheDefault(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"gate", "-h"}, &stdout, &stderr); exitCode(err, io.Discard) != 0 {
		t.Fatalf("gate -h: %v", err)
	}
	help := stdout.String() + stderr.String()
	if !strings.Contains(help, "-duet") || !strings.Contains(help, "(default true)") || !strings.Contains(help, "--duet=false") {
		t.Errorf("gate -h does not say duet rounds are the default and how to turn them off:\n%s", help)
	}
	stderr.Reset()
	err := run(context.Background(), []string{"gate", "--scenario", filepath.Join(t.TempDir(), "missing.yaml"), "--against", "baseline:x"}, &stdout, &stderr)
	if err == nil || strings.Contains(err.Error(), "duet") {
		t.Errorf("a gate against a baseline with the default: %v; want it refused for its missing scenario, not for duet", err)
	}
}
