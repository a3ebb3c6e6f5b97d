package rounds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// BaselinesDir is root/baselines. Names that go into a path under it are
// checked again with scenario.ValidName, whatever wrote them.
func BaselinesDir(root string) string { return filepath.Join(root, "baselines") }

// BaselinePath is baselines/<scenario>/<name>.json under root, refused outside it.
func BaselinePath(root, scenarioName, name string) (string, error) {
	if !scenario.ValidName(scenarioName) {
		return "", fmt.Errorf("scenario name %q: not a valid scenario name (%s): it cannot name a directory under baselines/", clip(scenarioName), scenario.NameRule)
	}
	if !scenario.ValidName(name) {
		return "", fmt.Errorf("baseline name %q: use %s", clip(name), scenario.NameRule)
	}
	dir := BaselinesDir(root)
	p := filepath.Join(dir, scenarioName, name+".json")
	if err := InsideDir(dir, p); err != nil {
		return "", err
	}
	return p, nil
}

// InsideDir refuses p unless, cleaned and symlinks resolved, it is below dir.
func InsideDir(dir, p string) error {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not inside %s: refused", p, dir)
	}
	realDir, err1 := filepath.EvalSymlinks(dir)
	realParent, err2 := filepath.EvalSymlinks(filepath.Dir(p))
	if err1 != nil || err2 != nil {
		return nil // not there yet: nothing to follow
	}
	rel, err = filepath.Rel(realDir, filepath.Join(realParent, filepath.Base(p)))
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%s leads out of %s (through a symbolic link): refused", p, dir)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// BrokenResult is why r cannot be compared, or nil.
func BrokenResult(r *result.Result) []verdict.Note {
	if v := verdict.Thresholds(r); v.Value == verdict.Unusable {
		return v.Notes
	}
	return nil
}

// LoadBaseline reads baseline NAME under root, checked as compare checks a result.
func LoadBaseline(root, name, _ string) (*result.Result, error) {
	b, _, err := loadBaselineFile(root, name)
	return b, err
}

var errNoBaseline = errors.New("no such baseline")

// loadBaselineFile is LoadBaseline plus the file's path.
func loadBaselineFile(root, name string) (*result.Result, string, error) {
	if !scenario.ValidName(name) {
		return nil, "", fmt.Errorf("baseline name %q: use %s", clip(name), scenario.NameRule)
	}
	dir := BaselinesDir(root)
	matches, _ := filepath.Glob(filepath.Join(dir, "*", name+".json"))
	switch len(matches) {
	case 0:
		return nil, "", fmt.Errorf("%w: no baseline %q under %s (save one with: loadgate baseline save --result RESULT.json --name %s)", errNoBaseline, name, dir, name)
	case 1:
	default:
		return nil, "", fmt.Errorf("baseline %q exists for several scenarios: %s", name, strings.Join(matches, ", "))
	}
	p := matches[0]
	if scen := filepath.Base(filepath.Dir(p)); !scenario.ValidName(scen) {
		return nil, p, fmt.Errorf("%s: directory %q is not a valid scenario name", p, clip(scen))
	}
	if err := InsideDir(dir, p); err != nil {
		return nil, p, err
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return nil, p, fmt.Errorf("%s: not a regular file", p)
	}
	b, err := result.ReadFile(p)
	if err != nil {
		return nil, p, err
	}
	if notes := BrokenResult(b); notes != nil {
		return nil, p, &NotesError{Op: p + ": broken baseline", Notes: notes}
	}
	if want := filepath.Base(filepath.Dir(p)); b.Scenario.Name != want {
		return nil, p, fmt.Errorf("%s: holds scenario %q, not %q", p, clip(b.Scenario.Name), want)
	}
	return b, p, nil
}

// loadBaseline reads the baseline from the protected side's checkout, so the
// change judged cannot replace its own bar; head's differing copy is noted.
func (g *gate) loadBaseline(name string) error {
	if g.prot == nil {
		b, err := LoadBaseline(g.head.Root, name, g.cfg.Scenario)
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteBaselineFromHead, Name: name})
		if errors.Is(err, errNoBaseline) && g.cfg.RecordMissing {
			g.first = name
			return nil
		}
		if err != nil {
			return Usagef("gate: %w", err)
		}
		g.baseline = b
		return nil
	}
	b, p, err := loadBaselineFile(g.prot.Root, name)
	if err != nil {
		if errors.Is(err, errNoBaseline) && g.cfg.RecordMissing {
			g.first = name // head's copy, if any, is not applied: the protected side has none
			return nil
		}
		if errors.Is(err, errNoBaseline) {
			if _, hp, herr := loadBaselineFile(g.head.Root, name); hp != "" || herr == nil {
				return Usagef("gate: baseline %s is new in head (%s): not applied; a baseline is read from the protected side, base %s, which has none: store it there first", name, relTo(g.head, hp), result.ShortHash(g.prot.Commit))
			}
		}
		return Usagef("gate: base side (%s): %w", result.ShortHash(g.prot.Commit), err)
	}
	g.baseline = b
	rel := relTo(g.prot, p)
	g.notes = append(g.notes, verdict.Note{Code: verdict.NoteBaselineOfBase, Name: name, Path: rel, Commit: g.prot.Commit})
	want, _ := os.ReadFile(p)
	got, err := os.ReadFile(filepath.Join(g.head.Root, rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteBaselineRemovedInHead, Name: name, Path: rel})
	case err != nil:
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteBaselineUnreadInHead, Name: name, Path: rel, Detail: err.Error()})
	case !bytes.Equal(got, want):
		g.notes = append(g.notes, verdict.Note{Code: verdict.NoteBaselineChangedInHead, Name: name, Path: rel})
	}
	return nil
}

