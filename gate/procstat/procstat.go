// Package procstat samples processes of this host from /proc (CPU as the
// delta of cumulative CPU time per interval, never a lifetime average, and
// resident memory) and reads per-CPU hypervisor steal. Linux only.
package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoProcess: the PID names no process (it never existed or has exited).
var ErrNoProcess = errors.New("no such process")

// NoProcessError is a read of a PID with no process, or a zombie (ErrNoProcess).
type NoProcessError struct {
	PID    int
	Zombie bool
}

func (e *NoProcessError) Error() string {
	if e.Zombie {
		return fmt.Sprintf("pid %d: %v (a zombie: it has exited, its parent has not reaped it)", e.PID, ErrNoProcess)
	}
	return fmt.Sprintf("pid %d: %v", e.PID, ErrNoProcess)
}

func (e *NoProcessError) Is(target error) bool { return target == ErrNoProcess }

// ClockTicks is USER_HZ, the unit of utime and stime, on every Linux Go supports.
const ClockTicks = 100

// Reading is one read of a process's counters.
type Reading struct {
	PID        int
	Name       string        // comm, as the kernel has it (at most 15 bytes)
	CPUTime    time.Duration // cumulative user + system CPU time
	RSSBytes   int64         // resident set size
	StartTicks uint64        // since boot: the same PID with another is another process
}

// Reader reads /proc under Root (default "/proc"); safe for concurrent use.
type Reader struct {
	Root     string
	PageSize int // default os.Getpagesize()
}

func (r Reader) root() string {
	if r.Root == "" {
		return "/proc"
	}
	return r.Root
}

// Read reads pid's CPU time and RSS; no process, or a zombie, is a *NoProcessError.
func (r Reader) Read(pid int) (Reading, error) {
	if pid <= 0 {
		return Reading{}, fmt.Errorf("pid %d: not a process id", pid)
	}
	dir := filepath.Join(r.root(), strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Reading{}, readErr(pid, "stat", err)
	}
	st, err := ParseStat(stat)
	if err != nil {
		return Reading{}, fmt.Errorf("pid %d: %s: %w", pid, filepath.Join(dir, "stat"), err)
	}
	if st.State == 'Z' || st.State == 'X' {
		return Reading{}, &NoProcessError{PID: pid, Zombie: true}
	}
	statm, err := os.ReadFile(filepath.Join(dir, "statm"))
	if err != nil {
		return Reading{}, readErr(pid, "statm", err)
	}
	pages, err := ParseStatm(statm)
	if err != nil {
		return Reading{}, fmt.Errorf("pid %d: %s: %w", pid, filepath.Join(dir, "statm"), err)
	}
	ps := r.PageSize
	if ps <= 0 {
		ps = os.Getpagesize()
	}
	return Reading{PID: pid, Name: st.Name, CPUTime: st.CPUTime, RSSBytes: pages * int64(ps), StartTicks: st.StartTicks}, nil
}

func readErr(pid int, file string, err error) error {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, errESRCH) {
		return &NoProcessError{PID: pid}
	}
	return fmt.Errorf("pid %d: reading /proc/%d/%s: %w", pid, pid, file, err)
}

// Stat is what ParseStat takes from /proc/PID/stat.
type Stat struct {
	Name       string
	State      byte
	PPID       int           // field 4: the parent's pid
	CPUTime    time.Duration // utime + stime
	StartTicks uint64        // starttime (field 22): clock ticks since boot
}

// ParseStat parses /proc/PID/stat; comm, which may hold parentheses, ends at the last ')'.
func ParseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return Stat{}, errors.New("stat: no (comm) field")
	}
	rest := strings.Fields(string(b[closing+1:]))
	// rest[0] is field 3 (state); utime, stime are 14, 15; starttime is 22.
	if len(rest) < 20 {
		return Stat{}, fmt.Errorf("stat: %d fields after comm, want at least 20 (up to starttime)", len(rest))
	}
	if len(rest[0]) != 1 {
		return Stat{}, fmt.Errorf("stat: state %q is not one letter", rest[0])
	}
	var ticks [2]uint64
	for i, f := range rest[11:13] {
		v, err := strconv.ParseUint(f, 10, 63)
		if err != nil {
			return Stat{}, fmt.Errorf("stat: field %d (%s) %q: not a tick count", 14+i, []string{"utime", "stime"}[i], f)
		}
		ticks[i] = v
	}
	total := ticks[0] + ticks[1]
	const maxTicks = uint64(1<<63-1) / uint64(time.Second/ClockTicks)
	if total > maxTicks || total < ticks[0] {
		return Stat{}, fmt.Errorf("stat: utime+stime %d+%d ticks overflow", ticks[0], ticks[1])
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil {
		return Stat{}, fmt.Errorf("stat: field 4 (ppid) %q: not a pid", rest[1])
	}
	start, err := strconv.ParseUint(rest[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("stat: field 22 (starttime) %q: not a tick count", rest[19])
	}
	return Stat{Name: string(b[open+1 : closing]), State: rest[0][0], PPID: ppid, CPUTime: time.Duration(total) * (time.Second / ClockTicks), StartTicks: start}, nil
}

// ParseStatm parses /proc/PID/statm's resident set size, in pages.
func ParseStatm(b []byte) (pages int64, err error) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("statm: %d fields, want at least 2", len(f))
	}
	v, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || v < 0 || v > 1<<40 {
		return 0, fmt.Errorf("statm: resident %q: not a page count", f[1])
	}
	return v, nil
}
