package pin_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/pin"
)

func TestNewPlan(t *testing.T) {
	if _, err := pin.NewPlan("0", "0", false); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping sets: %v, want refused", err)
	}
	p, err := pin.NewPlan("0", "0", true)
	if err != nil || !p.Overlap {
		t.Fatalf("allowed overlap: %+v %v", p, err)
	}
	if pinned, why := p.Topology(true, ""); pinned || !strings.Contains(why, "overlap") {
		t.Errorf("an overlap is not pinned: %v %q", pinned, why)
	}
	if _, err := pin.NewPlan("x", "", false); err == nil || !strings.Contains(err.Error(), "--stack-cpus") {
		t.Errorf("bad list: %v", err)
	}
	if _, err := pin.NewPlan("", "9999", false); err == nil || !strings.Contains(err.Error(), "--load-cpus") {
		t.Errorf("unavailable load cpus: %v", err)
	}
}

func TestTopologyNamesEveryPart(t *testing.T) {
	p := pin.Plan{Stack: pin.MustParse("0"), Load: pin.Set{}}
	pinned, why := p.Topology(false, "cpuset ignored")
	if pinned || !strings.Contains(why, "stack: cpuset ignored") || !strings.Contains(why, "not pinned") {
		t.Errorf("%v %q", pinned, why)
	}
}
