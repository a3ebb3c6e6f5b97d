package rounds

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/verdict"
)

// PolicyChanges lists each bar head's scenario sets otherwise than base's.
// Base's scenario binds by default so a change cannot loosen its own check;
// head's differences are shown, applied only with --scenario-from head.
func PolicyChanges(base, head *scenario.Scenario) []verdict.PolicyChange {
	var out []verdict.PolicyChange
	add := func(c verdict.PolicyChange) { out = append(out, c) }
	bw := map[string]scenario.Workload{}
	for _, w := range base.Workloads {
		bw[w.Name] = w
	}
	hw := map[string]bool{}
	for _, h := range head.Workloads {
		hw[h.Name] = true
		b, ok := bw[h.Name]
		if !ok {
			add(verdict.PolicyChange{Kind: verdict.PolicyWorkloadAdded, Workload: h.Name})
			continue
		}
		bt, ht := b.Thresholds, h.Thresholds
		at := verdict.PolicyChange{Workload: h.Name}
		at.Kind = verdict.PolicyLatency
		latencies(add, at, "", percentiles(bt.P50, bt.P90, bt.P95, bt.P99, bt.P999), percentiles(ht.P50, ht.P90, ht.P95, ht.P99, ht.P999))
		at.Kind = verdict.PolicySession
		latencies(add, at, result.FirstMessagePrefix, sessionPercentiles(bt.FirstMessage), sessionPercentiles(ht.FirstMessage))
		latencies(add, at, result.ConnectPrefix, sessionPercentiles(bt.Connect), sessionPercentiles(ht.Connect))
		if bt.ErrorRate != ht.ErrorRate {
			add(verdict.PolicyChange{Kind: verdict.PolicyErrorRate, Workload: h.Name, Base: rateValue(bt.ErrorRate), Head: rateValue(ht.ErrorRate)})
		}
		if bc, hc := countValue(b.Count), countValue(h.Count); !reflect.DeepEqual(bc, hc) {
			add(verdict.PolicyChange{Kind: verdict.PolicyCount, Workload: h.Name, Base: bc, Head: hc})
		}
	}
	for _, b := range base.Workloads {
		if !hw[b.Name] {
			add(verdict.PolicyChange{Kind: verdict.PolicyWorkloadRemoved, Workload: b.Name})
		}
	}
	if bc, hc := countValue(base.Count), countValue(head.Count); !reflect.DeepEqual(bc, hc) {
		add(verdict.PolicyChange{Kind: verdict.PolicyCount, Base: bc, Head: hc})
	}
	phaseChanges(add, base.Phases, head.Phases)
	bc, hc := base.Ceilings, head.Ceilings
	ceiling := func(field string, b, h verdict.PolicyValue) {
		if !reflect.DeepEqual(b, h) {
			add(verdict.PolicyChange{Kind: verdict.PolicyCeiling, Field: field, Base: b, Head: h})
		}
	}
	ceiling("rate", verdict.PolicyValue{ReqPerS: bc.Rate}, verdict.PolicyValue{ReqPerS: hc.Rate})
	ceiling("duration", verdict.PolicyValue{Duration: bc.Duration}, verdict.PolicyValue{Duration: hc.Duration})
	ceiling("in_flight", verdict.PolicyValue{N: int64(bc.InFlight)}, verdict.PolicyValue{N: int64(hc.InFlight)})
	ceiling("timeout", verdict.PolicyValue{Duration: bc.Timeout}, verdict.PolicyValue{Duration: hc.Timeout})
	ceiling("drain", verdict.PolicyValue{Duration: bc.Drain}, verdict.PolicyValue{Duration: hc.Drain})
	ceiling("max_body", verdict.PolicyValue{Bytes: bc.MaxBody}, verdict.PolicyValue{Bytes: hc.MaxBody})
	if base.Tolerance != head.Tolerance {
		add(verdict.PolicyChange{Kind: verdict.PolicyTolerance, Base: tolValue(base.Tolerance), Head: tolValue(head.Tolerance)})
	}
	if base.ToleranceFloorSet != head.ToleranceFloorSet || base.ToleranceFloor != head.ToleranceFloor {
		add(verdict.PolicyChange{Kind: verdict.PolicyToleranceFloor, Base: floorValue(base), Head: floorValue(head)})
	}
	if base.Hash != head.Hash {
		add(verdict.PolicyChange{Kind: verdict.PolicyLoad, Base: verdict.PolicyValue{Hash: base.Hash}, Head: verdict.PolicyValue{Hash: head.Hash}})
	}
	return out
}

func tolValue(f float64) verdict.PolicyValue { return verdict.PolicyValue{None: f == 0, Fraction: f} }

