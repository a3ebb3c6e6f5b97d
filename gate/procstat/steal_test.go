package procstat_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
)

// A /proc/stat of a 2-vCPU guest, as this machine's kernel writes it.
const procStat = `cpu  86591 0 31397 78123 915 0 5578 10554 0 0
cpu0 40123 0 15001 39000 400 0 2500 6100 0 0
cpu1 46468 0 16396 39123 515 0 3078 4454 0 0
intr 123456 0 9 0
ctxt 987654
btime 1764623460
processes 7583
procs_running 2
procs_blocked 0
softirq 1234 0 1 2 3 4 5 6 7 8 9
`

func TestParseSteal(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[int]time.Duration // nil: an error
		err      string
	}{
		// the per-CPU lines' eighth count, in clock ticks (10 ms); the
		// aggregate line and the others are skipped
		{"guest", procStat, map[int]time.Duration{0: 61 * time.Second, 1: 44540 * time.Millisecond}, ""},
		// a kernel that adds counts after steal (guest, guest_nice) or a
		// machine that reports no steal at all (bare metal: 0)
		{"bare metal", "cpu0 1 2 3 4 5 6 7 0 0 0\n", map[int]time.Duration{0: 0}, ""},
		// a line cut before steal is refused with the CPU it names
		{"short line", "cpu0 1 2 3 4 5 6 7\n", nil, "line 1 (cpu0): 7 counts, want at least 8"},
		// a count that is not a number
		{"not a number", "cpu3 1 2 3 4 5 6 7 x\n", nil, `line 1 (cpu3): steal "x" is not a tick count`},
		// a negative count
		{"negative", "cpu3 1 2 3 4 5 6 7 -1\n", nil, `steal "-1" is not a tick count`},
		// a cpu named twice
		{"twice", "cpu0 0 0 0 0 0 0 0 1\ncpu0 0 0 0 0 0 0 0 2\n", nil, "line 2: cpu0 listed twice"},
		// "cpuX" is not a cpu number
		{"bad name", "cpuX 0 0 0 0 0 0 0 1\n", nil, `line 1: "cpuX" is not cpuN`},
		{"signed", "cpu+1 0 0 0 0 0 0 0 1\n", nil, `line 1: "cpu+1" is not cpuN`},
		// nothing per CPU: not a /proc/stat
		{"empty", "", nil, "no cpuN line"},
		{"aggregate only", "cpu  1 2 3 4 5 6 7 8\n", nil, "no cpuN line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := procstat.ParseSteal([]byte(tc.in))
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseSteal = %v, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got.CPU, tc.want) {
				t.Fatalf("ParseSteal = %v, %v; want %v", got.CPU, err, tc.want)
			}
		})
	}
}

func TestReadStealNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := (procstat.Reader{Root: dir}).ReadSteal(); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "stat")) {
		t.Fatalf("missing file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte("cpu0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (procstat.Reader{Root: dir}).ReadSteal(); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "stat")+": stat: line 1") {
		t.Fatalf("bad file: %v", err)
	}
}

func TestStealBetween(t *testing.T) {
	before := procstat.Steal{CPU: map[int]time.Duration{0: time.Second, 1: 2 * time.Second}}
	after := procstat.Steal{CPU: map[int]time.Duration{0: 1200 * time.Millisecond, 1: 2600 * time.Millisecond}}
	for _, tc := range []struct {
		name  string
		cpus  []int
		wall  time.Duration
		share float64 // < 0: an error
	}{
		{"one core", []int{1}, 10 * time.Second, 0.06},     // 0.6 s of 10 s
		{"two cores", []int{0, 1}, 10 * time.Second, 0.04}, // 0.8 s of 20 core-seconds
		{"rounded past the wall", []int{1}, 100 * time.Millisecond, 1},
		{"no cpus", nil, time.Second, -1},
		{"no interval", []int{0}, 0, -1},
		{"a cpu the machine lacks", []int{0, 7}, time.Second, -1},
	} {
		got, err := procstat.StealBetween(before, after, tc.cpus, tc.wall)
		if tc.share < 0 {
			if err == nil {
				t.Errorf("%s: no error (%+v)", tc.name, got)
			}
			continue
		}
		if err != nil || fmt.Sprintf("%.4f", got.Share) != fmt.Sprintf("%.4f", tc.share) {
			t.Errorf("%s: share %v, %v; want %v", tc.name, got.Share, err, tc.share)
		}
	}
	if _, err := procstat.StealBetween(after, before, []int{0}, time.Second); err == nil || !strings.Contains(err.Error(), "went back") {
		t.Errorf("steal going back: %v", err)
	}
}

func ExampleStealBetween() {
	before, _ := procstat.ParseSteal([]byte("cpu0 0 0 0 0 0 0 0 100\ncpu1 0 0 0 0 0 0 0 200\n"))
	after, _ := procstat.ParseSteal([]byte("cpu0 0 0 0 0 0 0 0 130\ncpu1 0 0 0 0 0 0 0 238\n"))
	s, _ := procstat.StealBetween(before, after, []int{1}, 10*time.Second)
	fmt.Printf("cpu 1: %v stolen of %v, %.1f%%\n", s.Stolen, s.Wall, s.Share*100)
	// Output: cpu 1: 380ms stolen of 10s, 3.8%
}

