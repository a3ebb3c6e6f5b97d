package procstat_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
)

// A real line of /proc/PID/stat (fields after stime trimmed), with a comm
// holding a space and parentheses.
const statLine = "4242 (my (odd) srv) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 9 0 12345 1000000 512 18446744073709551615\n"

func TestParseStat(t *testing.T) {
	st, err := procstat.ParseStat([]byte(statLine))
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "my (odd) srv" || st.State != 'S' || st.PPID != 1 || st.CPUTime != 3250*time.Millisecond || st.StartTicks != 12345 {
		t.Errorf("got %+v, want name %q, state S, ppid 1, cpu 3.25s, start 12345", st, "my (odd) srv")
	}
	for _, bad := range []string{
		"", "4242 no comm S 1", "4242 (x) S 1 2 3", "4242 (x) SS 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
		"4242 (x) S 1 1 1 1 1 1 1 1 1 1 -5 1 1 1 1 1 1 1 1", "4242 (x) S 1 1 1 1 1 1 1 1 1 1 9223372036854775807 1 1 1 1 1 1 1 1",
		") (x S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
		"4242 (x) S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",      // no starttime
		"4242 (x) S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 when", // starttime not a count
		"4242 (x) S p 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",    // ppid not a pid
	} {
		if _, err := procstat.ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

func TestParseStatm(t *testing.T) {
	if n, err := procstat.ParseStatm([]byte("2100 1536 400 50 0 900 0\n")); err != nil || n != 1536 {
		t.Errorf("got %d, %v; want 1536 pages", n, err)
	}
	for _, bad := range []string{"", "12", "1 -3", "1 x"} {
		if _, err := procstat.ParseStatm([]byte(bad)); err == nil {
			t.Errorf("ParseStatm(%q): no error", bad)
		}
	}
}

func fakeProc(t *testing.T, pid, stat, statm string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, pid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"stat": stat, "statm": statm} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestReadFakeProc(t *testing.T) {
	root := fakeProc(t, "4242", statLine, "2100 1536 400 50 0 900 0\n")
	r := procstat.Reader{Root: root, PageSize: 4096}
	got, err := r.Read(4242)
	if err != nil {
		t.Fatal(err)
	}
	if got.RSSBytes != 1536*4096 || got.CPUTime != 3250*time.Millisecond || got.Name != "my (odd) srv" {
		t.Errorf("got %+v", got)
	}
	_, err = r.Read(4243)
	var np *procstat.NoProcessError
	if !errors.Is(err, procstat.ErrNoProcess) || !errors.As(err, &np) || np.PID != 4243 {
		t.Errorf("missing pid: %v, want a *NoProcessError for 4243", err)
	}
	if _, err := r.Read(0); err == nil || errors.Is(err, procstat.ErrNoProcess) {
		t.Errorf("pid 0: %v, want a plain error", err)
	}
	bad := procstat.Reader{Root: fakeProc(t, "7", "garbage", "1 2")}
	if _, err := bad.Read(7); err == nil || errors.Is(err, procstat.ErrNoProcess) || !strings.Contains(err.Error(), "stat") {
		t.Errorf("garbage stat: %v, want a parse error naming the file", err)
	}
}

func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc on " + runtime.GOOS)
	}
	r, err := procstat.Reader{}.Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if r.RSSBytes <= 0 || r.Name == "" {
		t.Errorf("own process: %+v", r)
	}
}

func TestDelta(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	prev := procstat.Reading{PID: 1, CPUTime: time.Second}
	cur := procstat.Reading{PID: 1, Name: "x", CPUTime: 1500 * time.Millisecond, RSSBytes: 99}
	s := procstat.Delta(prev, at, cur, at.Add(2*time.Second))
	if s.CPUPct != 25 || s.Interval != 2*time.Second || s.MemBytes != 99 || s.CPUTime != 1500*time.Millisecond {
		t.Errorf("got %+v, want 25%% over 2s", s)
	}
	// Measurement keeps every digit: 1 ms of CPU over 3 s is 1/30 %.
	third := procstat.Delta(prev, at, procstat.Reading{CPUTime: time.Second + time.Millisecond}, at.Add(3*time.Second))
	if want := 100.0 / 3000; third.CPUPct != want {
		t.Errorf("1ms over 3s: %v%%, want %v (unrounded)", third.CPUPct, want)
	}
	// CPU time went backwards: no negative percentage.
	if s := procstat.Delta(cur, at, prev, at.Add(time.Second)); s.CPUPct != 0 {
		t.Errorf("backwards: %v%%, want 0", s.CPUPct)
	}
	if s := procstat.Delta(prev, at, cur, at); s.CPUPct != 0 {
		t.Errorf("empty interval: %v%%, want 0", s.CPUPct)
	}
}

// A process that is gone before sampling starts ends the sampler at once,
// marked exited.
func TestSampleExited(t *testing.T) {
	r := procstat.Reader{Root: t.TempDir()}
	stop := r.Sample(context.Background(), 4242, time.Millisecond, func(procstat.Sample) { t.Error("sample of no process") })
	sum := stop()
	if !sum.Exited || !errors.Is(sum.Err, procstat.ErrNoProcess) || sum.Samples != 0 {
		t.Errorf("got %+v, want exited with no samples", sum)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(statLine))
	f.Add([]byte("1 (a) R 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"))
	f.Add([]byte(")("))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := procstat.ParseStat(b)
		if err == nil && st.CPUTime < 0 {
			t.Fatalf("negative CPU time %v", st.CPUTime)
		}
	})
}