func floorValue(s *scenario.Scenario) verdict.PolicyValue {
	return verdict.PolicyValue{None: !s.ToleranceFloorSet, Duration: s.ToleranceFloor}
}

// ResolveTolerance is the tolerance and floor a gate judges at: the protected
// scenario's (sc: base's file unless --scenario-from head), tightened by the
// operator's (opTol > 0; opFloorSet), else the defaults. An operator's value
// looser than the scenario's is not applied and noted: on a pull request the
// inputs come from the change's own workflow, which must not loosen its bar.
func ResolveTolerance(sc *scenario.Scenario, opTol float64, opFloor time.Duration, opFloorSet bool) (float64, time.Duration, []verdict.Note) {
	var notes []verdict.Note
	tol := sc.Tolerance
	switch {
	case tol == 0 && opTol > 0:
		tol = opTol
	case tol == 0:
		tol = verdict.DefaultTolerance
	case opTol > tol:
		notes = append(notes, verdict.Note{Code: verdict.NoteOperatorLooser, Policy: &verdict.PolicyChange{Kind: verdict.PolicyTolerance,
			Base: tolValue(tol), Head: tolValue(opTol)}})
	case opTol > 0:
		tol = opTol
	}
	floor := sc.ToleranceFloor
	switch {
	case !sc.ToleranceFloorSet && opFloorSet:
		floor = opFloor
	case !sc.ToleranceFloorSet:
		floor = verdict.DefaultToleranceFloor
	case opFloorSet && opFloor > floor:
		notes = append(notes, verdict.Note{Code: verdict.NoteOperatorLooser, Policy: &verdict.PolicyChange{Kind: verdict.PolicyToleranceFloor,
			Base: verdict.PolicyValue{Duration: floor}, Head: verdict.PolicyValue{Duration: opFloor}}})
	case opFloorSet:
		floor = opFloor
	}
	return tol, floor, notes
}

// phaseChanges compares recovery targets and faults of phases both name
// (added or removed phases change the load hash).
func phaseChanges(add func(verdict.PolicyChange), base, head []scenario.Phase) {
	bp := map[string]scenario.Phase{}
	for _, p := range base {
		bp[p.Name] = p
	}
	for _, h := range head {
		b, ok := bp[h.Name]
		if !ok {
			continue
		}
		if bi, hi := faultsValue(b.Inject), faultsValue(h.Inject); !reflect.DeepEqual(bi, hi) {
			add(verdict.PolicyChange{Kind: verdict.PolicyInject, Phase: h.Name, Base: bi, Head: hi})
		}
		br, hr := b.Recovery, h.Recovery
		switch {
		case br == nil && hr == nil:
		case br == nil || hr == nil:
			add(verdict.PolicyChange{Kind: verdict.PolicyRecovery, Phase: h.Name, Base: recoveryValue(br), Head: recoveryValue(hr)})
		default:
			at := verdict.PolicyChange{Kind: verdict.PolicyRecoveryTarget, Phase: h.Name}
			if br.Within != hr.Within {
				c := at
				c.Field, c.Base, c.Head = "within", verdict.PolicyValue{Duration: br.Within}, verdict.PolicyValue{Duration: hr.Within}
				add(c)
			}
			if br.ErrorRate != hr.ErrorRate {
				c := at
				c.Field, c.Base, c.Head = "error_rate", rateValue(br.ErrorRate), rateValue(hr.ErrorRate)
				add(c)
			}
			latencies(add, at, "", percentiles(br.P50, br.P90, br.P95, br.P99, br.P999), percentiles(hr.P50, hr.P90, hr.P95, hr.P99, hr.P999))
		}
	}
}

var percentileNames = [5]string{"p50", "p90", "p95", "p99", "p999"}

func percentiles(p50, p90, p95, p99, p999 time.Duration) [5]time.Duration {
	return [5]time.Duration{p50, p90, p95, p99, p999}
}

func sessionPercentiles(t scenario.SessionThresholds) [5]time.Duration {
	return percentiles(t.P50, t.P90, t.P95, t.P99, t.P999)
}

func latencies(add func(verdict.PolicyChange), at verdict.PolicyChange, prefix string, b, h [5]time.Duration) {
	for i, name := range percentileNames {
		if b[i] != h[i] {
			c := at
			c.Field, c.Base, c.Head = prefix+name, limitValue(b[i]), limitValue(h[i])
			add(c)
		}
	}
}

func limitValue(d time.Duration) verdict.PolicyValue {
	return verdict.PolicyValue{None: d == 0, Duration: d}
}

func rateValue(r float64) verdict.PolicyValue {
	if r < 0 {
		return verdict.PolicyValue{None: true}
	}
	return verdict.PolicyValue{Fraction: r}
}

