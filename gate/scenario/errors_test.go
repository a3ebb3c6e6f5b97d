package scenario_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

var update = flag.Bool("update", false, "rewrite testdata/errors/*.golden from the current error messages")

// TestErrorGolden parses every bad file in testdata/errors and compares the
// error text with the .golden file beside it. Files named ceiling_* must be
// refused by a ceiling; every error must be an *scenario.Error.
func TestErrorGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d bad cases in testdata/errors", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = scenario.Parse(data, filepath.Base(file), scenario.Options{})
			if err == nil {
				t.Fatal("Parse succeeded; want an error")
			}
			var se *scenario.Error
			if !errors.As(err, &se) {
				t.Errorf("error %q is not a *scenario.Error", err)
			}
			if ceiling := strings.HasPrefix(name, "ceiling_"); errors.Is(err, scenario.ErrCeiling) != ceiling {
				t.Errorf("errors.Is(err, ErrCeiling) = %v, want %v", !ceiling, ceiling)
			}
			checkGolden(t, strings.TrimSuffix(file, ".yaml")+".golden", err.Error()+"\n")
		})
	}
}

func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("error text differs from %s\n got: %s want: %s", golden, got, want)
	}
}

func TestScaleOption(t *testing.T) {
	for _, scale := range []float64{-1, 1.5, 2} {
		_, err := scenario.Load("testdata/demo.yaml", scenario.Options{Scale: scale})
		var se *scenario.Error
		if !errors.As(err, &se) || se.Field != "--scale" {
			t.Errorf("scale %v: err = %v, want a --scale error", scale, err)
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := scenario.Load("testdata/no-such-file.yaml", scenario.Options{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want os.ErrNotExist", err)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		err  scenario.Error
		want string
	}{
		{scenario.Error{File: "scenario.yaml", Line: 12, Field: "phases[1].rate", Msg: "must be > 0"}, "scenario.yaml:12: phases[1].rate: must be > 0"},
		{scenario.Error{File: "scenario.yaml", Msg: "empty scenario file"}, "scenario.yaml: empty scenario file"},
		{scenario.Error{Line: 3, Field: "name", Msg: "is required"}, "line 3: name: is required"},
		{scenario.Error{Field: "name", Msg: "is required"}, "name: is required"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
