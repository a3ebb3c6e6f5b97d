package baseline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/baseline"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// fixture writes testdata/result.json (scenario demo-api), changed by edit,
// to a new file.
func fixture(t *testing.T, edit func(r *result.Result)) string {
	t.Helper()
	r, err := result.ReadFile("testdata/result.json")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(r)
	}
	p := filepath.Join(t.TempDir(), "result.json")
	if err := r.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// files lists every file under dir, relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestSaveStoresMergedRoundsUnderBaselines(t *testing.T) {
	root := t.TempDir()
	r1, r2 := fixture(t, nil), fixture(t, nil)
	path, saved, err := baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: "main", Results: []string{r1, r2}, Commit: "0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "baselines", "demo-api", "main.json"); path != want {
		t.Errorf("stored at %s, want %s", path, want)
	}
	one, _ := result.ReadFile(r1)
	if saved.Commit != "0123456789abcdef" || saved.Recorded != 2*one.Recorded {
		t.Errorf("saved commit %q, %d recorded; want the given commit and both rounds' %d", saved.Commit, saved.Recorded, 2*one.Recorded)
	}
	b, err := rounds.LoadBaseline(root, "main", "")
	if err != nil {
		t.Fatalf("the gate cannot read what was saved: %v", err)
	}
	if b.Recorded != saved.Recorded {
		t.Errorf("read back %d recorded, saved %d", b.Recorded, saved.Recorded)
	}
}

// Issue 10: a name (the baseline's, or the scenario's in a result file)
// that would leave baselines/ is refused (exit 2) and nothing is written
// anywhere.
func TestSaveRefusesNamesLeavingBaselines(t *testing.T) {
	for _, name := range []string{"../../escape", "..", "a/b", "/etc/x", "demo..api", "x\n# PASS", ""} {
		top := t.TempDir()
		root := filepath.Join(top, "a", "repo")
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		bad := fixture(t, func(r *result.Result) { r.Scenario.Name = name })
		_, _, err := baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: "main", Results: []string{bad}})
		if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "not a valid scenario name") {
			t.Errorf("scenario name %q: %v, want a refusal naming the scenario name", name, err)
		}
		if fs := files(t, top); len(fs) != 0 {
			t.Errorf("scenario name %q: written %v", name, fs)
		}
	}
	root := t.TempDir()
	good := fixture(t, nil)
	for _, name := range []string{"../x", "..", "a..b", "x/y", "/abs"} {
		_, _, err := baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: name, Results: []string{good}})
		if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "--name") {
			t.Errorf("--name %q: %v, want a refusal naming --name", name, err)
		}
	}
	if fs := files(t, root); len(fs) != 0 {
		t.Errorf("written %v", fs)
	}
}

// A baselines/<scenario> that is a symbolic link out of the repository (a
// pull request can commit one) is not written through.
func TestSaveRefusesSymlinkOut(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "baselines"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "baselines", "demo-api")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	_, _, err := baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: "main", Results: []string{fixture(t, nil)}})
	if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "leads out of") {
		t.Errorf("%v, want a refusal: the path leads out of baselines/", err)
	}
	if fs := files(t, outside); len(fs) != 0 {
		t.Errorf("written through the link: %v", fs)
	}
}

// A result that compare would refuse (an unusable verdict there) is never
// stored: unusable (exit 3), naming why, nothing written.
func TestSaveRefusesWhatCompareRefuses(t *testing.T) {
	cases := map[string]struct {
		edit func(r *result.Result)
		want string
	}{
		"offered≠recorded": {func(r *result.Result) { r.Recorded-- }, "offered"},
		"marked unusable":  {func(r *result.Result) { r.Usable, r.Unusable = false, []string{"the stack died"} }, "the stack died"},
		"no judged phase": {func(r *result.Result) {
			for i := range r.Phases {
				r.Phases[i].Judged, r.Phases[i].Recover = false, false
			}
		}, "no judged phase"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			bad := fixture(t, c.edit)
			gr, err := baseline.Compare(context.Background(), baseline.CompareOptions{Bases: []string{bad}, Heads: []string{bad}, Dir: t.TempDir()})
			if err != nil || gr.Verdict.Value != verdict.Unusable {
				t.Fatalf("compare: %v, verdict %s; want an unusable verdict (the case is not broken for compare)", err, gr.Verdict.Value)
			}
			root := t.TempDir()
			_, _, err = baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: "main", Results: []string{fixture(t, nil), bad}})
			if rounds.KindOf(err) != rounds.ErrUnusable || !strings.Contains(report.ErrorText(err), c.want) {
				t.Errorf("save: %v, want unusable saying %q", err, c.want)
			}
			if fs := files(t, root); len(fs) != 0 {
				t.Errorf("stored %v", fs)
			}
		})
	}
}

