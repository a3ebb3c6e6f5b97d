package rounds

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// The protected side sets the bar (design rule 16). On a gate with a base
// side the scenario — its load, thresholds, recovery targets, counts and
// ceilings — is base's file by default: the change being judged cannot
// loosen its own check. Head's version of the file, where it differs, is
// shown beside it (PolicyChanges) and not applied; --scenario-from head
// applies it, and is unsafe for a required check. A scenario that base
// does not have is judged by head's file, and the report says so.
//
// The scenario is not the only input: on pull_request, GitHub runs the
// head's own workflow file, so a pull request can also change the inputs
// the gate is started with (tolerance, fail-on, scenario-from, the max-*
// ceilings) or the Action itself. WorkflowChanges finds
// those files, and GuardWorkflows says so and keeps such a gate from
// passing.

// PolicyChanges says, one line each, where head's scenario sets another
// bar than base's: a threshold of a workload (latency, error rate,
// WebSocket first message and connect), a phase's recovery targets or
// injected faults, a count, a ceiling, the load itself (its hash), a
// workload added or removed. Empty when they agree. Numbers are written
// by gate/report's formatters.
func PolicyChanges(base, head *scenario.Scenario) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	bw := map[string]scenario.Workload{}
	for _, w := range base.Workloads {
		bw[w.Name] = w
	}
	hw := map[string]bool{}
	for _, h := range head.Workloads {
		hw[h.Name] = true
		b, ok := bw[h.Name]
		if !ok {
			add("head adds workload %s", h.Name)
			continue
		}
		bt, ht := b.Thresholds, h.Thresholds
		latencies(add, "", "threshold of "+h.Name, percentiles(bt.P50, bt.P90, bt.P95, bt.P99, bt.P999), percentiles(ht.P50, ht.P90, ht.P95, ht.P99, ht.P999))
		latencies(add, "first_message_", "threshold of "+h.Name, session(bt.FirstMessage), session(ht.FirstMessage))
		latencies(add, "connect_", "threshold of "+h.Name, session(bt.Connect), session(ht.Connect))
		if bt.ErrorRate != ht.ErrorRate {
			add("head changes error_rate threshold of %s %s → %s", h.Name, rateOrNone(bt.ErrorRate), rateOrNone(ht.ErrorRate))
		}
		if bc, hc := countText(b.Count), countText(h.Count); bc != hc {
			add("head changes count of %s %s → %s", h.Name, bc, hc)
		}
	}
	for _, b := range base.Workloads {
		if !hw[b.Name] {
			add("head removes workload %s", b.Name)
		}
	}
	if bc, hc := countText(base.Count), countText(head.Count); bc != hc {
		add("head changes count (every workload) %s → %s", bc, hc)
	}
	phaseChanges(add, base.Phases, head.Phases)
	bc, hc := base.Ceilings, head.Ceilings
	if bc.Rate != hc.Rate {
		add("head changes ceilings.rate %s → %s req/s", report.Rate(bc.Rate), report.Rate(hc.Rate))
	}
	if bc.Duration != hc.Duration {
		add("head changes ceilings.duration %v → %v", bc.Duration, hc.Duration)
	}
	if bc.InFlight != hc.InFlight {
		add("head changes ceilings.in_flight %s → %s", report.Count(int64(bc.InFlight)), report.Count(int64(hc.InFlight)))
	}
	if bc.Timeout != hc.Timeout {
		add("head changes ceilings.timeout %s → %s", msText(bc.Timeout), msText(hc.Timeout))
	}
	if bc.Drain != hc.Drain {
		add("head changes ceilings.drain %s → %s", msText(bc.Drain), msText(hc.Drain))
	}
	if bc.MaxBody != hc.MaxBody {
		add("head changes ceilings.max_body %s → %s", scenario.FormatBytes(bc.MaxBody), scenario.FormatBytes(hc.MaxBody))
	}
	if base.Hash != head.Hash {
		add("head changes the load (scenario hash %s → %s)", report.ShortHash(base.Hash), report.ShortHash(head.Hash))
	}
	return out
}

