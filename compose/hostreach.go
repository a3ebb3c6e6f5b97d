package compose

import (
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// safeCaps may be added without stack.allow: Docker grants them by default anyway.
var safeCaps = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"}

// where is "file:line: " of the key at path in the last of files that sets
// it (following YAML merge keys), or "".
func where(files []string, path ...string) string {
	found, foundDepth := "", 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var doc yaml.Node
		if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
			continue
		}
		// The deepest key of path the file sets: a scalar (build: .) stands for its keys.
		var last *yaml.Node
		n := doc.Content[0]
		for _, k := range path {
			key, v := child(n, k)
			if key == nil {
				break
			}
			last, n = key, v
		}
		if d := depth(doc.Content[0], path); last != nil && (d >= 2 || d == len(path)) && d >= foundDepth {
			found, foundDepth = fmt.Sprintf("%s:%d: ", filepath.Base(f), last.Line), d
		}
	}
	return found
}

// unalias is the node an alias (*anchor) stands for, n itself otherwise.
func unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func child(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m = unalias(m); m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], unalias(m.Content[i+1])
		}
	}
	// A merge key (<<: *anchor, or a list of them) brings its mapping's keys.
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "<<" {
			continue
		}
		v := m.Content[i+1]
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, src := range srcs {
			if src.Kind == yaml.AliasNode {
				src = src.Alias
			}
			if k, val := child(src, key); k != nil {
				return k, val
			}
		}
	}
	return nil, nil
}

// depth is how many keys of path m sets, in order.
func depth(m *yaml.Node, path []string) int {
	d := 0
	for _, k := range path {
		key, v := child(m, k)
		if key == nil {
			break
		}
		d, m = d+1, v
	}
	return d
}
