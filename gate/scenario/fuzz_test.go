package scenario_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

// FuzzParse checks that Parse never panics and that what it accepts is sane:
// the hash is stable across a second Parse of the same bytes, every phase
// has a positive duration, every workload a share within the bounds, the
// cells within MaxCells, and timeout, drain and max_body within their
// ceilings.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/errors/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := scenario.Parse(data, "fuzz.yaml", scenario.Options{})
		if err != nil {
			return
		}
		again, err := scenario.Parse(data, "fuzz.yaml", scenario.Options{})
		if err != nil || again.Hash != s.Hash {
			t.Fatalf("second Parse: hash %q vs %q, err %v", again.Hash, s.Hash, err)
		}
		for _, p := range s.Phases {
			if p.Duration <= 0 {
				t.Errorf("phase %s: duration %v", p.Name, p.Duration)
			}
		}
		for _, w := range s.Workloads {
			if !(w.Share >= scenario.MinShare && w.Share <= scenario.MaxShare) {
				t.Errorf("workload %s: share %v", w.Name, w.Share)
			}
		}
		if cells := (len(s.Phases) + 1) * len(s.Workloads); cells > scenario.MaxCells+len(s.Workloads) {
			t.Errorf("%d phases × %d workloads accepted", len(s.Phases), len(s.Workloads))
		}
		if c := s.Ceilings; s.Timeout <= 0 || s.Timeout > c.Timeout || s.Drain < 0 || s.Drain > c.Drain || s.MaxBody <= 0 || s.MaxBody > c.MaxBody {
			t.Errorf("timeout %v drain %v max_body %d beyond ceilings %+v", s.Timeout, s.Drain, s.MaxBody, c)
		}
		if _, ok := s.JudgedPhase(); !ok {
			t.Error("no judged phase")
		}
	})
}