func FuzzParseStatm(f *testing.F) {
	f.Add([]byte("2100 1536 400 50 0 900 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := procstat.ParseStatm(b)
		if err == nil && n < 0 {
			t.Fatalf("negative pages %d", n)
		}
	})
}

func TestSampleSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no /proc on " + runtime.GOOS)
	}
	got := make(chan procstat.Sample, 1)
	stop := procstat.Reader{}.Sample(context.Background(), os.Getpid(), time.Millisecond, func(s procstat.Sample) {
		select {
		case got <- s:
		default:
		}
	})
	s := <-got
	sum := stop()
	if s.PID != os.Getpid() || s.MemBytes <= 0 || s.Interval <= 0 || s.CPUPct < 0 {
		t.Errorf("sample %+v", s)
	}
	if sum.Samples < 1 || sum.Exited || sum.MemPeakBytes < s.MemBytes {
		t.Errorf("summary %+v after sample %+v", sum, s)
	}
}

// writeStat rewrites the fake /proc/PID/stat of root.
func writeStat(t *testing.T, root, pid, stat string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
}

// statAt is a /proc/PID/stat line of pid 4242 with utime ticks of CPU and
// the given start time.
func statAt(utime, start int) string {
	return fmt.Sprintf("4242 (srv) S 1 4242 4242 0 -1 0 0 0 0 0 %d 0 0 0 20 0 1 0 %d 1000 10\n", utime, start)
}

// Regression: procstat never checked starttime, so a PID reused by another
// process after the watched one exited was silently sampled as the same
// process. A changed start time ends the sampler as an exit.
func TestSampleReusedPIDIsAnExit(t *testing.T) {
	root := fakeProc(t, "4242", statAt(100, 12345), "10 5 0 0 0 0 0\n")
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	calls := 0
	now := func() time.Time {
		calls++
		if calls == 2 { // after the first sample: another process takes the PID
			writeStat(t, root, "4242", statAt(0, 99999))
		}
		return at.Add(time.Duration(calls) * time.Second)
	}
	var got []procstat.Sample
	stop, ended := procstat.Reader{Root: root, PageSize: 4096}.SampleWith(context.Background(), 4242, time.Millisecond, now, func(s procstat.Sample) { got = append(got, s) })
	<-ended // the sampler ends by itself, not by stop
	sum := stop()
	if !sum.Exited || !errors.Is(sum.Err, procstat.ErrReused) || !sum.ExitedAt.Equal(at.Add(3*time.Second)) {
		t.Errorf("summary %+v, want exited (reused) at %v", sum, at.Add(3*time.Second))
	}
	if len(got) != 1 || sum.Samples != 1 {
		t.Errorf("%d samples (%d summed), want only the one before the reuse", len(got), sum.Samples)
	}
}

// Regression: the average CPU was the mean of per-interval percentages,
// wrong when intervals differ. It is ΔCPU ÷ Δt: here 1 s of CPU over a 1 s
// interval (100 %) then 0 s over 9 s (0 %) is 10 %, not the mean 50 %.
func TestSampleCPUAverageIsDeltaOverTime(t *testing.T) {
	root := fakeProc(t, "4242", statAt(0, 7), "10 5 0 0 0 0 0\n")
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	clock := []time.Duration{0, time.Second, 10 * time.Second}
	calls := 0
	now := func() time.Time {
		d := clock[min(calls, len(clock)-1)]
		calls++
		switch calls {
		case 1:
			writeStat(t, root, "4242", statAt(100, 7)) // 1 s of CPU by the first tick
		case 3:
			_ = os.RemoveAll(filepath.Join(root, "4242")) // exits after the second sample
		}
		return at.Add(d)
	}
	stop, ended := procstat.Reader{Root: root, PageSize: 4096}.SampleWith(context.Background(), 4242, time.Millisecond, now, nil)
	<-ended
	sum := stop()
	if sum.Samples != 2 || sum.CPUAvgPct != 10 || sum.CPUPeakPct != 100 {
		t.Errorf("summary %+v, want 2 samples, average 10%%, peak 100%%", sum)
	}
	if !sum.Exited || !errors.Is(sum.Err, procstat.ErrNoProcess) {
		t.Errorf("summary %+v, want exited", sum)
	}
}

func TestCorePct(t *testing.T) {
	for _, c := range []struct {
		cpu, wall time.Duration
		want      float64
	}{{time.Second, 4 * time.Second, 25}, {time.Second, 0, 0}, {-time.Second, time.Second, 0}, {3 * time.Second, time.Second, 300}} {
		if got := procstat.CorePct(c.cpu, c.wall); got != c.want {
			t.Errorf("CorePct(%v, %v) = %v, want %v", c.cpu, c.wall, got, c.want)
		}
	}
}

// Regression: a watched process that exited but was not reaped (a zombie:
// state Z, RSS 0) was sampled on as a live process whose memory fell to 0.
// A zombie names no process.
func TestReadZombieIsNoProcess(t *testing.T) {
	root := fakeProc(t, "4242", strings.Replace(statAt(5, 1), ") S ", ") Z ", 1), "0 0 0 0 0 0 0\n")
	_, err := procstat.Reader{Root: root}.Read(4242)
	var np *procstat.NoProcessError
	if !errors.Is(err, procstat.ErrNoProcess) || !errors.As(err, &np) || !np.Zombie || !strings.Contains(err.Error(), "zombie") {
		t.Errorf("zombie: %v, want a *NoProcessError saying zombie", err)
	}
}
