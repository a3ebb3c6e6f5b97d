package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Regression: `loadgate report out/r.json --format markdown` failed ("got
// 3 arguments"): flags stopped at the first positional argument.
func TestFlagsAfterPositionalArguments(t *testing.T) {
	res := runResult(t, cmpScenario, 0)
	for _, args := range [][]string{
		{"report", res, "--format", "markdown"},
		{"report", "--format", "markdown", res},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		if code(err) > 1 || !strings.Contains(stdout.String(), "\n# loadgate") && !strings.HasPrefix(stdout.String(), "# loadgate") {
			t.Errorf("%q: exit %d, %v; stdout %.60q", args, code(err), err, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", res, res, "--tolerance", "5%", "--format", "json"}, &stdout, &stderr)
	if code(err) > 1 || !strings.Contains(stdout.String(), `"tolerance": 0.05`) {
		t.Errorf("compare with flags last: exit %d, %v\n%.300s", code(err), err, stdout.String())
	}
}

// -h shows the usage and the examples before the flags, the prose after.
func TestHelpLeadsWithUsageAndExamples(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"gate", "-h"}, &stdout, &stderr)
	if code(err) != 0 {
		t.Fatalf("gate -h: exit %d", code(err))
	}
	out := stderr.String()
	usage, examples, flags, prose := strings.Index(out, "Usage:"), strings.Index(out, "Examples:"), strings.Index(out, "Flags:"), strings.Index(out, "The protected side sets the bar")
	if usage != 0 || !(examples < flags && flags < prose) || examples < 0 {
		t.Errorf("gate -h order: usage %d, examples %d, flags %d, prose %d\n%.600s", usage, examples, flags, prose, out)
	}
}

// Regression: `loadgate gate --tolerance 150` printed its one good line,
// then 126 lines of help that buried it.
func TestBadFlagPrintsOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", "--tolerance", "150"}, `loadgate: gate: invalid value "150" for flag --tolerance: `},
		{[]string{"run", "--no-such-flag"}, "loadgate: run: flag provided but not defined: --no-such-flag (see loadgate run -h)"},
		{[]string{"baseline", "save", "--name"}, "loadgate: baseline save: flag needs an argument: --name (see loadgate baseline save -h)"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if got := exitCode(err, &stderr); got != 2 {
			t.Errorf("%q: exit %d, want 2", c.args, got)
		}
		out := stderr.String()
		if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, c.want) || !strings.HasSuffix(out, " -h)\n") {
			t.Errorf("%q: want one line starting %q, got:\n%s", c.args, c.want, out)
		}
	}
}
