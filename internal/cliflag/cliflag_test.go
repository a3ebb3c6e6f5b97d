package cliflag_test

import (
	"bytes"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/cliflag"
)

// Flags may follow positional arguments; "--" makes the rest positional.
func TestParseFlagsAnywhere(t *testing.T) {
	for _, c := range []struct {
		args   []string
		format string
		files  []string
		pos    []string
	}{
		{[]string{"r.json", "--format", "md"}, "md", nil, []string{"r.json"}},                              // flag after the argument
		{[]string{"--format", "md", "r.json"}, "md", nil, []string{"r.json"}},                              // flag before
		{[]string{"a", "--file", "x", "b", "--file", "y"}, "text", []string{"x", "y"}, []string{"a", "b"}}, // repeated, interleaved
		{[]string{"a", "--", "--format", "md"}, "text", nil, []string{"a", "--format", "md"}},              // after "--": all positional
	} {
		fs := flag.NewFlagSet("report", flag.ContinueOnError)
		format := fs.String("format", "text", "")
		var files cliflag.Strings
		fs.Var(&files, "file", "")
		if err := cliflag.Parse(fs, c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if *format != c.format || !reflect.DeepEqual([]string(files), c.files) || !reflect.DeepEqual(fs.Args(), c.pos) && len(c.pos)+fs.NArg() > 0 {
			t.Errorf("%q: format %q files %q args %q; want %q %q %q", c.args, *format, files, fs.Args(), c.format, c.files, c.pos)
		}
	}
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := cliflag.Parse(fs, []string{"r.json", "--nope"}); err == nil {
		t.Error("an unknown flag after an argument was accepted")
	}
}

// The help leads with the usage and examples, then the flags, then prose.
func TestPrintHelpOrder(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("scenario", "", "the scenario `file`")
	var b bytes.Buffer
	cliflag.PrintHelp(&b, "Usage: loadgate x\n\nWhy it exists.\n\nExamples:\n  loadgate x --scenario s.yaml\n\nFlags:\n", fs)
	out := b.String()
	usage, ex, flags, prose := strings.Index(out, "Usage:"), strings.Index(out, "Examples:"), strings.Index(out, "-scenario"), strings.Index(out, "Why it exists.")
	if !(usage == 0 && usage < ex && ex < flags && flags < prose) || strings.Count(out, "Flags:") != 1 {
		t.Errorf("order usage %d examples %d flags %d prose %d:\n%s", usage, ex, flags, prose, out)
	}
}

func TestPIDsRefusesBadAndRepeatedIDs(t *testing.T) {
	var p cliflag.PIDs
	for _, v := range []string{"12", "34"} {
		if err := p.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	for _, v := range []string{"0", "-3", "x", "12"} {
		if err := p.Set(v); err == nil {
			t.Errorf("Set(%q) was taken: %v", v, p)
		}
	}
	if p.String() != "[12 34]" {
		t.Errorf("PIDs = %s, want [12 34]", p.String())
	}
}

func TestIsSetOnlyWhenGiven(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Bool("duet", true, "")
	fs.Bool("other", false, "")
	if err := fs.Parse([]string{"-other"}); err != nil {
		t.Fatal(err)
	}
	if cliflag.IsSet(fs, "duet") || !cliflag.IsSet(fs, "other") {
		t.Errorf("IsSet(duet)=%v IsSet(other)=%v, want false true", cliflag.IsSet(fs, "duet"), cliflag.IsSet(fs, "other"))
	}
}
