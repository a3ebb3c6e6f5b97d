package rounds_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// A head that changes a workflow file is judged by what it changes: what
// decides the gate (the loadgate job up to its step, the jobs it needs,
// the trigger, env and permissions) makes the gate unusable; a pinned
// action's bump or another job's edit is noted and gated normally.
// testdata/workflows holds base.yml and one edited copy per case.
func TestWorkflowChangesJudgedByWhatTheyChange(t *testing.T) {
	base := readTestdata(t, "base.yml")
	for _, tc := range []struct {
		file      string
		judgesOwn bool // the change could loosen the gate: unusable
	}{
		{"dependabot-checkout.yml", false}, // actions/checkout's SHA bumped in both jobs
		{"other-job.yml", false},           // the lint job's script
		{"after-gate.yml", false},          // the upload step after the gate
		{"timeout.yml", false},             // the gate job's timeout
		{"gate-input.yml", true},           // tolerance: 400% on the loadgate step
		{"gate-version.yml", true},         // loadgate/loadgate@v1 → @v2
		{"gate-local.yml", true},           // uses: ./ (the pull request's own action)
		{"step-before.yml", true},          // a run step before the gate writes GITHUB_ENV
		{"continue-on-error.yml", true},    // the gate step may fail silently
		{"job-if.yml", true},               // the gate job never runs
		{"checkout-other-repo.yml", true},  // checkout's inputs changed: another ref measured
		{"checkout-fork.yml", true},        // another action than the one pinned
		{"trigger.yml", true},              // on: changed
		{"env.yml", true},                  // workflow env reaches the gate step
	} {
		t.Run(tc.file, func(t *testing.T) {
			b := writeTree(t, map[string]string{".github/workflows/load-gate.yml": base})
			h := writeTree(t, map[string]string{".github/workflows/load-gate.yml": readTestdata(t, tc.file)})
			got := rounds.WorkflowChanges(b, h)
			if len(got) != 1 || got[0].Path != ".github/workflows/load-gate.yml" {
				t.Fatalf("changes %+v, want the one file", got)
			}
			gr := rounds.Outcome{Verdict: verdict.Verdict{Value: verdict.Pass}}
			rounds.GuardWorkflows(&gr, got, false)
			if unusable := gr.Verdict.Value == verdict.Unusable; unusable != tc.judgesOwn {
				t.Errorf("verdict %s (change %s), want unusable %v", gr.Verdict.Value, got[0].How, tc.judgesOwn)
			}
			notes := strings.Join(report.NoteTexts(gr.Notes), "\n")
			if !strings.Contains(notes, "load-gate.yml") {
				t.Errorf("the notes do not name the file: %q", notes)
			}
		})
	}
}

// A job the gate's job needs is part of the gate: its outputs can reach
// the gate's inputs.
func TestWorkflowChangeToANeededJob(t *testing.T) {
	const wf = "on: pull_request\njobs:\n  pick:\n    outputs: {s: '${{ steps.p.outputs.s }}'}\n    steps: [{id: p, run: echo s=load/api.yaml >> $GITHUB_OUTPUT}]\n" +
		"  gate:\n    needs: pick\n    steps: [{uses: loadgate/loadgate@v1, with: {scenario: '${{ needs.pick.outputs.s }}'}}]\n"
	b := writeTree(t, map[string]string{".github/workflows/g.yml": wf})
	h := writeTree(t, map[string]string{".github/workflows/g.yml": strings.Replace(wf, "load/api.yaml", "load/tiny.yaml", 1)})
	got := rounds.WorkflowChanges(b, h)
	if len(got) != 1 || got[0].How != verdict.WorkflowChanges {
		t.Errorf("changes %+v, want the needed job's change to count", got)
	}
}

// Regression (issue 48): any file under .github/actions tripped the rule.
// A local action counts when a workflow that runs loadgate uses it (here
// a setup step before the gate) or it runs loadgate itself; one only the
// lint workflow uses is the pull request's own business.
func TestWorkflowChangeToALocalAction(t *testing.T) {
	const a = "runs: {using: composite, steps: [{run: echo hi, shell: bash}]}\n"
	const lint = "on: push\njobs: {l: {steps: [{uses: ./.github/actions/lint}]}}\n"
	const gate = "on: pull_request\njobs: {g: {steps: [{uses: ./.github/actions/setup}, {uses: loadgate/loadgate@v1}]}}\n"
	files := func(extra string) map[string]string {
		return map[string]string{
			".github/workflows/lint.yml":        lint,
			".github/workflows/gate.yml":        gate,
			".github/actions/lint/action.yml":   a + extra,
			".github/actions/setup/action.yml":  a + extra,
			".github/actions/setup/prepare.sh":  "echo" + extra,
			".github/actions/unused/action.yml": a + extra,
		}
	}
	got := rounds.WorkflowChanges(writeTree(t, files("")), writeTree(t, files("# changed\n")))
	var paths []string
	for _, c := range got {
		paths = append(paths, string(c.How)+" "+c.Path)
	}
	want := "changes .github/actions/setup/action.yml\nchanges .github/actions/setup/prepare.sh"
	if strings.Join(paths, "\n") != want {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(paths, "\n"), want)
	}
}

// `uses: ./x` is a gate step only when the action at x runs loadgate: a
// workflow using an unrelated local action is not the gate's, and a local
// action that wraps loadgate is.
func TestLocalUsesIsAGateStepOnlyWhenItRunsLoadgate(t *testing.T) {
	const wf = "on: pull_request\njobs: {g: {steps: [{uses: ./ci/x, with: {tolerance: 5%}}]}}\n"
	for _, tc := range []struct {
		name   string
		action string
		counts bool
	}{
		{"wraps loadgate", "runs: {using: composite, steps: [{uses: loadgate/loadgate@v1}]}\n", true},
		{"wraps a local action that wraps loadgate", "runs: {using: composite, steps: [{uses: ./ci/y}]}\n", true},
		{"unrelated", "runs: {using: composite, steps: [{run: make lint, shell: bash}]}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := func(with string) map[string]string {
				return map[string]string{
					".github/workflows/w.yml": strings.Replace(wf, "5%", with, 1),
					"ci/x/action.yml":         tc.action,
					"ci/y/action.yml":         "runs: {using: composite, steps: [{run: loadgate gate, shell: bash}]}\n",
				}
			}
			got := rounds.WorkflowChanges(writeTree(t, tree("5%")), writeTree(t, tree("400%")))
			if counts := len(got) > 0; counts != tc.counts {
				t.Errorf("changes %+v, want counted %v", got, tc.counts)
			}
		})
	}
}

// A local action outside .github/actions that the gate's workflow uses is
// compared too: head changing ./ci/gate/action.yml changes the gate.
func TestWorkflowChangeToAUsedActionOutsideGithubDir(t *testing.T) {
	const wf = "on: pull_request\njobs: {g: {steps: [{uses: ./ci/gate}]}}\n"
	b := writeTree(t, map[string]string{".github/workflows/w.yml": wf, "ci/gate/action.yml": "runs: {using: composite, steps: [{run: loadgate gate --tolerance 5%, shell: bash}]}\n"})
	h := writeTree(t, map[string]string{".github/workflows/w.yml": wf, "ci/gate/action.yml": "runs: {using: composite, steps: [{run: loadgate gate --tolerance 400%, shell: bash}]}\n"})
	got := rounds.WorkflowChanges(b, h)
	if len(got) != 1 || got[0].Path != "ci/gate/action.yml" || got[0].How != verdict.WorkflowChanges {
		t.Errorf("changes %+v, want ci/gate/action.yml changed", got)
	}
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