// phaseChanges compares the recovery targets and injected faults of the
// phases both files name (a phase added or removed changes the load's
// hash, said apart).
func phaseChanges(add func(string, ...any), base, head []scenario.Phase) {
	bp := map[string]scenario.Phase{}
	for _, p := range base {
		bp[p.Name] = p
	}
	for _, h := range head {
		b, ok := bp[h.Name]
		if !ok {
			continue
		}
		if bi, hi := faultsText(b.Inject), faultsText(h.Inject); bi != hi {
			add("head changes inject of phase %s %s → %s", h.Name, bi, hi)
		}
		br, hr := b.Recovery, h.Recovery
		switch {
		case br == nil && hr == nil:
		case br == nil || hr == nil:
			add("head changes recovery of phase %s %s → %s", h.Name, recoveryText(br), recoveryText(hr))
		default:
			what := "recovery target of phase " + h.Name
			if br.Within != hr.Within {
				add("head changes %s within %v → %v", what, br.Within, hr.Within)
			}
			if br.ErrorRate != hr.ErrorRate {
				add("head changes %s error_rate %s → %s", what, rateOrNone(br.ErrorRate), rateOrNone(hr.ErrorRate))
			}
			latencies(add, "", what, percentiles(br.P50, br.P90, br.P95, br.P99, br.P999), percentiles(hr.P50, hr.P90, hr.P95, hr.P99, hr.P999))
		}
	}
}

var percentileNames = [5]string{"p50", "p90", "p95", "p99", "p999"}

func percentiles(p50, p90, p95, p99, p999 time.Duration) [5]time.Duration {
	return [5]time.Duration{p50, p90, p95, p99, p999}
}

func session(t scenario.SessionThresholds) [5]time.Duration {
	return percentiles(t.P50, t.P90, t.P95, t.P99, t.P999)
}

// latencies adds a line for each percentile limit that differs: "head
// changes p95 threshold of api_read 300 ms → 2 000 ms".
func latencies(add func(string, ...any), prefix, what string, b, h [5]time.Duration) {
	for i, name := range percentileNames {
		if b[i] != h[i] {
			add("head changes %s%s %s %s → %s", prefix, name, what, limitOrNone(b[i]), limitOrNone(h[i]))
		}
	}
}

func msText(d time.Duration) string {
	return report.MS(float64(d)/float64(time.Millisecond)) + " ms"
}

func limitOrNone(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return msText(d)
}

func rateOrNone(r float64) string {
	if r < 0 {
		return "none"
	}
	return report.Percent(r)
}

// countText is a count as the comparison shows it: its counter and where
// it is read ("none" without one).
func countText(c *scenario.Count) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("%s on %s:%d%s", c.Metric, c.Service, c.Port, c.Path)
}

