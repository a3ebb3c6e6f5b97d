package scenario

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// ResolveEnv looks up every ${NAME} the workloads use; an empty value counts as
// set. Each missing one is an *Error, joined; the values are secrets (Secrets).
func (s *Scenario) ResolveEnv(lookup func(string) (string, bool)) (map[string]string, error) {
	env := map[string]string{}
	var errs []error
	missing := map[string]bool{}
	for _, ref := range s.envRefs() {
		if _, done := env[ref.name]; done {
			continue
		}
		if v, ok := lookup(ref.name); ok {
			env[ref.name] = v
			continue
		}
		if !missing[ref.name] {
			missing[ref.name] = true
			errs = append(errs, &Error{File: s.File, Line: s.lines[ref.field], Field: ref.field,
				Msg: fmt.Sprintf("environment variable %s is not set", ref.name)})
		}
	}
	return env, errors.Join(errs...)
}

// Secrets returns the non-empty values of the variables s references,
// deduplicated, longest first, so masking in order leaves no part of a longer
// one. None may be written to a result, report or log.
func (s *Scenario) Secrets(env map[string]string) []string {
	var out []string
	for _, ref := range s.envRefs() {
		if v := env[ref.name]; v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

type envRef struct{ name, field string }

// envRefs lists the ${NAME} references in a stable order.
func (s *Scenario) envRefs() []envRef {
	var out []envRef
	add := func(field, text string) {
		for _, name := range envRefs(text) {
			out = append(out, envRef{name: name, field: field})
		}
	}
	for i, w := range s.Workloads {
		out = append(out, opEnvRefs(i, w)...) // ws, grpc: protocols_hash.go
		if w.HTTP == nil {
			continue
		}
		base := fmt.Sprintf("workloads[%d].http", i)
		add(base+".path", w.HTTP.Path)
		names := make([]string, 0, len(w.HTTP.Headers))
		for name := range w.HTTP.Headers {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			add(base+".headers."+name, w.HTTP.Headers[name])
		}
		add(base+".body", w.HTTP.Body)
	}
	return out
}