func countValue(c *scenario.Count) verdict.PolicyValue {
	if c == nil {
		return verdict.PolicyValue{None: true}
	}
	return verdict.PolicyValue{Count: &verdict.PolicyCounter{Metric: c.Metric.String(), Service: c.Service, Port: c.Port, Path: c.Path}}
}

func faultsValue(fs []scenario.Fault) verdict.PolicyValue {
	if len(fs) == 0 {
		return verdict.PolicyValue{None: true}
	}
	out := make([]verdict.PolicyFault, len(fs))
	for i, f := range fs {
		out[i] = verdict.PolicyFault{Action: f.Action, Service: f.Service, At: f.At, For: f.For}
	}
	return verdict.PolicyValue{Faults: out}
}

func recoveryValue(r *scenario.Recovery) verdict.PolicyValue {
	if r == nil {
		return verdict.PolicyValue{None: true}
	}
	return verdict.PolicyValue{Recovery: &verdict.PolicyTargets{Within: r.Within, ErrorRate: r.ErrorRate,
		P50: r.P50, P90: r.P90, P95: r.P95, P99: r.P99, P999: r.P999}}
}

// Bounds of WorkflowChanges: files compared, and bytes read of each.
const (
	MaxWorkflowFiles = 1000
	MaxWorkflowBytes = 1 << 20
)

// WorkflowChange is a workflow or action file, deciding how the gate runs, that head changes.
type WorkflowChange struct {
	Path string              // relative to the checkout, slash-separated
	How  verdict.WorkflowHow // changes, adds, removes; unreadable: it could not be compared
	Err  error               // why it could not be compared (How unreadable)
}

// Note is the change's warning.
func (c WorkflowChange) Note() verdict.Note {
	n := verdict.Note{Code: verdict.NoteWorkflowChange, Path: c.Path, How: c.How}
	if c.Err != nil {
		n.Detail = c.Err.Error()
	}
	return n
}

var actionFiles = []string{"action.yml", "action.yaml"}

const workflowDir = ".github/workflows"

// WorkflowChanges lists, by path, the workflow and action files head changes,
// adds or removes; a file it cannot compare counts as changed. Symlinks are not followed.
// A workflow counts when it runs loadgate on either side; an action when it runs
// loadgate or a workflow that does uses it (`uses: ./P`).
func WorkflowChanges(baseRoot, headRoot string) []WorkflowChange {
	bt, ht := tree{baseRoot}, tree{headRoot}
	paths := map[string]bool{}
	var out []WorkflowChange
	for _, root := range []string{baseRoot, headRoot} {
		if err := listWorkflows(root, paths); err != nil {
			out = append(out, WorkflowChange{Path: workflowDir, How: verdict.WorkflowUnreadable, Err: err})
		}
	}
	used := map[string]bool{} // local action dirs the gate's workflows use, either side
	for _, t := range []tree{bt, ht} {
		t.gateActions(paths, used)
	}
	for dir := range used {
		for _, a := range actionFiles {
			paths[path.Join(dir, a)] = true
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
		isWorkflow := strings.HasPrefix(p, workflowDir+"/")
		switch {
		case berr != nil || herr != nil:
			out = append(out, WorkflowChange{Path: p, How: verdict.WorkflowUnreadable, Err: errors.Join(berr, herr)})
		case bytes.Equal(b, h):
		case isWorkflow && !bt.namesLoadgate(b, 0) && !ht.namesLoadgate(h, 0):
		case !isWorkflow && !gateAction(bt, ht, p, used):
		case b == nil:
			out = append(out, WorkflowChange{Path: p, How: verdict.WorkflowAdds})
		case h == nil:
			out = append(out, WorkflowChange{Path: p, How: verdict.WorkflowRemoves})
		case isWorkflow && !judgesItself(bt, ht, b, h):
			out = append(out, WorkflowChange{Path: p, How: verdict.WorkflowOutsideGate})
		default:
			out = append(out, WorkflowChange{Path: p, How: verdict.WorkflowChanges})
		}
	}
	return out
}

// gateActions adds to used the local action dirs that t's gate workflows
// (those running loadgate) use, and the local actions those use, bounded.
func (t tree) gateActions(paths map[string]bool, used map[string]bool) {
	var visit func(b []byte, depth int)
	visit = func(b []byte, depth int) {
		for _, m := range localUses.FindAllSubmatch(b, -1) {
			dir, _ := localAction("./" + string(m[1]))
			if used[dir] || depth > maxActionDepth || dir == ".." || strings.HasPrefix(dir, "../") {
				continue
			}
			used[dir] = true
			for _, a := range actionFiles {
				if ab, err := readWorkflow(t.root, path.Join(dir, a)); err == nil && ab != nil {
					visit(ab, depth+1)
				}
			}
		}
	}
	for p := range paths {
		if !strings.HasPrefix(p, workflowDir+"/") {
			continue
		}
		if b, err := readWorkflow(t.root, p); err == nil && t.namesLoadgate(b, 0) {
			visit(b, 0)
		}
	}
}

// gateAction: the action file p (root action.yml, under .github/actions, or
// of a used action) belongs to an action the gate's workflows use, or to one
// that runs loadgate on either side.
func gateAction(bt, ht tree, p string, used map[string]bool) bool {
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		if dir == "." {
			dir = ""
		}
		if used[dir] || bt.actionRunsLoadgate(dir, 0) || ht.actionRunsLoadgate(dir, 0) {
			return true
		}
		if dir == "" || dir == localActionsDir {
			return false
		}
	}
}