// FuzzParseSteal: whatever ParseSteal accepts has no negative steal, and
// written back as /proc/stat lines reads the same again.
func FuzzParseSteal(f *testing.F) {
	f.Add([]byte(procStat))
	f.Add([]byte("cpu0 1 2 3 4 5 6 7 8\n"))
	f.Add([]byte("cpu18446744073709551616 0 0 0 0 0 0 0 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := procstat.ParseSteal(b)
		if err != nil {
			return
		}
		var sb strings.Builder
		for _, cpu := range slices.Sorted(maps.Keys(s.CPU)) {
			d := s.CPU[cpu]
			if d < 0 {
				t.Fatalf("cpu %d: negative steal %v", cpu, d)
			}
			fmt.Fprintf(&sb, "cpu%d 0 0 0 0 0 0 0 %d\n", cpu, d/(time.Second/procstat.ClockTicks))
		}
		again, err := procstat.ParseSteal([]byte(sb.String()))
		if err != nil || !maps.Equal(again.CPU, s.CPU) {
			t.Fatalf("round trip: %v, %v; want %v", again.CPU, err, s.CPU)
		}
	})
}

// A CPU's busy time is what it ran: user, nice, system, irq and softirq
// (not idle, iowait or steal), in clock ticks.
func TestParseCPUTimes(t *testing.T) {
	got, err := procstat.ParseCPUTimes([]byte(procStat))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]procstat.CPUTimes{
		0: {Busy: (40123 + 15001 + 2500) * 10 * time.Millisecond, Steal: 61 * time.Second},
		1: {Busy: (46468 + 16396 + 3078) * 10 * time.Millisecond, Steal: 44540 * time.Millisecond},
	}
	if !maps.Equal(got, want) {
		t.Errorf("ParseCPUTimes = %v, want %v", got, want)
	}
	// Counts past steal (guest, guest_nice) are not busy again: a guest's
	// time is in user already.
	got, err = procstat.ParseCPUTimes([]byte("cpu0 1 2 3 4 5 6 7 8 100 100\n"))
	if err != nil || got[0].Busy != (1+2+3+6+7)*10*time.Millisecond {
		t.Errorf("with guest counts: %v, %v", got, err)
	}
	// A busy sum that would overflow is refused.
	big := fmt.Sprint(int64(1<<63-1) / int64(10*time.Millisecond))
	if _, err := procstat.ParseCPUTimes([]byte("cpu0 " + big + " " + big + " 0 0 0 0 0 0\n")); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("overflowing busy: %v", err)
	}
}

// FuzzParseCPUTimes: whatever ParseCPUTimes accepts has no negative time,
// and written back as /proc/stat lines reads the same again.
func FuzzParseCPUTimes(f *testing.F) {
	f.Add([]byte(procStat))
	f.Add([]byte("cpu0 1 2 3 4 5 6 7 8\n"))
	f.Add([]byte("cpu1 9223372036 0 0 0 0 0 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		times, err := procstat.ParseCPUTimes(b)
		if err != nil {
			return
		}
		tick := time.Second / procstat.ClockTicks
		var sb strings.Builder
		for _, cpu := range slices.Sorted(maps.Keys(times)) {
			c := times[cpu]
			if c.Busy < 0 || c.Steal < 0 {
				t.Fatalf("cpu %d: negative %+v", cpu, c)
			}
			fmt.Fprintf(&sb, "cpu%d %d 0 0 0 0 0 0 %d\n", cpu, c.Busy/tick, c.Steal/tick)
		}
		again, err := procstat.ParseCPUTimes([]byte(sb.String()))
		if err != nil || !maps.Equal(again, times) {
			t.Fatalf("round trip: %v, %v; want %v", again, err, times)
		}
	})
}

// CPUTimesFile reads the same busy times as ParseCPUTimes, again and
// again from the file's start as it changes, a file larger than its first
// buffer too, and allocates nothing once it has its buffer.
func TestCPUTimesFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(procStat)
	f, err := procstat.Reader{Root: dir}.OpenCPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cpus, busy := []int{1, 0}, make([]time.Duration, 2)
	if err := f.Busy(cpus, busy); err != nil {
		t.Fatal(err)
	}
	want, _ := procstat.ParseCPUTimes([]byte(procStat))
	if busy[0] != want[1].Busy || busy[1] != want[0].Busy {
		t.Errorf("Busy = %v, want cpu1 %v, cpu0 %v", busy, want[1].Busy, want[0].Busy)
	}
	// The file changes in place (as /proc/stat does between reads) and grows
	// past the first buffer: a long "intr" line before the cpu lines.
	long := "intr " + strings.Repeat("0 ", 8000) + "\ncpu0 1 0 0 0 0 0 0 0\ncpu1 2 0 0 0 0 0 0 0\n"
	write(long)
	if err := f.Busy(cpus, busy); err != nil || busy[0] != 20*time.Millisecond || busy[1] != 10*time.Millisecond {
		t.Errorf("after a rewrite past the buffer: %v, %v", busy, err)
	}
	if err := f.Busy([]int{7}, busy[:1]); err == nil {
		t.Error("a cpu /proc/stat does not list: no error")
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = f.Busy(cpus, busy) }); allocs > 0 {
		t.Errorf("%.1f allocations a read, want none", allocs)
	}
}
