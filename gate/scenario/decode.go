package scenario

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree keeping the first error of the part it is
// in; after it, every helper returns zero values, so decoding needs no check
// after each field. Independent parts (a top-level section, a phase, a
// workload) are decoded in their own scope, so a file's errors come together.
type decoder struct {
	file  string
	err   *Error         // the current scope's first error
	errs  []*Error       // the errors of scopes that ended
	lines map[string]int // field path -> line of its value, for later errors
}

func (d *decoder) ok() bool { return d.err == nil }

// errQuiet ends a scope whose problem another error already named.
var errQuiet = &Error{Msg: "(named by another error)"}

// quiet ends the current scope without an error of its own.
func (d *decoder) quiet() {
	if d.err == nil {
		d.err = errQuiet
	}
}

// scoped decodes an independent part with an error state of its own, keeps
// its first error, and reports whether it decoded cleanly.
func (d *decoder) scoped(fn func()) bool {
	outer := d.err
	d.err = nil
	fn()
	clean := d.err == nil
	if !clean && d.err != errQuiet {
		d.errs = append(d.errs, d.err)
	}
	d.err = outer
	return clean
}

// result is every error met, in line order: nil, one *Error, or Errors.
func (d *decoder) result() error {
	all := slices.Clone(d.errs)
	if d.err != nil && d.err != errQuiet {
		all = append(all, d.err)
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	slices.SortStableFunc(all, func(a, b *Error) int { return a.Line - b.Line })
	return Errors(all)
}

func (d *decoder) failf(line int, field, format string, args ...any) {
	if d.err == nil {
		d.err = &Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) check(cond bool, n *yaml.Node, field, format string, args ...any) {
	if !cond {
		d.failf(n.Line, field, format, args...)
	}
}

func (d *decoder) typeErr(n *yaml.Node, field, want string) {
	d.failf(n.Line, field, "must be %s, not %s", want, describe(n))
}

// deref follows aliases, bounded against a self-referencing anchor.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind != yaml.ScalarNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!str":
		return fmt.Sprintf("the string %q", clip(n.Value))
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "a timestamp"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!")
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

type pair struct{ key, val *yaml.Node }

// pairs returns mapping n's entries in order, merge keys (<<: *anchor) flattened:
// explicit keys win, then the first merged source. A key written twice is an error.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	n = deref(n)
	if !d.ok() {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, path, "a mapping")
		return nil
	}
	seen := map[string]bool{}
	out := d.ownPairs(n, path, seen)
	visited := map[*yaml.Node]bool{n: true}
	for _, src := range mergeSources(n) {
		out = append(out, d.mergedPairs(src, path, seen, visited)...)
	}
	return out
}

func (d *decoder) ownPairs(n *yaml.Node, path string, seen map[string]bool) []pair {
	var out []pair
	for i := 0; i+1 < len(n.Content) && d.ok(); i += 2 {
		k := deref(n.Content[i])
		if isMergeKey(k) {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.failf(k.Line, path, "keys must be strings, not %s", describe(k))
			break
		}
		if seen[k.Value] {
			d.failf(k.Line, join(path, k.Value), "key written twice")
			break
		}
		seen[k.Value] = true
		out = append(out, pair{k, n.Content[i+1]})
	}
	return out
}

func (d *decoder) mergedPairs(src *yaml.Node, path string, seen map[string]bool, visited map[*yaml.Node]bool) []pair {
	src = deref(src)
	if !d.ok() || visited[src] {
		return nil
	}
	visited[src] = true
	if src.Kind == yaml.SequenceNode {
		var out []pair
		for _, s := range src.Content {
			out = append(out, d.mergedPairs(s, path, seen, visited)...)
		}
		return out
	}
	if src.Kind != yaml.MappingNode {
		d.failf(src.Line, join(path, "<<"), "must be a mapping or a list of mappings, not %s", describe(src))
		return nil
	}
	var out []pair
	for i := 0; i+1 < len(src.Content); i += 2 {
		k := deref(src.Content[i])
		if isMergeKey(k) || k.Kind != yaml.ScalarNode || seen[k.Value] {
			continue
		}
		seen[k.Value] = true
		out = append(out, pair{k, src.Content[i+1]})
	}
	for _, s := range mergeSources(src) {
		out = append(out, d.mergedPairs(s, path, seen, visited)...)
	}
	return out
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

func mergeSources(n *yaml.Node) []*yaml.Node {
	var out []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if isMergeKey(deref(n.Content[i])) {
			out = append(out, n.Content[i+1])
		}
	}
	return out
}

