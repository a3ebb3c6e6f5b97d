package load_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// stealRun runs a short load whose topology gives the generator cpu 1 and
// the stack cpu 0, with the machine's steal read by read.
func stealRun(t *testing.T, topo result.Topology, read func() (procstat.Steal, error)) *result.Result {
	t.Helper()
	defer load.SetReadSteal(read)()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	sc := mustScenario(t, `
name: steal
warmup: 50ms
phases: [{name: sustain, rate: 50, duration: 200ms}]
workloads: [{name: get, share: 1, http: {method: GET, path: /}}]
`)
	u, _ := urlParse(srv.URL)
	res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: load.Target{URL: u}, Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The hypervisor's steal over the measured window is stated for the
// generator's cores and the stack's: read once at the end of the warm-up
// and once at the end of the schedule (issue 14: a generator behind on a
// guest whose host ran other guests had no cause in its result).
func TestStealOverTheMeasuredWindow(t *testing.T) {
	var reads atomic.Int32
	var firstRead atomic.Int64 // unix ns of the first read
	read := func() (procstat.Steal, error) {
		n := time.Duration(reads.Add(1) - 1)
		if n == 0 {
			firstRead.Store(time.Now().UnixNano())
		}
		return procstat.Steal{CPU: map[int]time.Duration{
			0: time.Second + n*30*time.Millisecond, // the stack's core: 30 ms stolen
			1: time.Second + n*50*time.Millisecond, // the generator's: 50 ms
			2: n * time.Second,                     // a core neither has: not counted
		}}, nil
	}
	res := stealRun(t, result.Topology{StackCPUs: "0", LoadCPUs: "1"}, read)
	if reads.Load() != 2 {
		t.Fatalf("steal read %d times, want 2 (end of warm-up, end of schedule)", reads.Load())
	}
	st := res.Steal
	if st == nil || st.Stack == nil {
		t.Fatalf("steal %+v; not measured %q", st, res.NotMeasured)
	}
	if st.Load.CPUs != "1" || st.Load.StolenS != 0.05 || st.Stack.CPUs != "0" || st.Stack.StolenS != 0.03 {
		t.Errorf("steal %+v, stack %+v", st.Load, *st.Stack)
	}
	// the window begins where the warm-up (50 ms) ends, never before it
	if first := time.Unix(0, firstRead.Load()); first.Before(res.StartedAt.Add(50*time.Millisecond - time.Millisecond)) {
		t.Errorf("first steal read %v, %v after the start: inside the warm-up", first, first.Sub(res.StartedAt))
	}
	if want := min(st.Load.StolenS/st.WindowS, 1); st.WindowS <= 0 || math.Abs(st.Load.Share-want) > 1e-9 {
		t.Errorf("window %v s, load share %v, want %v", st.WindowS, st.Load.Share, want)
	}
	var buf strings.Builder
	if err := res.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := result.Decode(strings.NewReader(buf.String()))
	if err != nil || back.Steal == nil || *back.Steal.Stack != *st.Stack || back.Steal.Load != st.Load {
		t.Errorf("round trip: %+v, %v", back.Steal, err)
	}
}

// A steal that cannot be read is said, not guessed; a run without a stated
// topology states no steal either.
func TestStealNotRead(t *testing.T) {
	res := stealRun(t, result.Topology{LoadCPUs: "1"}, func() (procstat.Steal, error) {
		return procstat.Steal{}, errors.New("reading /proc/stat: permission denied")
	})
	if res.Steal != nil || !strings.Contains(strings.Join(res.NotMeasured, "\n"), "hypervisor steal: reading /proc/stat: permission denied") {
		t.Errorf("steal %+v, not measured %q", res.Steal, res.NotMeasured)
	}
	res = stealRun(t, result.Topology{LoadCPUs: "5"}, func() (procstat.Steal, error) {
		return procstat.Steal{CPU: map[int]time.Duration{0: 0, 1: 0}}, nil
	})
	if res.Steal != nil || !strings.Contains(strings.Join(res.NotMeasured, "\n"), "hypervisor steal on the generator's cores: steal: cpu 5 is not in /proc/stat") {
		t.Errorf("a cpu the machine lacks: steal %+v, not measured %q", res.Steal, res.NotMeasured)
	}
	var reads atomic.Int32
	res = stealRun(t, result.Topology{}, func() (procstat.Steal, error) { reads.Add(1); return procstat.Steal{}, nil })
	if res.Steal != nil || reads.Load() != 0 {
		t.Errorf("no topology: steal %+v after %d reads", res.Steal, reads.Load())
	}
}