// BaseRunsNoGate reports whether base has no workflow that runs loadgate:
// a pull request adding one adopts the gate, and there is nothing to loosen.
func BaseRunsNoGate(baseRoot string) bool {
	paths := map[string]bool{}
	n := 0
	if err := walkWorkflows(baseRoot, workflowDir, paths, &n); err != nil {
		return false // unreadable: guarded as usual
	}
	t := tree{baseRoot}
	for p := range paths {
		b, err := readWorkflow(baseRoot, p)
		if err != nil || t.namesLoadgate(b, 0) {
			return false
		}
	}
	return true
}

func listWorkflows(root string, paths map[string]bool) error {
	for _, a := range actionFiles {
		if _, err := os.Lstat(filepath.Join(root, a)); err == nil {
			paths[a] = true
		}
	}
	n := 0
	for _, d := range []string{workflowDir, localActionsDir} {
		if err := walkWorkflows(root, d, paths, &n); err != nil {
			return err
		}
	}
	return nil
}

// localActionsDir holds a repository's own actions (`uses: ./.github/actions/x`).
const localActionsDir = ".github/actions"

func walkWorkflows(root, rel string, paths map[string]bool, n *int) error {
	dir := filepath.Join(root, filepath.FromSlash(rel))
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
		if *n++; *n > MaxWorkflowFiles {
			return fmt.Errorf("more than %d files under %s", MaxWorkflowFiles, rel)
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

// readWorkflow is root's file rel (nil: absent); a symlink reads as symlinkMark + its target.
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

// localUses finds `uses: ./P` steps; group 1 is P.
var localUses = regexp.MustCompile(`(?m)uses:\s*["']?\./([^\s"'#,\]}]*)`)

// symlinkMark starts with NUL, which no YAML file does.
const symlinkMark = "\x00symlink -> "

// AdoptGate notes that head adds the gate to a base that runs none: no
// required check existed to loosen, so the verdict stands, marked not
// enforced yet. Nothing is noted when head changes no workflow.
func AdoptGate(gr *Outcome, changes []WorkflowChange) {
	var paths []string
	for _, c := range changes {
		paths = append(paths, c.Path)
	}
	if len(paths) > 0 {
		gr.Notes = append([]verdict.Note{{Code: verdict.NoteGateAdopted, Paths: paths}}, gr.Notes...)
	}
}

// WorkflowBlocks reports whether changes make the gate unusable whatever its
// rounds say: decided before any stack is built.
func WorkflowBlocks(changes []WorkflowChange, allowed bool) bool {
	return !allowed && slices.ContainsFunc(changes, func(c WorkflowChange) bool { return c.How != verdict.WorkflowOutsideGate })
}

// GuardWorkflows puts each change's warning first in gr's notes and, unless
// allowed, makes the verdict unusable: the PR's workflow chose this run's
// tolerance and fail-on, and unusable fails under every fail-on.
func GuardWorkflows(gr *Outcome, changes []WorkflowChange, allowed bool) {
	if len(changes) == 0 {
		return
	}
	notes := make([]verdict.Note, 0, len(changes)+1)
	var paths []string
	for _, c := range changes {
		notes = append(notes, c.Note())
		if c.How != verdict.WorkflowOutsideGate {
			paths = append(paths, c.Path)
		}
	}
	v := &gr.Verdict
	switch {
	case len(paths) == 0:
		// Only steps and jobs the gate does not depend on changed: noted.
	case allowed:
		notes = append(notes, verdict.Note{Code: verdict.NoteWorkflowAllowed})
	case v.Value != verdict.Unusable:
		notes = append(notes, v.Notes...)
		v.Notes = []verdict.Note{{Code: verdict.NoteWorkflowChanged, Paths: paths, Was: v.Value}}
		v.Value = verdict.Unusable
	}
	gr.Notes = append(notes, gr.Notes...)
}
