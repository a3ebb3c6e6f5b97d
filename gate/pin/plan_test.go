package pin_test

import (
	"context"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

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

func TestSampleSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("getrusage and /proc are read on Linux")
	}
	var mu sync.Mutex
	var got []pin.SelfSample
	stop := pin.SampleSelf(context.Background(), 20*time.Millisecond, 2, func(s pin.SelfSample) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	})
	deadline := time.Now().Add(150 * time.Millisecond)
	for time.Now().Before(deadline) { // some CPU to measure
	}
	sum := stop()
	mu.Lock()
	defer mu.Unlock()
	if sum.Samples == 0 || sum.Samples != len(got) || sum.MemPeakBytes <= 0 || sum.CPUPeakPct <= 0 {
		t.Fatalf("summary %+v of %d samples", sum, len(got))
	}
	for _, s := range got {
		if math.Abs(s.CPUPctOfSet-s.CPUPct/2) > 0.001 {
			t.Errorf("of set %v, one core %v", s.CPUPctOfSet, s.CPUPct)
		}
	}
}
