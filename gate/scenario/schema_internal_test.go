package scenario

// docs/scenario.schema.json is the scenario file's JSON Schema, for editors
// (yaml-language-server) and for checks before a push. These tests keep it
// and the decoder from drifting apart: every example the decoder accepts
// validates, the schema's keys are the decoder's, and fixtures the decoder
// refuses for an unknown key or a wrong type are refused by the schema too.

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

const schemaPath = "../../docs/scenario.schema.json"

// schemaKeys maps each $defs entry of the schema (and "" for the top level)
// to the key list the decoder checks that mapping against.
var schemaKeys = map[string][]string{
	"":                 topKeys,
	"stack":            stackKeys,
	"ceilings":         ceilingKeys,
	"gate":             gateKeys,
	"phase":            phaseKeys,
	"fault":            faultKeys,
	"recovery":         recoveryKeys,
	"workload":         workloadKeys,
	"http":             httpKeys,
	"ws":               wsKeys,
	"grpc":             grpcKeys,
	"openapiOperation": oapiKeys,
	"expect":           expectKeys,
	"thresholds":       thresholdKeys,
	"count":            countKeys,
}

// keyListNames are the package variables schemaKeys uses, by name: every
// d.mapping call must pass one of them (TestSchemaCoversEveryMapping).
var keyListNames = []string{
	"topKeys", "stackKeys", "ceilingKeys", "gateKeys", "phaseKeys", "faultKeys", "recoveryKeys", "workloadKeys",
	"httpKeys", "wsKeys", "grpcKeys", "oapiKeys", "expectKeys", "thresholdKeys", "countKeys",
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(schemaPath)
	if err != nil {
		t.Fatalf("compile %s: %v", schemaPath, err)
	}
	return sch
}

func readSchemaJSON(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return m
}

// yamlInstance reads a YAML document as the JSON value a schema validator
// sees (what yaml-language-server does too). ok is false when the YAML
// cannot be expressed as JSON (a non-string key, say).
func yamlInstance(t *testing.T, data []byte) (v any, ok bool) {
	t.Helper()
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, false
	}
	v, err = jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// scenarioFiles lists the YAML files under dir (recursively) whose top level