// BaselineRun decides how a gate uses stored baseline name (b): its commit,
// where repo has it, runs beside head as the base side (NoteBaselineRerun);
// else the stored numbers stand alone (NoteBaselineStoredOnly, Unrun says why).
func BaselineRun(ctx context.Context, repo Repo, name string, b *result.Result) verdict.Note {
	n := verdict.Note{Code: verdict.NoteBaselineRerun, Name: name, Commit: b.Commit}
	unrun := func(why verdict.BaselineUnrun) verdict.Note {
		n.Code, n.Unrun = verdict.NoteBaselineStoredOnly, why
		return n
	}
	switch {
	case b.Commit == "":
		return unrun(verdict.BaselineNoCommit)
	case strings.HasSuffix(b.Commit, "+dirty"):
		return unrun(verdict.BaselineDirty)
	case !isCommitID(b.Commit):
		return unrun(verdict.BaselineNoCommit)
	}
	c, err := repo.Commit(ctx, b.Commit)
	if err != nil || c != b.Commit {
		return unrun(verdict.BaselineNotInClone)
	}
	return n
}

// isCommitID: a full SHA-1 or SHA-256 object name, nothing git would read otherwise.
func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// relTo is p relative to s's checkout; outside it, its last two elements,
// so reports never leak runner paths.
func relTo(s *Side, p string) string {
	if rel, err := filepath.Rel(s.Root, p); err == nil && filepath.IsLocal(rel) {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
}

// BaselineNotes notes that a baseline is a fixed reference, and warns when
// it was measured on another machine or topology than head.
func BaselineNotes(b *result.Result, head []*result.Result) []verdict.Note {
	notes := []verdict.Note{{Code: verdict.NoteBaselineFixed}}
	if len(head) == 0 {
		return notes
	}
	h := head[0]
	if b.Machine.Host != h.Machine.Host || b.Machine.CPUModel != h.Machine.CPUModel || b.Machine.CPUs != h.Machine.CPUs || b.Machine.Kernel != h.Machine.Kernel {
		bm, hm := b.Machine, h.Machine
		notes = append(notes, verdict.Note{Code: verdict.NoteBaselineMachine, BaseMachine: &bm, HeadMachine: &hm})
	}
	if b.Topology.StackCPUs != h.Topology.StackCPUs || b.Topology.LoadCPUs != h.Topology.LoadCPUs || b.Topology.Pinned != h.Topology.Pinned ||
		b.Topology.Scheduling() != h.Topology.Scheduling() {
		bt, ht := b.Topology, h.Topology
		notes = append(notes, verdict.Note{Code: verdict.NoteBaselineTopology, BaseTopology: &bt, HeadTopology: &ht})
	}
	return notes
}

const NoiseFile = "noise.json"

func NoisePath(root, scenarioName string) (string, error) {
	return BaselinePath(root, scenarioName, strings.TrimSuffix(NoiseFile, ".json"))
}

// LoadNoise reads root/baselines/<scenario>/noise.json, nil when absent;
// whether it matches the machine is verdict's.
func LoadNoise(root, scenarioName string) (*verdict.Noise, string, error) {
	p, err := NoisePath(root, scenarioName)
	if err != nil {
		return nil, "", err
	}
	fh, err := os.Open(p)
	if os.IsNotExist(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, p, fmt.Errorf("%s: %w", p, err)
	}
	defer fh.Close()
	n, err := verdict.DecodeNoise(fh)
	if err != nil {
		return nil, p, fmt.Errorf("%s: %w", p, err)
	}
	return n, p, nil
}

// SaveNoise writes n to path (default: its scenario's NoisePath) and
// returns where it went; a scenario name that makes no path is ErrUsage, a
// file not written ErrUnusable.
func SaveNoise(root, path string, n *verdict.Noise) (string, error) {
	if path == "" {
		var err error
		if path, err = NoisePath(root, n.Scenario); err != nil {
			return "", Usagef("calibrate: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", Unusable(err)
	}
	if err := outfile.Write(path, n.Encode); err != nil {
		return "", Unusable(err)
	}
	return path, nil
}
