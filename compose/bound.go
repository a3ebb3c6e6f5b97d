package compose

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bounds on a compose file before compose-go reads it: a file of 10 KB whose
// aliases expand to a billion nodes took compose-go 0.5–2 GB and 25 s.
const (
	maxFileBytes     = 1 << 20 // a compose file; the largest real ones are tens of KB
	maxAliases       = 1000    // alias uses in one file
	maxExpandedNodes = 200_000 // YAML nodes once every alias is expanded
	maxFiles         = 100     // files in one project, includes and extends counted
)

// boundFiles checks files and every file they include or extend (resolved from
// the file's directory, kept inside root) against the bounds above.
func boundFiles(files []string, root string) (map[string]*yaml.Node, error) {
	docs := map[string]*yaml.Node{}
	seen := map[string]bool{}
	queue := append([]string(nil), files...)
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if seen[f] {
			continue
		}
		seen[f] = true
		if len(seen) > maxFiles {
			return nil, fmt.Errorf("%s: more than %d compose files included or extended", f, maxFiles)
		}
		doc, err := boundFile(f)
		if err != nil {
			return nil, err
		}
		docs[f] = doc
		for _, ref := range referenced(doc) {
			if strings.Contains(ref.path, "://") {
				continue // remote: compose-go refuses it offline
			}
			if strings.Contains(ref.path, "$") { // interpolated after this check: not bounded, not scanned
				return nil, fmt.Errorf("%s:%d: %s (%s) is interpolated: write the path literally: refused", filepath.Base(f), ref.line, ref.key, ref.path)
			}
			p := ref.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(f), p)
			}
			if root != "" && !within(realPath(root), realPath(p)) {
				return nil, fmt.Errorf("%s:%d: %s (%s) is outside the side's checkout: refused", filepath.Base(f), ref.line, ref.key, ref.path)
			}
			queue = append(queue, p)
		}
	}
	return docs, nil
}

// bareVars finds, in every file of docs, variables named without a value under
// environment (list "- VAR" or map "VAR:") or build args: compose gives them
// this process's own value, the job's environment. Each is "file:line: path (VAR)".
func bareVars(docs map[string]*yaml.Node) []string {
	var out []string
	var walk func(f string, n *yaml.Node, path []string)
	walk = func(f string, n *yaml.Node, path []string) {
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(slices.Clone(path), k.Value)
			if k.Value == "environment" || k.Value == "args" {
				switch v.Kind {
				case yaml.SequenceNode:
					for _, it := range v.Content {
						if it.Kind == yaml.ScalarNode && !strings.Contains(it.Value, "=") {
							out = append(out, fmt.Sprintf("%s:%d: %s (%s)", filepath.Base(f), it.Line, strings.Join(p, "."), it.Value))
						}
					}
				case yaml.MappingNode:
					for j := 0; j+1 < len(v.Content); j += 2 {
						if val := v.Content[j+1]; val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
							out = append(out, fmt.Sprintf("%s:%d: %s (%s)", filepath.Base(f), v.Content[j].Line, strings.Join(p, "."), v.Content[j].Value))
						}
					}
				}
				continue
			}
			walk(f, v, p)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(docs)) {
		if d := docs[f]; len(d.Content) > 0 {
			walk(f, d.Content[0], nil)
		}
	}
	return out
}

// interpolated matches a compose interpolation, ${NAME...} or $NAME; group 1
// is "$$" (an escaped dollar, not one), 2 and 3 the name.
var interpolated = regexp.MustCompile(`(\$\$)|\$\{([A-Za-z_][A-Za-z0-9_]*)|\$([A-Za-z_][A-Za-z0-9_]*)`)

