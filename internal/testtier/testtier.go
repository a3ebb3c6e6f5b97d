// Package testtier sorts the tests `make test` runs from the longer ones
// that run only when asked: full-size simulations (Sim, `make sim`) and
// long runs against the real runner and Docker engine (E2E, `make e2e`).
// LOADGATE_TEST_TIER names the tiers enabled: "sim", "e2e", "all", or a
// comma-separated list ("sim,e2e"); unset or empty, the default tier alone.
// A tiered test keeps a small, deterministic version in the default tier,
// so that nothing goes untested by `make test`.
package testtier

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// Tier is a tier of tests beyond the default.
type Tier string

const (
	// Sim is the full-size statistical simulations (`make sim`).
	Sim Tier = "sim"
	// E2E is the long end-to-end runs: the real runner, signals, Docker
	// stacks in all their variants (`make e2e`).
	E2E Tier = "e2e"
)

// Env is the variable naming the enabled tiers.
const Env = "LOADGATE_TEST_TIER"

// Parse reads a value of Env: the tiers it enables, or an error naming what
// it does not know (a typo must not leave a tier silently skipped).
func Parse(v string) ([]Tier, error) {
	var out []Tier
	for _, f := range strings.Split(v, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case "all":
			out = append(out, Sim, E2E)
		case string(Sim), string(E2E):
			out = append(out, Tier(f))
		default:
			return nil, fmt.Errorf("%s=%q: unknown tier %q (want sim, e2e, all, or a comma-separated list)", Env, v, f)
		}
	}
	return out, nil
}

// Enabled reports whether LOADGATE_TEST_TIER enables tier. An unknown value
// is an error, not a no.
func Enabled(tier Tier) (bool, error) {
	ts, err := Parse(os.Getenv(Env))
	return slices.Contains(ts, tier), err
}

// On is Enabled for a test: it fails t on an unknown LOADGATE_TEST_TIER.
func On(t testing.TB, tier Tier) bool {
	t.Helper()
	on, err := Enabled(tier)
	if err != nil {
		t.Fatal(err)
	}
	return on
}

// Require skips t unless tier is enabled, saying how to run it, and fails
// t on an unknown LOADGATE_TEST_TIER.
func Require(t testing.TB, tier Tier) {
	t.Helper()
	if !On(t, tier) {
		t.Skipf("%s tier: not run by default (make %s, or %s=%s)", tier, tier, Env, tier)
	}
}

// Scale is def in the default tier and full when tier is enabled: a
// repetition count, say, small by default and full-size in `make sim`.
func Scale(t testing.TB, tier Tier, def, full int) int {
	t.Helper()
	if On(t, tier) {
		return full
	}
	return def
}