// faultsText lists a phase's injected faults in order ("none").
func faultsText(fs []scenario.Fault) string {
	if len(fs) == 0 {
		return "none"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %s at %v for %v", f.Action, f.Service, f.At, f.For)
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// recoveryText is a phase's recovery targets ("none").
func recoveryText(r *scenario.Recovery) string {
	if r == nil {
		return "none"
	}
	parts := []string{"within " + r.Within.String()}
	if r.HasErrorRate() {
		parts = append(parts, "error_rate "+report.Percent(r.ErrorRate))
	}
	for i, d := range percentiles(r.P50, r.P90, r.P95, r.P99, r.P999) {
		if d != 0 {
			parts = append(parts, percentileNames[i]+" "+msText(d))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Bounds of WorkflowChanges: files compared, and bytes read of each.
const (
	MaxWorkflowFiles = 1000
	MaxWorkflowBytes = 1 << 20
)

// WorkflowChange is a file that decides how this gate is run and that
// head's checkout has otherwise than base's: a workflow under
// .github/workflows/ that runs loadgate (in either version: it names
// loadgate, or uses a local action or workflow, `uses: ./...`), or the
// Action's action.yml / action.yaml.
type WorkflowChange struct {
	Path string // relative to the checkout, slash-separated
	How  string // "changes", "adds" or "removes"; or why it could not be compared
}

// Note is the change's warning, for the report and the comment.
func (c WorkflowChange) Note() verdict.Note {
	return verdict.Note{Code: verdict.NoteWorkflowChange, Path: c.Path, Detail: c.How}
}

// actionFiles are the Action's own definition at the checkout's root.
var actionFiles = []string{"action.yml", "action.yaml"}

// workflowDir is where GitHub reads workflows.
const workflowDir = ".github/workflows"

// WorkflowChanges compares base's and head's checkouts (baseRoot,
// headRoot) and lists the workflow files and action.yml that head changes,
// adds or removes, sorted by path. A file that cannot be read or compared
// (too large, too many, not a regular file) is listed, as a change: the
// comparison errs on the side of saying so. It reads at most
// MaxWorkflowFiles files of MaxWorkflowBytes each and follows no symlink.
func WorkflowChanges(baseRoot, headRoot string) []WorkflowChange {
	paths := map[string]bool{}
	var out []WorkflowChange
	for _, root := range []string{baseRoot, headRoot} {
		if err := listWorkflows(root, paths); err != nil {
			out = append(out, WorkflowChange{Path: workflowDir, How: "has workflows loadgate cannot compare (" + err.Error() + "), and may change"})
		}
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	for _, p := range sorted {
		b, berr := readWorkflow(baseRoot, p)
		h, herr := readWorkflow(headRoot, p)
		switch {
		case berr != nil || herr != nil:
			out = append(out, WorkflowChange{Path: p, How: "may change (it cannot be compared: " + errors.Join(berr, herr).Error() + ")"})
		case bytes.Equal(b, h):
		case !runsLoadgate(b) && !runsLoadgate(h):
		case b == nil:
			out = append(out, WorkflowChange{Path: p, How: "adds"})
		case h == nil:
			out = append(out, WorkflowChange{Path: p, How: "removes"})
		default:
			out = append(out, WorkflowChange{Path: p, How: "changes"})
		}
	}
	return out
}

// listWorkflows adds root's workflow files and action files to paths.
func listWorkflows(root string, paths map[string]bool) error {
	for _, a := range actionFiles {
		if _, err := os.Lstat(filepath.Join(root, a)); err == nil {
			paths[a] = true
		}
	}
	dir := filepath.Join(root, filepath.FromSlash(workflowDir))
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == dir {
				return nil // no workflows
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if n++; n > MaxWorkflowFiles {
			return fmt.Errorf("more than %d files under %s", MaxWorkflowFiles, workflowDir)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		paths[filepath.ToSlash(rel)] = true
		return nil
	})
	return err
}

// readWorkflow is root's file rel, nil when it does not exist. A symlink
// is compared by its target's name (symlinkMark + name), not followed.
func readWorkflow(root, rel string) ([]byte, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(p)
		return []byte(symlinkMark + t), err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", rel)
	case fi.Size() > MaxWorkflowBytes:
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, MaxWorkflowBytes)
	}
	b, err := os.ReadFile(p)
	if err == nil && b == nil {
		b = []byte{}
	}
	return b, err
}

// localUses is a step or job that runs an action or workflow of the
// checkout itself: `uses: ./` (this repository's action.yml) or
// `uses: ./.github/...`.
var localUses = regexp.MustCompile(`(?m)uses:\s*["']?\./`)

// symlinkMark starts what readWorkflow returns for a symlink, which no
// YAML file starts with (a NUL byte).
const symlinkMark = "\x00symlink -> "

// runsLoadgate: the file names loadgate or runs a local action or workflow
// (a symlink, not followed, may: it counts as one that does).
func runsLoadgate(b []byte) bool {
	return b != nil && (bytes.HasPrefix(b, []byte(symlinkMark)) || bytes.Contains(bytes.ToLower(b), []byte("loadgate")) || localUses.Match(b))
}

// GuardWorkflows writes changes (WorkflowChanges) into gr: each one's
// warning first among the notes. Unless allowed, the verdict becomes
// unusable, whatever it would have been (its reason says what): the pull
// request's workflow chose this run's tolerance, fail-on, scenario-from and
// ceilings, so no value of it can be trusted to gate that pull request —
// and unusable is the one verdict that exits non-zero under every fail-on
// (fail-on: never included), which a fail or regression would not.
// allowed is the operator's explicit opt-in, for a gate whose workflow is
// enforced from the protected branch (a ruleset's "require workflows to
// pass"), where head's copy does not run.
func GuardWorkflows(gr *report.GateReport, changes []WorkflowChange, allowed bool) {
	if len(changes) == 0 {
		return
	}
	notes := make([]verdict.Note, 0, len(changes)+1)
	paths := make([]string, 0, len(changes))
	for _, c := range changes {
		notes = append(notes, c.Note())
		paths = append(paths, c.Path)
	}
	v := &gr.Verdict
	switch {
	case allowed:
		notes = append(notes, verdict.Note{Code: verdict.NoteWorkflowAllowed})
	case v.Value != verdict.Unusable:
		// The reasons of a verdict that is not unusable are its notes (the
		// report lists them so); an unusable one's say why: this one.
		notes = append(notes, v.Notes...)
		v.Notes = []verdict.Note{{Code: verdict.NoteWorkflowChanged, Paths: paths, Was: v.Value}}
		v.Value = verdict.Unusable
	}
	gr.Notes = append(notes, gr.Notes...)
}
