package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The workflows users copy (examples/workflows) use only inputs the
// actions declare, bound their time and runs, and leave rounds to the gate.
func TestExampleWorkflows(t *testing.T) {
	declared := map[string]map[string]bool{}
	for uses, file := range map[string]string{"loadgate/loadgate@v1": "../../action.yml", "loadgate/loadgate/comment@v1": "../../comment/action.yml",
		"loadgate/loadgate/history@v1": "../../history/action.yml", "loadgate/loadgate/ondemand@v1": "../../ondemand/action.yml"} {
		var a struct{ Inputs map[string]any }
		readYAML(t, file, &a)
		declared[uses] = map[string]bool{}
		for k := range a.Inputs {
			declared[uses][k] = true
		}
	}
	files, _ := filepath.Glob("../../examples/workflows/*.yml")
	if len(files) < 4 {
		t.Fatalf("examples/workflows has %d workflows, want the gate, manual, release and comment ones", len(files))
	}
	for _, f := range files {
		var wf struct {
			Concurrency any
			Jobs        map[string]struct {
				Concurrency    any
				TimeoutMinutes int `yaml:"timeout-minutes"`
				Steps          []struct {
					Uses string
					With map[string]string
				}
			}
		}
		readYAML(t, f, &wf)
		name := filepath.Base(f)
		used := false
		for id, j := range wf.Jobs {
			if wf.Concurrency == nil && j.Concurrency == nil && !strings.Contains(name, "comment") {
				t.Errorf("%s: job %s has no concurrency, nor has the workflow", name, id)
			}
			if j.TimeoutMinutes == 0 {
				t.Errorf("%s: job %s has no timeout-minutes", name, id)
			}
			for _, s := range j.Steps {
				in, ok := declared[s.Uses]
				if !ok {
					continue
				}
				used = true
				for k := range s.With {
					if !in[k] {
						t.Errorf("%s: %s has no input %q", name, s.Uses, k)
					}
				}
				if _, ok := s.With["rounds"]; ok {
					t.Errorf("%s: rounds: set; the default (auto) stops when decided", name)
				}
			}
		}
		if !used {
			t.Errorf("%s uses neither loadgate action", name)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