// has workloads: — the scenario files, not compose files or OpenAPI
// documents.
func scenarioFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var top map[string]any
		if yaml.Unmarshal(b, &top) == nil && top["workloads"] != nil {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaValidatesExamples: every scenario under examples/ and every
// valid one in testdata/ (outside testdata/errors) loads and validates.
func TestSchemaValidatesExamples(t *testing.T) {
	sch := compileSchema(t)
	var files []string
	for _, f := range append(scenarioFiles(t, "../../examples"), scenarioFiles(t, "testdata")...) {
		if !strings.Contains(filepath.ToSlash(f), "testdata/errors/") {
			files = append(files, f)
		}
	}
	if len(files) < 7 {
		t.Fatalf("found %d scenario files, want the demo's seven and testdata's: %v", len(files), files)
	}
	modeline := regexp.MustCompile(`(?m)^# yaml-language-server: \$schema=(\S+)$`)
	for _, f := range files {
		t.Run(filepath.ToSlash(f), func(t *testing.T) {
			if _, err := Load(f, Options{}); err != nil {
				t.Fatalf("the decoder refuses it: %v", err)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := yamlInstance(t, b)
			if !ok {
				t.Fatal("not expressible as JSON")
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("the schema refuses it: %v", err)
			}
			if strings.HasPrefix(filepath.ToSlash(f), "../../examples/") {
				m := modeline.FindSubmatch(b)
				if m == nil {
					t.Fatalf("no `# yaml-language-server: $schema=...` modeline")
				}
				target := filepath.Join(filepath.Dir(f), string(m[1]))
				if filepath.Clean(target) != filepath.Clean(schemaPath) {
					t.Fatalf("the modeline points at %s, not %s", target, schemaPath)
				}
			}
		})
	}
}

// TestSchemaValidatesReadmeScenario: the README's example scenario is a
// scenario, for the decoder and the schema alike.
func TestSchemaValidatesReadmeScenario(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var src []byte
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(b, -1) {
		if regexp.MustCompile(`(?m)^workloads:`).Match(m[1]) {
			src = m[1]
		}
	}
	if src == nil {
		t.Skip("README.md has no scenario block")
	}
	if _, err := Parse(src, "README.md", Options{}); err != nil {
		t.Fatalf("README's scenario: %v", err)
	}
	v, _ := yamlInstance(t, src)
	if err := compileSchema(t).Validate(v); err != nil {
		t.Fatalf("README's scenario: %v", err)
	}
}

// TestSchemaKeysMatchDecoder: each object of the schema lists exactly the
// keys its decoder accepts, and refuses any other (additionalProperties:
// false); the enums are the decoder's.
func TestSchemaKeysMatchDecoder(t *testing.T) {
	s := readSchemaJSON(t)
	defs, _ := s["$defs"].(map[string]any)
	for name, want := range schemaKeys {
		obj := s
		if name != "" {
			obj, _ = defs[name].(map[string]any)
			if obj == nil {
				t.Errorf("$defs.%s: missing", name)
				continue
			}
		}
		label := "$defs." + name
		if name == "" {
			label = "the top level"
		}
		if obj["additionalProperties"] != false {
			t.Errorf("%s: additionalProperties must be false (the decoder refuses unknown keys)", label)
		}
		props, _ := obj["properties"].(map[string]any)
		var got []string
		for k := range props {
			got = append(got, k)
		}
		if g, w := sorted(got), sorted(want); !slices.Equal(g, w) {
			t.Errorf("%s: schema keys %v, decoder keys %v", label, g, w)
		}
	}

	// Pattern-specific keys: each pattern's rule forbids exactly the other
	// patterns' keys (patternKeys).
	phase := defs["phase"].(map[string]any)
	var allPatternKeys []string
	for _, ks := range patternKeys {
		for _, k := range ks {
			if !slices.Contains(allPatternKeys, k) {
				allPatternKeys = append(allPatternKeys, k)
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range phase["allOf"].([]any) {
		rule := r.(map[string]any)
		pattern := findConst(rule["if"])
		if pattern == "" {
			t.Errorf("$defs.phase.allOf: a rule without a pattern const: %v", rule["if"])
			continue
		}
		seen[pattern] = true
		then := rule["then"].(map[string]any)
		var forbidden []string
		for k, v := range then["properties"].(map[string]any) {
			if v == false {
				forbidden = append(forbidden, k)
			}
		}
		var want []string
		for _, k := range allPatternKeys {
			if !slices.Contains(patternKeys[pattern], k) {
				want = append(want, k)
			}
		}
		if g, w := sorted(forbidden), sorted(want); !slices.Equal(g, w) {
			t.Errorf("$defs.phase: pattern %s forbids %v, the decoder %v", pattern, g, w)
		}
	}
	for _, p := range patterns {
		if !seen[p] {
			t.Errorf("$defs.phase: no rule for pattern %s", p)
		}
	}

	enums := []struct {
		where string
		got   any
		want  []string
	}{
		{"$defs.phase.pattern", defs["phase"].(map[string]any)["properties"].(map[string]any)["pattern"], patterns},
		{"$defs.http.method", defs["http"].(map[string]any)["properties"].(map[string]any)["method"], methods},
		{"$defs.fault.action", defs["fault"].(map[string]any)["properties"].(map[string]any)["action"], FaultActions},
	}
	for _, e := range enums {
		var got []string
		for _, v := range e.got.(map[string]any)["enum"].([]any) {
			got = append(got, v.(string))
		}
		if g, w := sorted(got), sorted(e.want); !slices.Equal(g, w) {
			t.Errorf("%s: enum %v, decoder %v", e.where, g, w)
		}
	}
}

// findConst returns the pattern an if-clause tests for (its const).
func findConst(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if c, ok := x["const"].(string); ok {
			return c
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if c := findConst(x[k]); c != "" {
				return c
			}
		}
	case []any:
		for _, e := range x {
			if c := findConst(e); c != "" {
				return c
			}
		}
	}
	return ""
}

// TestSchemaCoversEveryMapping reads this package's source: every
// d.mapping(node, path, keys) call passes a key list the schema test
// knows, so a new mapping cannot appear without a schema object.
func TestSchemaCoversEveryMapping(t *testing.T) {
	fset := gotoken.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "mapping" || len(call.Args) != 3 {
				return true
			}
			calls++
			id, ok := call.Args[2].(*ast.Ident)
			if !ok || !slices.Contains(keyListNames, id.Name) {
				t.Errorf("%s: d.mapping with key list %s, which the schema test does not know: add it to schemaKeys and to docs/scenario.schema.json",
					fset.Position(call.Pos()), types(call.Args[2]))
			}
			return true
		})
	}
	if calls < len(keyListNames) {
		t.Errorf("found %d d.mapping calls, want at least %d", calls, len(keyListNames))
	}
}

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "(an expression)"
}

// refusedByShape matches the decoder's errors for a file's shape: an
// unknown key, a key of another pattern, a value of the wrong type. The
// schema must refuse every fixture the decoder refuses for one of these.
var refusedByShape = regexp.MustCompile(`unknown field|not used by a \w+ phase|must be (a list|a mapping|a number|an integer|a string|true or false), not|a scenario must be a mapping`)

func TestSchemaRefusesInvalidFixtures(t *testing.T) {
	sch := compileSchema(t)
	goldens, err := filepath.Glob("testdata/errors/*.golden")
	if err != nil {
		t.Fatal(err)
	}
	shape, refused := 0, 0
	for _, g := range goldens {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		yamlFile := strings.TrimSuffix(g, ".golden") + ".yaml"
		b, err := os.ReadFile(yamlFile)
		if err != nil {
			continue // a fixture of another extension
		}
		v, ok := yamlInstance(t, b)
		schemaRefuses := !ok || sch.Validate(v) != nil
		if schemaRefuses {
			refused++
		}
		if !refusedByShape.Match(want) {
			continue
		}
		shape++
		if !schemaRefuses {
			t.Errorf("%s: the decoder refuses it (%s), the schema accepts it", yamlFile, strings.TrimSpace(string(want)))
		}
	}
	if shape < 10 {
		t.Errorf("only %d fixtures refused for their shape; the pattern above no longer matches the decoder's messages?", shape)
	}
	t.Logf("the schema refuses %d of %d invalid fixtures; all %d refused for an unknown key, a pattern's key or a type", refused, len(goldens), shape)
}
