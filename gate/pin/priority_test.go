package pin_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
)

func TestParseMode(t *testing.T) {
	for _, s := range []string{"auto", "rt", "normal"} {
		if m, err := pin.ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	for _, s := range []string{"", "RT", "realtime", "fifo"} {
		if _, err := pin.ParseMode(s); err == nil {
			t.Errorf("ParseMode(%q): no error", s)
		}
	}
}

func TestWant(t *testing.T) {
	cases := []struct {
		mode          pin.Mode
		pinned, stack bool
		raise         bool
		why           string // a part of the reason, when not raised
	}{
		// A stack loadgate pinned apart from the generator: raised.
		{pin.ModeAuto, true, true, true, ""},
		// Its pinning did not hold (or the cpus overlap): the stack may share the generator's cpus.
		{pin.ModeAuto, false, true, false, "not pinned"},
		// A plain run: the target's cpus are not loadgate's to know, even with --load-cpus.
		{pin.ModeAuto, true, false, false, "plain run mode"},
		{pin.ModeAuto, false, false, false, "plain run mode"},
		// rt: the operator says so, wherever the generator runs.
		{pin.ModeRealtime, false, false, true, ""},
		{pin.ModeRealtime, true, true, true, ""},
		// normal: never.
		{pin.ModeNormal, true, true, false, "--load-priority normal"},
	}
	for _, c := range cases {
		raise, why := pin.Want(c.mode, c.pinned, c.stack)
		if raise != c.raise || (c.raise && why != "") || !strings.Contains(why, c.why) {
			t.Errorf("Want(%s, pinned %t, stack %t) = %t, %q; want %t, %q", c.mode, c.pinned, c.stack, raise, why, c.raise, c.why)
		}
	}
}

func TestScheduling(t *testing.T) {
	cases := []struct {
		policy, prio uint32
		nice         int32
		want         string
	}{
		{0, 0, 0, "SCHED_OTHER"},
		{0, 0, 5, "SCHED_OTHER nice 5"},
		{2, 1, 0, "SCHED_RR 1"},
		{1, 50, 0, "SCHED_FIFO 50"},
		{3, 0, -2, "SCHED_BATCH nice -2"},
		{5, 0, 0, "SCHED_IDLE"},
		{9, 0, 0, "policy 9"},
	}
	for _, c := range cases {
		if got := pin.Scheduling(c.policy, c.prio, c.nice); got != c.want {
			t.Errorf("Scheduling(%d, %d, %d) = %q, want %q", c.policy, c.prio, c.nice, got, c.want)
		}
	}
}

// Raise reaches every thread, nests, and lower gives the threads back
// what they had; a thread made while raised is lowered too.
func TestRaiseLower(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("scheduling policies are Linux-only")
	}
	before, err := pin.ReadScheduling()
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(before, "SCHED_RR") || strings.HasPrefix(before, "SCHED_FIFO") || strings.HasPrefix(before, "mixed") {
		t.Skipf("this test process already runs %s", before)
	}
	r1, err := pin.Raise()
	if errors.Is(err, pin.ErrNotPermitted) {
		t.Skipf("not permitted here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A goroutine locked to its thread while raised: a new thread, most
	// likely, made by a raised one.
	var wg sync.WaitGroup
	hold, release := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		close(hold)
		<-release
	}()
	<-hold
	if got, err := pin.ReadScheduling(); err != nil || got != "SCHED_RR 1" {
		t.Errorf("raised: %q, %v; want SCHED_RR 1 on every thread", got, err)
	}
	r2, err := pin.Raise() // a duet gate's other side
	if err != nil {
		t.Fatal(err)
	}
	r1.Lower()
	r1.Lower() // idempotent: the other raise still holds
	if got, _ := pin.ReadScheduling(); got != "SCHED_RR 1" {
		t.Errorf("one of two raises lowered: %q, want SCHED_RR 1", got)
	}
	if why := r2.Dropped(); why != "" {
		t.Errorf("the guard lowered an idle test process: %s", why)
	}
	r2.Lower()
	if got, _ := pin.ReadScheduling(); got != before {
		t.Errorf("lowered: %q, want %q as before", got, before)
	}
	close(release)
	wg.Wait()
}

// Without the privilege (as nobody, with this machine's RLIMIT_RTPRIO),
// CheckRaise and Raise refuse with ErrNotPermitted and change nothing.
func TestRaiseNotPermitted(t *testing.T) {
	if os.Getenv("PIN_TEST_CHILD") == "raise" {
		err := pin.CheckRaise()
		if !errors.Is(err, pin.ErrNotPermitted) {
			t.Fatalf("CheckRaise as uid %d: %v, want ErrNotPermitted", os.Getuid(), err)
		}
		if _, err := pin.Raise(); !errors.Is(err, pin.ErrNotPermitted) {
			t.Fatalf("Raise: %v, want ErrNotPermitted", err)
		}
		if got, err := pin.ReadScheduling(); err != nil || got != "SCHED_OTHER" {
			t.Fatalf("after a refused raise: %q, %v; want SCHED_OTHER", got, err)
		}
		return
	}
	if runtime.GOOS != "linux" || os.Getuid() != 0 {
		t.Skip("needs Linux and root, to run a child as nobody")
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(0xe, &lim); err != nil || lim.Cur > 0 { // RLIMIT_RTPRIO
		t.Skipf("RLIMIT_RTPRIO %d here: an unprivileged child may raise", lim.Cur)
	}
	// The test binary, where nobody may run it (go test's build directory
	// is root's alone).
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "pin.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(exe, "-test.run=^TestRaiseNotPermitted$", "-test.v")
	cmd.Env = append(os.Environ(), "PIN_TEST_CHILD=raise")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestRaiseNotPermitted") {
		t.Fatalf("child as nobody did not run the check:\n%s", out)
	}
}

// A raised process that keeps its cpus busy is lowered by the guard
// before the kernel's real-time throttling would stop it, and stays
// lowered; the hold says why.
func TestRaiseGuardLowersABusyProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("scheduling policies are Linux-only")
	}
	if err := pin.CheckRaise(); err != nil {
		t.Skipf("not permitted here: %v", err)
	}
	// On one cpu only, so that the rest of the machine keeps a cpu.
	avail, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(0)
	one, _ := pin.Of(avail.CPUs()[avail.Len()-1])
	if err := pin.PinProcess(one); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pin.PinProcess(avail); err != nil {
			t.Errorf("restore: %v", err)
		}
		runtime.GOMAXPROCS(prev)
	})
	before, _ := pin.ReadScheduling()
	r, err := pin.Raise()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Lower()
	// The process's cpu busy, for at most 5 s (the guard judges 0.5 s).
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r.Dropped() == "" && time.Now().Before(deadline) {
				for i := 0; i < 1e5; i++ { // busy
				}
			}
		}()
	}
	wg.Wait()
	why := r.Dropped()
	if why == "" || !strings.Contains(why, "throttling") {
		t.Fatalf("busy for 5 s and not lowered (%q)", why)
	}
	if got, _ := pin.ReadScheduling(); got != before {
		t.Errorf("lowered by the guard: threads run %q, want %q", got, before)
	}
	t.Logf("guard: %s", why)
}
