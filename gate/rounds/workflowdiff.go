package rounds

import (
	"bytes"
	"maps"
	"path"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// tree is one side's checkout, read for what its local actions do ("" root:
// none can be read, so every local action counts as running loadgate).
type tree struct{ root string }

// maxActionDepth bounds local actions using local actions; deeper counts as running loadgate.
const maxActionDepth = 4

// localAction is the directory of a `uses: ./P` step (P cleaned, "" the
// root), ok false for anything else; a path leaving the checkout is kept
// as is and counts as running loadgate.
func localAction(uses string) (dir string, ok bool) {
	if !strings.HasPrefix(uses, "./") {
		return "", false
	}
	dir = path.Clean(strings.TrimPrefix(uses, "./"))
	if dir == "." {
		dir = ""
	}
	return dir, true
}

// actionRunsLoadgate: the local action in dir names loadgate, is a symlink,
// cannot be read, or uses a local action that runs loadgate.
func (t tree) actionRunsLoadgate(dir string, depth int) bool {
	if t.root == "" || depth > maxActionDepth || dir == ".." || strings.HasPrefix(dir, "../") {
		return true // err on the side of saying
	}
	for _, name := range actionFiles {
		b, err := readWorkflow(t.root, path.Join(dir, name))
		switch {
		case err != nil:
			return true
		case b == nil:
			continue
		}
		return t.namesLoadgate(b, depth)
	}
	return false // no action there: it runs nothing
}

// namesLoadgate: a workflow or action file that names loadgate, is a
// symlink, or uses a local action that runs loadgate.
func (t tree) namesLoadgate(b []byte, depth int) bool {
	if b == nil {
		return false
	}
	if bytes.HasPrefix(b, []byte(symlinkMark)) || bytes.Contains(bytes.ToLower(b), []byte("loadgate")) {
		return true
	}
	for _, m := range localUses.FindAllSubmatch(b, -1) {
		if dir, _ := localAction("./" + string(m[1])); t.actionRunsLoadgate(dir, depth+1) {
			return true
		}
	}
	return false
}

// judgesItself reports whether head's workflow changes what decides the gate:
// a loadgate job up to its step (ref bumps aside), its needs, or the trigger,
// env, defaults, permissions. Anything unreadable counts as a change.
func judgesItself(bt, ht tree, base, head []byte) bool {
	b, bok := parseWorkflow(base)
	h, hok := parseWorkflow(head)
	if !bok || !hok {
		return true
	}
	for _, k := range []string{"on", "true", "env", "defaults", "permissions"} {
		if !reflect.DeepEqual(b[k], h[k]) {
			return true
		}
	}
	bj, hj := mapOf(b["jobs"]), mapOf(h["jobs"])
	for _, id := range gateJobs(bt, ht, bj, hj) {
		if jobChanged(bt, ht, mapOf(bj[id]), mapOf(hj[id])) {
			return true
		}
	}
	return false
}

func parseWorkflow(b []byte) (map[string]any, bool) {
	if b == nil {
		return nil, false
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// gateJobs are the jobs running loadgate on either side, and their needs.
func gateJobs(bt, ht tree, base, head map[string]any) []string {
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for i, jobs := range []map[string]any{base, head} {
		t := []tree{bt, ht}[i]
		for id, j := range jobs {
			if t.runsGate(mapOf(j)) {
				add(id)
			}
		}
	}
	for i := 0; i < len(ids); i++ {
		for _, jobs := range []map[string]any{base, head} {
			for _, need := range needs(mapOf(jobs[ids[i]])) {
				add(need)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func (t tree) runsGate(job map[string]any) bool {
	if t.isGate(job) {
		return true
	}
	return t.gateStep(steps(job)) >= 0
}

// isGate: a step (or a job calling a reusable workflow) that runs loadgate:
// names it, or uses a local action that runs it.
func (t tree) isGate(step map[string]any) bool {
	uses, _ := step["uses"].(string)
	run, _ := step["run"].(string)
	if dir, ok := localAction(uses); ok {
		return t.actionRunsLoadgate(dir, 0)
	}
	return strings.Contains(strings.ToLower(uses), "loadgate") || strings.Contains(strings.ToLower(run), "loadgate")
}

// gateStep is the index of the last step that runs loadgate, or -1.
func (t tree) gateStep(s []map[string]any) int {
	last := -1
	for i, st := range s {
		if t.isGate(st) {
			last = i
		}
	}
	return last
}

func steps(job map[string]any) []map[string]any {
	list, _ := job["steps"].([]any)
	out := make([]map[string]any, len(list))
	for i, s := range list {
		out[i] = mapOf(s)
	}
	return out
}

func needs(job map[string]any) []string {
	switch n := job["needs"].(type) {
	case string:
		return []string{n}
	case []any:
		var out []string
		for _, v := range n {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// jobChanged: keys other than name, timeout and steps differ, or a step up to the gate's.
func jobChanged(bt, ht tree, b, h map[string]any) bool {
	if b == nil || h == nil {
		return true
	}
	strip := func(j map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range j {
			if k != "name" && k != "timeout-minutes" && k != "steps" {
				c[k] = v
			}
		}
		return c
	}
	if !reflect.DeepEqual(strip(b), strip(h)) {
		return true
	}
	bs, hs := steps(b), steps(h)
	n := max(bt.gateStep(bs), ht.gateStep(hs))
	if n < 0 {
		n = max(len(bs), len(hs)) - 1 // a job needed by the gate's: all of it
	}
	if n >= len(bs) || n >= len(hs) {
		return true
	}
	for i := 0; i <= n; i++ {
		if !reflect.DeepEqual(bs[i], hs[i]) && (bt.isGate(bs[i]) || ht.isGate(hs[i]) || !bumpOnly(bs[i], hs[i])) {
			return true
		}
	}
	return false
}

// bumpOnly: the steps differ only in one third-party action's ref (Dependabot).
func bumpOnly(b, h map[string]any) bool {
	bu, _ := b["uses"].(string)
	hu, _ := h["uses"].(string)
	ba, _, bok := strings.Cut(bu, "@")
	ha, _, hok := strings.Cut(hu, "@")
	if !bok || !hok || ba != ha || strings.HasPrefix(ba, "./") || strings.HasPrefix(ba, "docker://") {
		return false
	}
	bc, hc := maps.Clone(b), maps.Clone(h)
	delete(bc, "uses")
	delete(hc, "uses")
	return reflect.DeepEqual(bc, hc)
}
