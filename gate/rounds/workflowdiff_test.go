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

// A local action under .github/actions counts whatever it contains.
func TestWorkflowChangeToALocalAction(t *testing.T) {
	const a = "runs: {using: composite, steps: [{run: echo hi, shell: bash}]}\n"
	b := writeTree(t, map[string]string{".github/actions/setup/action.yml": a})
	h := writeTree(t, map[string]string{".github/actions/setup/action.yml": a + "# changed\n"})
	got := rounds.WorkflowChanges(b, h)
	if len(got) != 1 || got[0].How != verdict.WorkflowChanges || got[0].Path != ".github/actions/setup/action.yml" {
		t.Errorf("changes %+v, want the local action's change", got)
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
