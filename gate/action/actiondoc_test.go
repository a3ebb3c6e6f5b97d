package action_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/action.md's input and output tables from action.yml")

// actionDoc renders action.yml's inputs and outputs as docs/action.md's
// tables, in action.yml's order: one source, so the reference cannot drift.
func actionDoc(t *testing.T, yml []byte) (inputs, outputs string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(yml, &doc); err != nil {
		t.Fatal(err)
	}
	section := func(key string) *yaml.Node {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == key {
				return root.Content[i+1]
			}
		}
		t.Fatalf("action.yml has no %s", key)
		return nil
	}
	field := func(m *yaml.Node, key string) (string, bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1].Value, true
			}
		}
		return "", false
	}
	cell := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace
	var in strings.Builder
	in.WriteString("| input | default | what |\n| --- | --- | --- |\n")
	ins := section("inputs")
	for i := 0; i+1 < len(ins.Content); i += 2 {
		m := ins.Content[i+1]
		desc, _ := field(m, "description")
		def, _ := field(m, "default")
		req, _ := field(m, "required")
		switch {
		case req == "true":
			def = "(required)"
		case def == "":
			def = "—"
		default:
			def = "`" + def + "`"
		}
		fmt.Fprintf(&in, "| `%s` | %s | %s |\n", ins.Content[i].Value, cell(def), cell(strings.TrimSpace(desc)))
	}
	var out strings.Builder
	out.WriteString("| output | what |\n| --- | --- |\n")
	outs := section("outputs")
	for i := 0; i+1 < len(outs.Content); i += 2 {
		desc, _ := field(outs.Content[i+1], "description")
		fmt.Fprintf(&out, "| `%s` | %s |\n", outs.Content[i].Value, cell(strings.TrimSpace(desc)))
	}
	return in.String(), out.String()
}

// replaceBetween puts body between the begin and end markers of doc.
func replaceBetween(t *testing.T, doc, name, body string) string {
	t.Helper()
	begin, end := "<!-- "+name+":begin (generated from action.yml: go test ./gate/action -run TestActionDoc -update-docs) -->\n", "<!-- "+name+":end -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/action.md has no %q … %q markers", begin, end)
	}
	return doc[:i+len(begin)] + body + doc[j:]
}

// TestActionDoc fails when docs/action.md's tables are not action.yml's.
func TestActionDoc(t *testing.T) {
	yml, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile("../../docs/action.md")
	if err != nil {
		t.Fatal(err)
	}
	in, out := actionDoc(t, yml)
	want := replaceBetween(t, replaceBetween(t, string(md), "inputs", in), "outputs", out)
	if want == string(md) {
		return
	}
	if *updateDocs {
		if err := os.WriteFile("../../docs/action.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/action.md's tables differ from action.yml; run go test ./gate/action -run TestActionDoc -update-docs")
}
