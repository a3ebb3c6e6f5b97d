package verdict_test

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/verdict"
)

// A tolerance flag reads as the Action's input does: "10%" or 0.10; a bare
// 10 is refused as ambiguous, and the default shows as a percentage.
func TestToleranceFlagSyntax(t *testing.T) {
	var v float64
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("gate", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.TextVar((*verdict.Tolerance)(&v), "tolerance", verdict.Tolerance(0.1), "")
		return fs
	}
	if fs := newFS(); v != 0.1 || fs.Lookup("tolerance").DefValue != "10%" {
		t.Errorf("default: %v shown as %q, want 0.1 shown as 10%%", v, fs.Lookup("tolerance").DefValue)
	}
	for in, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, "12.5%": 0.125} {
		if err := newFS().Parse([]string{"--tolerance", in}); err != nil || v != want {
			t.Errorf("%q: %v, %v; want %v", in, v, err, want)
		}
	}
	for _, in := range []string{"10", "100%", "-1%", "x"} {
		err := newFS().Parse([]string{"--tolerance", in})
		if err == nil || in == "10" && !strings.Contains(err.Error(), "10%") {
			t.Errorf("%q: %v, want a refusal (suggesting 10%% for a bare 10)", in, err)
		}
	}
}
