package testtier_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/testtier"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []testtier.Tier
	}{
		{"", nil},
		{"sim", []testtier.Tier{testtier.Sim}},
		{"e2e", []testtier.Tier{testtier.E2E}},
		{"all", []testtier.Tier{testtier.Sim, testtier.E2E}},
		{"e2e, sim", []testtier.Tier{testtier.E2E, testtier.Sim}},
		{"sim,", []testtier.Tier{testtier.Sim}},
	} {
		got, err := testtier.Parse(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"sims", "SIM", "default", "sim,e2e,long"} {
		if got, err := testtier.Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, got)
		}
	}
}

func TestEnabledAndScale(t *testing.T) {
	for _, c := range []struct {
		env      string
		sim, e2e bool
	}{{"", false, false}, {"sim", true, false}, {"e2e", false, true}, {"all", true, true}, {"sim,e2e", true, true}} {
		t.Setenv(testtier.Env, c.env)
		for tier, want := range map[testtier.Tier]bool{testtier.Sim: c.sim, testtier.E2E: c.e2e} {
			if got, err := testtier.Enabled(tier); got != want || err != nil {
				t.Errorf("%s=%q: Enabled(%s) = %v, %v; want %v", testtier.Env, c.env, tier, got, err, want)
			}
			if got, w := testtier.Scale(t, tier, 3, 300), map[bool]int{false: 3, true: 300}[want]; got != w {
				t.Errorf("%s=%q: Scale(%s, 3, 300) = %d, want %d", testtier.Env, c.env, tier, got, w)
			}
		}
	}
	t.Setenv(testtier.Env, "sims")
	if _, err := testtier.Enabled(testtier.Sim); err == nil || !strings.Contains(err.Error(), "sims") {
		t.Errorf("Enabled under %s=sims: %v, want an error naming it", testtier.Env, err)
	}
}

// TestRequireChild is run by TestRequire in a child process, whose outcome
// it reads; alone it does nothing.
func TestRequireChild(t *testing.T) {
	if os.Getenv("TESTTIER_CHILD") != "1" {
		return
	}
	testtier.Require(t, testtier.E2E)
	t.Log("RAN THE E2E BODY")
}

// Require skips with a message naming the make target, runs the test when
// its tier is enabled, and fails (not skips) on an unknown tier.
func TestRequire(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	for _, c := range []struct {
		env      string
		fail     bool
		want     []string
		dontWant string
	}{
		{"", false, []string{"--- SKIP", "make e2e", testtier.Env + "=e2e"}, "RAN THE E2E BODY"},
		{"sim", false, []string{"--- SKIP"}, "RAN THE E2E BODY"},
		{"e2e", false, []string{"--- PASS", "RAN THE E2E BODY"}, "SKIP"},
		{"all", false, []string{"--- PASS", "RAN THE E2E BODY"}, "SKIP"},
		{"e2 e", true, []string{"--- FAIL", "unknown tier"}, "RAN THE E2E BODY"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireChild$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "TESTTIER_CHILD=1", testtier.Env+"="+c.env)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail {
			t.Errorf("%s=%q: exit %v, want failure %v:\n%s", testtier.Env, c.env, err, c.fail, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s=%q: output lacks %q:\n%s", testtier.Env, c.env, w, out)
			}
		}
		if strings.Contains(string(out), c.dontWant) {
			t.Errorf("%s=%q: output has %q:\n%s", testtier.Env, c.env, c.dontWant, out)
		}
	}
}
