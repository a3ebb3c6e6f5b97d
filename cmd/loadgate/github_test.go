package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Issue 10: on an unusable gate the marker was built from the scenario
// file's basename ("scenario" for scenario.yaml) instead of the scenario's
// name, so the unusable comment was a second one beside the verdict. The
// name is now derived by one function for every outcome, never from the
// file name.
func TestRegression_UnusableGateMarkerIsTheScenarioName(t *testing.T) {
	p := filepath.Join(t.TempDir(), "scenario.yaml") // basename "scenario"
	if err := os.WriteFile(p, []byte(`
name: demo-api
phases: [{name: sustain, rate: 10, duration: 1s}]
workloads: [{name: a, http: {path: /}}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(p, scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	usable := report.GateReport{Head: report.GateSide{Results: []*result.Result{{Scenario: result.Scenario{Name: "demo-api"}}}}}
	for what, gr := range map[string]report.GateReport{
		"usable (from its results)":         usable,
		"usable (from its scenario)":        {Scenario: result.Scenario{Name: "demo-api"}},
		"unusable before any round":         {},
		"unusable, the gate's partial data": {Scenario: result.Scenario{Name: "demo-api"}},
	} {
		if got := gateScenarioName(gr, sc); got != "demo-api" {
			t.Errorf("%s: name %q, want demo-api", what, got)
		}
		if action.Marker(gateScenarioName(gr, sc)) != action.Marker("demo-api") {
			t.Errorf("%s: another marker", what)
		}
	}
	if got := gateScenarioName(report.GateReport{}, nil); got != "" {
		t.Errorf("nothing known: %q, want \"\" (no comment rather than a made-up marker)", got)
	}
}

// Issue 10: the unusable comment read "# loadgate gate: " with no name,
// scenario "", base and head "unknown", and "running?. Nothing". It now
// names the scenario, both commits and the reason, on one line.
func TestRegression_UnusableReportNamesScenarioCommitsReason(t *testing.T) {
	dir := t.TempDir()
	e2e := func(args ...string) string {
		t.Helper()
		out, err := rounds.Git(context.Background(), dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	e2e("init", "-q")
	sp := filepath.Join(dir, "load.yaml")
	os.WriteFile(sp, []byte("name: demo-api\nphases: [{name: sustain, rate: 10, duration: 1s}]\nworkloads: [{name: a, http: {path: /}}]\n"), 0o644)
	e2e("add", "-A")
	e2e("commit", "-qm", "base")
	base := e2e("rev-parse", "HEAD")
	e2e("commit", "-qm", "head", "--allow-empty")
	head := e2e("rev-parse", "HEAD")
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)

	sc, err := scenario.Load("load.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var gr report.GateReport
	gr.Verdict = verdict.Verdict{Value: verdict.Unusable, Workloads: []verdict.WorkloadVerdict{},
		Reasons: []string{oneLineReason(errors.New("gate: head side (" + head[:12] + ") is unusable: compose up:\n  Cannot connect to the Docker daemon. Is the docker daemon running?\n"))}}
	completeUnusable(context.Background(), &gr, sc, action.Inputs{Scenario: "load.yaml", Base: "HEAD~1"}, &action.Env{})
	if gr.Scenario.Name != "demo-api" || gr.Scenario.Hash != sc.Hash || gr.Head.Commit != head || gr.Base.Commit != base {
		t.Fatalf("completed %+v / %+v / %+v", gr.Scenario, gr.Base, gr.Head)
	}
	var md bytes.Buffer
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	for _, want := range []string{"# loadgate gate: demo-api", "- **scenario** demo-api `", "`" + base[:12] + "`", "`" + head[:12] + "`", "Cannot connect to the Docker daemon"} {
		if !strings.Contains(s, want) {
			t.Errorf("the unusable report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "`unknown`") || strings.Contains(s, "**scenario**  ") || strings.Contains(s, "# loadgate gate: \n") {
		t.Errorf("the unusable report still says unknown:\n%s", s)
	}
	if r := gr.Verdict.Reasons[0]; strings.Contains(r, "\n") || strings.HasSuffix(r, ".") {
		t.Errorf("reason %q: not one line without a final period", r)
	}
}