func TestCompareRefusesWhatDoesNotRead(t *testing.T) {
	good := fixture(t, nil)
	missing := filepath.Join(t.TempDir(), "nope.json")
	for what, opt := range map[string]baseline.CompareOptions{
		"no head":         {Bases: []string{good}},
		"a missing base":  {Bases: []string{missing}, Heads: []string{good}},
		"a missing head":  {Bases: []string{good}, Heads: []string{missing}},
		"different loads": {Bases: []string{good}, Heads: []string{fixture(t, func(r *result.Result) { r.Scenario.Hash = "sha256:ffff" })}},
	} {
		opt.Dir = t.TempDir()
		if _, err := baseline.Compare(context.Background(), opt); rounds.KindOf(err) != rounds.ErrUsage {
			t.Errorf("%s: %v, want a refusal (exit 2)", what, err)
		}
	}
}

func TestNoiseIsReadFromBaselines(t *testing.T) {
	root := t.TempDir()
	n, _, err := baseline.Noise(context.Background(), root, "demo-api")
	if n != nil || err != nil {
		t.Fatalf("no calibration: %v, %v; want none and no error", n, err)
	}
	if n, _, err := baseline.Noise(context.Background(), root, "../x"); n != nil || err != nil {
		t.Errorf("an invalid scenario name: %v, %v; want none (it names no directory)", n, err)
	}
	p := filepath.Join(root, "baselines", "demo-api", "noise.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = baseline.Noise(context.Background(), root, "demo-api")
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("a calibration that does not decode: %v, want an error naming %s", err, p)
	}
	// compare refuses it too, rather than judging without it.
	good := fixture(t, nil)
	if _, err := baseline.Compare(context.Background(), baseline.CompareOptions{Bases: []string{good}, Heads: []string{good}, Dir: root}); rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), "noise calibration") {
		t.Errorf("compare with a broken calibration: %v, want a refusal", err)
	}
}

// R1 M2: a duet round's result (measured beside the other side's stack
// and load) is refused as a baseline (exit 2), naming the file and its
// round.mode, and nothing is written: a later gate against the baseline
// runs head alone, which would make head look faster than it is.
func TestRegression_BaselineSaveRefusesDuetRounds(t *testing.T) {
	root := t.TempDir()
	alone := fixture(t, nil)
	duet := fixture(t, func(r *result.Result) { r.Round = &result.Round{Number: 2, Mode: result.RoundDuet} })
	_, _, err := baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: "main", Results: []string{alone, duet}})
	if rounds.KindOf(err) != rounds.ErrUsage || !strings.Contains(err.Error(), duet) || !strings.Contains(err.Error(), "round.mode: duet") {
		t.Errorf("save of a duet round: %v, want a refusal (exit 2) naming %s and round.mode: duet", err, duet)
	}
	if fs := files(t, root); len(fs) != 0 {
		t.Errorf("stored %v", fs)
	}
	// A round of a gate run one side after the other is stored as before.
	abba := fixture(t, func(r *result.Result) { r.Round = &result.Round{Number: 1, First: true, OtherPaused: true} })
	if _, _, err := baseline.Save(context.Background(), baseline.SaveOptions{Root: root, Name: "main", Results: []string{abba}}); err != nil {
		t.Errorf("save of a one-side-at-a-time round: %v", err)
	}
}
