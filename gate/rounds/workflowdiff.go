package rounds

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// judgesItself reports whether head's workflow changes what decides the gate:
// a loadgate job up to its step (ref bumps aside), its needs, or the trigger,
// env, defaults, permissions. Anything unreadable counts as a change.
func judgesItself(base, head []byte) bool {
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
	for _, id := range gateJobs(bj, hj) {
		if jobChanged(mapOf(bj[id]), mapOf(hj[id])) {
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
func gateJobs(base, head map[string]any) []string {
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, jobs := range []map[string]any{base, head} {
		for id, j := range jobs {
			if runsGate(mapOf(j)) {
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

func runsGate(job map[string]any) bool {
	if isGate(job) {
		return true
	}
	return gateStep(steps(job)) >= 0
}

func isGate(step map[string]any) bool {
	uses, _ := step["uses"].(string)
	run, _ := step["run"].(string)
	return strings.Contains(strings.ToLower(uses), "loadgate") || strings.HasPrefix(uses, "./") ||
		strings.Contains(strings.ToLower(run), "loadgate")
}

// gateStep is the index of the last step that runs loadgate, or -1.
func gateStep(s []map[string]any) int {
	last := -1
	for i, st := range s {
		if isGate(st) {
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
func jobChanged(b, h map[string]any) bool {
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
	n := max(gateStep(bs), gateStep(hs))
	if n < 0 {
		n = max(len(bs), len(hs)) - 1 // a job needed by the gate's: all of it
	}
	if n >= len(bs) || n >= len(hs) {
		return true
	}
	for i := 0; i <= n; i++ {
		if !reflect.DeepEqual(bs[i], hs[i]) && (isGate(bs[i]) || isGate(hs[i]) || !bumpOnly(bs[i], hs[i])) {
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