// secretRefs finds, in every file of docs, interpolations of a variable the
// job's environment sets under a secret's name (SecretName): compose would
// put its value into the stack, where the change's code reads it. Each is
// "file:line: path (${NAME})".
func secretRefs(docs map[string]*yaml.Node, lookup func(string) (string, bool)) []string {
	var out []string
	var walk func(f string, n *yaml.Node, path []string)
	walk = func(f string, n *yaml.Node, path []string) {
		if n == nil {
			return
		}
		switch n.Kind {
		case yaml.ScalarNode:
			for _, m := range interpolated.FindAllStringSubmatch(n.Value, -1) {
				name := m[2] + m[3]
				if m[1] != "" || !SecretName(name) {
					continue
				}
				if _, set := lookup(name); set {
					out = append(out, fmt.Sprintf("%s:%d: %s (${%s})", filepath.Base(f), n.Line, strings.Join(path, "."), name))
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(f, n.Content[i+1], append(slices.Clone(path), n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for _, it := range n.Content {
				walk(f, it, path)
			}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(docs)) {
		if d := docs[f]; len(d.Content) > 0 {
			walk(f, d.Content[0], nil)
		}
	}
	return out
}

// boundFile reads one file within the bounds and returns its parsed document.
func boundFile(f string) (*yaml.Node, error) {
	fh, err := os.Open(f)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d KiB: refused", filepath.Base(f), maxFileBytes>>10)
	}
	var doc yaml.Node // parsed, never expanded: aliases stay references
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
	}
	c := &aliasCount{size: map[*yaml.Node]int{}}
	n := c.nodes(&doc)
	switch {
	case c.aliases > maxAliases:
		return nil, fmt.Errorf("%s:%d: more than %d YAML aliases: refused", filepath.Base(f), c.line, maxAliases)
	case n > maxExpandedNodes:
		return nil, fmt.Errorf("%s:%d: YAML aliases expand to more than %d nodes (an alias bomb): refused", filepath.Base(f), c.line, maxExpandedNodes)
	}
	return &doc, nil
}

// aliasCount counts a document's nodes with every alias expanded, each anchor's
// size computed once, capped past maxExpandedNodes: linear in the file's size.
type aliasCount struct {
	size    map[*yaml.Node]int
	aliases int
	line    int // of the alias that made the count exceed a bound
}

func (c *aliasCount) nodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if s, ok := c.size[n]; ok {
		return s
	}
	c.size[n] = maxExpandedNodes + 1 // an alias cycle counts as too many
	total := 1
	if n.Kind == yaml.AliasNode {
		c.aliases++
		total += c.nodes(n.Alias)
	}
	for _, ch := range n.Content {
		total += c.nodes(ch)
		if total > maxExpandedNodes {
			break
		}
	}
	if total > maxExpandedNodes || c.aliases > maxAliases {
		total = maxExpandedNodes + 1
		if c.line == 0 {
			c.line = n.Line
		}
	}
	c.size[n] = total
	return total
}

type fileRef struct {
	key, path string
	line      int
}

// referenced lists the files a document includes (include:) or extends
// (services.*.extends.file).
func referenced(doc *yaml.Node) []fileRef {
	if doc == nil || len(doc.Content) == 0 {
		return nil
	}
	top := unalias(doc.Content[0])
	var out []fileRef
	add := func(key string, n *yaml.Node) {
		if n = unalias(n); n != nil && n.Kind == yaml.ScalarNode {
			out = append(out, fileRef{key: key, path: n.Value, line: n.Line})
		}
	}
	if _, inc := child(top, "include"); inc != nil && inc.Kind == yaml.SequenceNode {
		for _, it := range inc.Content {
			switch it = unalias(it); it.Kind {
			case yaml.ScalarNode:
				add("include", it)
			case yaml.MappingNode:
				_, p := child(it, "path")
				if p != nil && p.Kind == yaml.SequenceNode {
					for _, q := range p.Content {
						add("include", q)
					}
				} else {
					add("include", p)
				}
			}
		}
	}
	if _, svcs := child(top, "services"); svcs != nil && svcs.Kind == yaml.MappingNode {
		for i := 1; i < len(svcs.Content); i += 2 {
			if _, ext := child(svcs.Content[i], "extends"); ext != nil {
				_, f := child(ext, "file")
				add("extends.file", f)
			}
		}
	}
	return out
}
