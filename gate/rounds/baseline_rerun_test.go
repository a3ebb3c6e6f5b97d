package rounds_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

const recordedSHA = "0123456789abcdef0123456789abcdef01234567"

// The decision: a baseline whose commit the clone has is run beside head;
// one it lacks, or that records no usable commit, is judged from its numbers.
func TestBaselineRunDecision(t *testing.T) {
	repo := &fakeRepo{t: t, ev: &events{}, commits: map[string]string{recordedSHA: recordedSHA}}
	for _, c := range []struct {
		commit string
		code   verdict.NoteCode
		unrun  verdict.BaselineUnrun
	}{
		{recordedSHA, verdict.NoteBaselineRerun, ""},
		{"fedcba9876543210fedcba9876543210fedcba98", verdict.NoteBaselineStoredOnly, verdict.BaselineNotInClone}, // a shallow clone
		{recordedSHA + "+dirty", verdict.NoteBaselineStoredOnly, verdict.BaselineDirty},
		{"", verdict.NoteBaselineStoredOnly, verdict.BaselineNoCommit},
		{"--upload-pack=x", verdict.NoteBaselineStoredOnly, verdict.BaselineNoCommit}, // never handed to git
	} {
		n := rounds.BaselineRun(context.Background(), repo, "release", &result.Result{Commit: c.commit})
		if n.Code != c.code || n.Unrun != c.unrun || n.Name != "release" {
			t.Errorf("commit %q: %s %q, want %s %q", c.commit, n.Code, n.Unrun, c.code, c.unrun)
		}
	}
}

// baselineFixture: base is main (b1), whose checkout holds baseline release
// recorded at commit, and the scenario; head is the working tree.
func baselineFixture(t *testing.T, commit string, inClone bool) (*fixture, *result.Result) {
	t.Helper()
	f := newFixture(t, scenarioWithStack)
	f.cfg.Against = "baseline:release"
	sc, err := scenario.Load(filepath.Join(f.repo.root, "load/scenario.yaml"), scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := result.ReadFile("testdata/result.json")
	if err != nil {
		t.Fatal(err)
	}
	b.Scenario.Name, b.Scenario.Hash, b.Commit = sc.Name, sc.Hash, commit
	b.Machine.Host = "another-runner"
	p := filepath.Join(t.TempDir(), "release.json")
	if err := b.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(p)
	files := f.repo.files["b1"]
	files["baselines/"+sc.Name+"/release.json"] = string(body)
	writeFiles(t, f.repo.root, map[string]string{"baselines/" + sc.Name + "/release.json": string(body)})
	if inClone {
		f.repo.commits[commit] = commit
		f.repo.files[commit] = files
	}
	return f, b
}

// Against a stored baseline whose commit is in the clone, that commit is
// checked out and runs as the base side in the same paired rounds as a pull
// request's gate; the stored numbers are shown beside, at recording time.
func TestGateAgainstBaselineRunsItsCommitBesideHead(t *testing.T) {
	f, _ := baselineFixture(t, recordedSHA, true)
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	ev := f.ev.String()
	for _, want := range []string{"worktree base b1", "worktree baseline " + recordedSHA, "up base", "up head", "run base", "run head"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events %s: no %q", ev, want)
		}
	}
	if gr.Base.Name != "base" || gr.Base.Commit != recordedSHA || len(gr.Base.Results) != 2 || len(gr.Head.Results) != 2 {
		t.Errorf("base %s %s with %d rounds, head %d: want the baseline's commit run in 2 paired rounds", gr.Base.Name, gr.Base.Commit, len(gr.Base.Results), len(gr.Head.Results))
	}
	for _, r := range gr.Base.Results {
		if r.Commit != recordedSHA || r.Round == nil || !r.Round.OtherPaused {
			t.Errorf("base round %+v: want a paired round of the baseline's commit", r.Round)
		}
	}
	if gr.Stored == nil || gr.Stored.Machine.Host != "another-runner" {
		t.Errorf("stored %v: want the baseline as recorded, shown beside", gr.Stored)
	}
	if !hasNote(gr.Notes, verdict.NoteBaselineRerun) || hasNote(gr.Notes, verdict.NoteBaselineFixed) {
		t.Errorf("notes %+v: want baseline_rerun, no fixed-reference note", gr.Notes)
	}
	var md strings.Builder
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"baseline release is re-measured: its commit 0123456789ab ran here as the base side",
		"the baseline as stored, at recording time, on another-runner", "api_read p95 13.9 ms (n=133)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report does not say %q:\n%s", want, md.String())
		}
	}
}