type fields struct {
	path  string
	line  int // line of the mapping itself
	order []string
	keys  map[string]*yaml.Node
	vals  map[string]*yaml.Node
	typo  map[string]bool // known keys an unknown one was taken for: not "required" again
}

// mapping decodes n as a mapping whose keys must be in known; top-level "x-"
// keys are ignored so users can park YAML anchors there.
func (d *decoder) mapping(n *yaml.Node, path string, known []string) *fields {
	f := &fields{path: path, keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}, typo: map[string]bool{}}
	if n = deref(n); n != nil {
		f.line = n.Line
	}
	for _, p := range d.pairs(n, path) {
		name := p.key.Value
		if path == "" && strings.HasPrefix(name, "x-") {
			continue
		}
		if !slices.Contains(known, name) {
			if k := nearKey(name, known); k != "" {
				f.typo[k] = true
			}
			d.failf(p.key.Line, join(path, name), "unknown field%s (known: %s)", suggest(name, known), strings.Join(sorted(known), ", "))
			continue // the known fields still decode, for their own errors
		}
		d.lines[join(path, name)] = p.key.Line
		f.order = append(f.order, name)
		f.keys[name], f.vals[name] = p.key, p.val
	}
	return f
}

func (f *fields) get(key string) *yaml.Node {
	if v := f.vals[key]; v != nil && !isNull(v) {
		return v
	}
	return nil
}

func (f *fields) sub(key string) string { return join(f.path, key) }

func (d *decoder) require(f *fields, key string) *yaml.Node {
	v := f.get(key)
	if v == nil && f.typo[key] {
		d.quiet() // the unknown key's error said it
	} else if v == nil {
		line := f.line
		if k := f.keys[key]; k != nil {
			line = k.Line
		}
		d.failf(line, f.sub(key), "is required")
	}
	return v
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// suggest returns ` (did you mean "x"?)` for a known key within two edits, or "".
func suggest(name string, known []string) string {
	best := nearKey(name, known)
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// nearKey is the known key within two edits of name ("" if none).
func nearKey(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := editDistance(name, k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Scalars: zero when n is nil or an error is recorded.

func (d *decoder) scalar(n *yaml.Node, field, want string) *yaml.Node {
	n = deref(n)
	if n == nil || !d.ok() {
		return nil
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		d.typeErr(n, field, want)
		return nil
	}
	d.lines[field] = n.Line
	return n
}

// str accepts any non-null scalar (`http_version: 2` reads as "2").
func (d *decoder) str(n *yaml.Node, field string) string {
	if n = d.scalar(n, field, "a string"); n == nil {
		return ""
	}
	return n.Value
}

func (d *decoder) number(n *yaml.Node, field string) float64 {
	if n = d.scalar(n, field, "a number"); n == nil {
		return 0
	}
	var f float64
	if tag := n.ShortTag(); (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
		d.typeErr(n, field, "a number")
		return 0
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		d.failf(n.Line, field, "must be a finite number")
	}
	return f
}

func (d *decoder) integer(n *yaml.Node, field string) int {
	if n = d.scalar(n, field, "an integer"); n == nil {
		return 0
	}
	var i int
	if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
		d.typeErr(n, field, "an integer")
	}
	return i
}

func (d *decoder) boolean(n *yaml.Node, field string) bool {
	if n = d.scalar(n, field, "true or false"); n == nil {
		return false
	}
	var b bool
	if n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		d.typeErr(n, field, "true or false")
	}
	return b
}

func (d *decoder) duration(n *yaml.Node, field string) time.Duration {
	if n = d.scalar(n, field, "a duration"); n == nil {
		return 0
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.failf(n.Line, field, "invalid duration %q: use a Go duration such as 10s, 300ms or 1m30s", clip(n.Value))
	}
	return v
}

func (d *decoder) positiveDuration(n *yaml.Node, field string) time.Duration {
	v := d.duration(n, field)
	if n != nil && d.ok() {
		d.check(v > 0, n, field, "must be > 0")
	}
	return v
}

func (d *decoder) list(n *yaml.Node, field string) []*yaml.Node {
	n = deref(n)
	if n == nil || !d.ok() {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, field, "a list")
		return nil
	}
	return n.Content
}
