package compose

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/loadgate/loadgate/gate/scenario"
)

var update = flag.Bool("update", false, "rewrite docs/security.md's allow-list table from the code")

const (
	docPath  = "../docs/security.md"
	docBegin = "<!-- allow-list: begin (generated: go test ./compose -run TestSecurityDocAllowList -update) -->"
	docEnd   = "<!-- allow-list: end -->"
)

// allowTable is docs/security.md's table, from serviceRules and projectRules.
func allowTable() string {
	var b strings.Builder
	b.WriteString("| key | loadgate | why |\n| --- | --- | --- |\n")
	order := []action{accept, check, override, refuse}
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range serviceRules {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(keys, func(a, c string) int {
		if d := slices.Index(order, serviceRules[a].do) - slices.Index(order, serviceRules[c].do); d != 0 {
			return d
		}
		return strings.Compare(a, c)
	})
	for _, k := range keys {
		r := serviceRules[k]
		fmt.Fprintf(&b, "| `services.<name>.%s` | %s | %s |\n", k, r.do, strings.ReplaceAll(r.why, "|", "\\|"))
	}
	for _, r := range projectRules {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.key, r.do, strings.ReplaceAll(r.why, "|", "\\|"))
	}
	fmt.Fprintf(&b, "\nAny other service key is refused. `stack.allow` (in a gate, base's scenario) accepts a refused setting by one of these names: %s.\n",
		"`"+strings.Join(scenario.HostKeys, "`, `")+"`")
	return b.String()
}

// The allow-list in docs/security.md is the code's: -update rewrites it
// between the markers, and a stale table fails.
func TestSecurityDocAllowList(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(docBegin)), bytes.Index(doc, []byte(docEnd))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q … %q", docPath, docBegin, docEnd)
	}
	want := docBegin + "\n" + allowTable() + docEnd
	got := string(doc[i : j+len(docEnd)])
	if got == want {
		return
	}
	if *update {
		out := append(append(slices.Clone(doc[:i]), want...), doc[j+len(docEnd):]...)
		if err := os.WriteFile(docPath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's allow-list is stale: run go test ./compose -run TestSecurityDocAllowList -update and read the diff", docPath)
}

// Every key compose-go knows for a service has a rule: a new one is refused
// until someone decides, and the table says so.
func TestEveryServiceKeyHasARule(t *testing.T) {
	st := reflect.TypeOf(types.ServiceConfig{})
	for i := 0; i < st.NumField(); i++ {
		if k := yamlName(st.Field(i)); k != "" {
			if _, ok := serviceRules[k]; !ok {
				t.Errorf("services.*.%s has no rule in serviceRules", k)
			}
		}
	}
}

// Every name a refusal tells the user to put in stack.allow is one the
// scenario accepts (scenario.HostKeys), and every HostKey is used.
func TestAllowNamesAreHostKeys(t *testing.T) {
	used := map[string]bool{}
	for k, r := range serviceRules {
		if r.do == refuse && k != "container_name" {
			used[k] = true
		}
	}
	used["secrets"], used["configs"] = true, true // refused as kind.key in guard.project
	fset := token.NewFileSet()
	for _, f := range []string{"allow.go", "load.go"} {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var arg ast.Expr
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if fn.Sel.Name == "refuse" && len(call.Args) >= 2 {
					arg = call.Args[1]
				}
			case *ast.Ident:
				if fn.Name == "allowHint" && len(call.Args) == 1 {
					arg = call.Args[0]
				}
			}
			if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); s != "" {
					used[s] = true
				}
			}
			return true
		})
	}
	for k := range used {
		if !slices.Contains(scenario.HostKeys, k) {
			t.Errorf("refusals name %q, which stack.allow does not accept (scenario.HostKeys)", k)
		}
	}
	for _, k := range scenario.HostKeys {
		if !used[k] {
			t.Errorf("scenario.HostKeys has %q, which no refusal names", k)
		}
	}
}