// A duet gate against a baseline whose commit is in the clone runs both at
// the same instants, as against a base.
func TestDuetGateAgainstBaseline(t *testing.T) {
	f, _ := baselineFixture(t, recordedSHA, true)
	f.cfg.Duet = true
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if len(gr.Base.Results) != 2 || gr.Base.Results[0].Round.Mode != result.RoundDuet {
		t.Errorf("base %d rounds: want duet rounds of the baseline's commit", len(gr.Base.Results))
	}
}

// A baseline whose commit the clone lacks (a shallow checkout) is judged
// from its stored numbers, head's rounds one at a time, and the report says why.
func TestGateAgainstBaselineNotInCloneUsesStoredNumbers(t *testing.T) {
	f, _ := baselineFixture(t, recordedSHA, false)
	f.cfg.Duet = true // the Action's default: off, as there is no second side to run
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if ev := f.ev.String(); strings.Contains(ev, "up base") || strings.Contains(ev, "worktree baseline") {
		t.Errorf("events %s: a base side ran without the baseline's commit", ev)
	}
	if gr.Base.Name != "baseline" || len(gr.Base.Results) != 1 || len(gr.Head.Results) != 2 || gr.Stored != nil {
		t.Errorf("base %s %d results, head %d: want the stored baseline against head's rounds", gr.Base.Name, len(gr.Base.Results), len(gr.Head.Results))
	}
	var md strings.Builder
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	want := "baseline release's commit could not be run here (commit 0123456789ab is not in this clone; a shallow checkout lacks it: fetch-depth: 0)"
	if !strings.Contains(md.String(), want) {
		t.Errorf("report does not say %q:\n%s", want, md.String())
	}
}

// With RecordMissing, a baseline the protected side lacks is no refusal:
// head runs alone once, judged on its thresholds, and passing says it is to
// be stored. Without it, the gate is refused (exit 2).
func TestFirstBaselineIsRecorded(t *testing.T) {
	f := newFixture(t, scenarioWithStack)
	f.cfg.Against = "baseline:release"
	if _, err, _ := f.run(t); rounds.KindOf(err) != rounds.ErrUsage {
		t.Fatalf("err %v: want refused without --baseline-missing record", err)
	}
	// testdata/result.json breaks its error_rate threshold: nothing to store.
	f = newFixture(t, scenarioWithStack)
	f.cfg.Against, f.cfg.RecordMissing = "baseline:release", true
	gr, err := rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil || gr.Verdict.Value != verdict.Fail || !hasNote(gr.Verdict.Notes, verdict.NoteBaselineFirstFailed) {
		t.Errorf("a head that fails its thresholds: %v, verdict %s; want fail, saying nothing is stored", err, gr.Verdict.Value)
	}
	f = newFixture(t, scenarioWithStack)
	f.cfg.Against, f.cfg.RecordMissing, f.cfg.Auto, f.cfg.Duet = "baseline:release", true, true, true
	f.runner.edit = func(_ int, r *result.Result) { r.Scenario.Thresholds = map[string]result.Thr{"api_read": {P95MS: 300}} }
	gr, err = rounds.Run(context.Background(), f.cfg, rounds.Deps{Repo: f.repo, Stacks: f.stacks, Runner: f.runner})
	if err != nil {
		t.Fatal(err)
	}
	if ev := f.ev.String(); strings.Contains(ev, "up base") || f.runner.runs() != 1 {
		t.Errorf("events %s (%d runs): want head alone, once", ev, f.runner.runs())
	}
	if gr.Verdict.Value != verdict.Pass || !hasNote(gr.Verdict.Notes, verdict.NoteBaselineFirst) {
		t.Errorf("verdict %s notes %+v: want a pass that records the baseline", gr.Verdict.Value, gr.Verdict.Notes)
	}
	if r := gr.Head.Results[0]; r.Round == nil || r.Round.Mode == result.RoundDuet {
		t.Errorf("head round %+v: a baseline is recorded from a round alone, never a duet's", r.Round)
	}
	var md strings.Builder
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	if want := mdtext.Escape("no baseline `release` yet: this run's results are stored as it"); !strings.Contains(md.String(), want) {
		t.Errorf("report does not say %q:\n%s", want, md.String())
	}
}

func hasNote(ns []verdict.Note, code verdict.NoteCode) bool {
	for _, n := range ns {
		if n.Code == code {
			return true
		}
	}
	return false
}
