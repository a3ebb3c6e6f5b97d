package main

import (
	"bytes"
	"context"
	"fmt"
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

func TestCompareRounds(t *testing.T) {
	var bases, heads []string
	for i := 0; i < 3; i++ {
		bases = append(bases, runResult(t, cmpScenario, 2*time.Millisecond))
		heads = append(heads, runResult(t, cmpScenario, 2*time.Millisecond))
	}
	args := []string{"compare", "--format", "markdown"}
	for i := range bases {
		args = append(args, "--base", bases[i], "--head", heads[i])
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if c := code(err); c != 0 {
		t.Fatalf("A/A compare exit %d (%v), want 0 (pass or inconclusive)\n%s", c, err, stdout.String())
	}
	md := stdout.String()
	if i := strings.LastIndex(md, "## "); i < 0 || !strings.HasPrefix(md[i:], "## Verdict") {
		t.Errorf("the verdict is not the last section:\n%s", md)
	}
	if !strings.Contains(md, "n=") && !strings.Contains(md, "| n") {
		t.Errorf("no sample counts in the comparison:\n%s", md)
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
	notes := strings.Join(rounds.BaselineNotes(b, []*result.Result{h}), "\n")
	if !strings.Contains(notes, "another machine") || !strings.Contains(notes, "topology differs") {
		t.Errorf("no warning about machine and topology:\n%s", notes)
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
	b, err := result.ReadFile(runResult(t, cmpScenario, 0))
	if err != nil {
		t.Fatal(err)
	}
	var heads, base []*result.Result
	for i := 0; i < 3; i++ {
		h, err := result.ReadFile(runResult(t, cmpScenario, 0))
		if err != nil {
			t.Fatal(err)
		}
		heads, base = append(heads, h), append(base, b)
	}
	v, err := verdict.Gate(base, heads, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gr := report.GateReport{
		Base: report.GateSide{Name: "baseline", Ref: "baseline:main", Results: []*result.Result{b}},
		Head: report.GateSide{Name: "head", Ref: "HEAD", Results: heads}, Rounds: 3, Verdict: v,
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
	for i := 0; i < 4; i++ {
		p := runResult(t, cmpScenario, time.Millisecond)
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
	if !strings.Contains(stderr.String(), "noise calibration "+p) || !strings.Contains(stdout.String(), `"calibration"`) {
		t.Errorf("the calibration is not used:\n%s\n%s", stderr.String(), stdout.String())
	}
}
