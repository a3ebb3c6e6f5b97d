package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loadgate/loadgate/gate/pin"
)

// usage is what one generator process used, all threads (wait4's rusage).
type usage struct {
	CPU        time.Duration // ru_utime + ru_stime
	User, Sys  time.Duration // ru_utime, ru_stime
	Nvcsw      int64         // ru_nvcsw: voluntary context switches (the process slept)
	Nivcsw     int64         // ru_nivcsw: involuntary context switches (it was preempted)
	MaxRSS     int64         // ru_maxrss, bytes
	Wall       time.Duration
	ExitCode   int
	Server     srvUsage      // the server over the same interval
	Pinned     string        // Cpus_allowed_list read back while it ran
	Sched      string        // its main thread's scheduling read back while it ran ("SCHED_RR 1")
	CoresBusy  time.Duration // busy time of the server's and generator's cores over the same interval
	CoresSteal time.Duration // the hypervisor's steal on them meanwhile (another guest ran)
	Conns      int64         // connections the server accepted meanwhile (-1: unknown)
	Reqs       int64         // requests the server answered meanwhile (-1: unknown)
}

// srvUsage is the server's own rusage over one run, else (Rusage false) its /proc CPU.
type srvUsage struct {
	CPU, User, Sys time.Duration
	Nvcsw, Nivcsw  int64
	Rusage         bool
}

type srvStats struct {
	Conns, Reqs   int64
	User, Sys     time.Duration
	Nvcsw, Nivcsw int64
	Rusage        bool // the four fields above were reported
}

// parseSrvStats reads "conns N reqs M [utime_us U stime_us S nvcsw V nivcsw I]".
func parseSrvStats(b string) (srvStats, error) {
	var s srvStats
	var ut, st int64
	n, err := fmt.Sscanf(b, "conns %d reqs %d utime_us %d stime_us %d nvcsw %d nivcsw %d",
		&s.Conns, &s.Reqs, &ut, &st, &s.Nvcsw, &s.Nivcsw)
	switch {
	case n == 6:
		s.User, s.Sys, s.Rusage = time.Duration(ut)*time.Microsecond, time.Duration(st)*time.Microsecond, true
	case n >= 2: // an older server: counters only
		s.Nvcsw, s.Nivcsw = 0, 0
	default:
		return s, fmt.Errorf("server stats %q: %w", b, err)
	}
	return s, nil
}

type server struct {
	cmd  *exec.Cmd
	cpu  string // the core asked for
	Addr string
	CPUs string // affinity read back from /proc
}

func startServer(bin, cpu, mode string) (*server, error) {
	cmd := exec.Command("taskset", "-c", cpu, bin, "-addr", "127.0.0.1:0", "-mode", mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening ") {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("server did not report its address (got %q): %v", line, err)
	}
	s := &server{cmd: cmd, cpu: cpu, Addr: strings.TrimSpace(strings.TrimPrefix(line, "listening "))}
	s.CPUs = cpusAllowed(cmd.Process.Pid)
	return s, nil
}

func (s *server) Stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// Stats asks the server for its counters and rusage (GET /__bench/stats, not counted).
func (s *server) Stats() (srvStats, error) {
	c, err := net.DialTimeout("tcp", s.Addr, 2*time.Second)
	if err != nil {
		return srvStats{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "GET /__bench/stats HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n"); err != nil {
		return srvStats{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return srvStats{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return srvStats{}, err
	}
	st, err := parseSrvStats(string(b))
	st.Conns-- // not this connection
	return st, err
}

// CPU is the server's cumulative user+system CPU from /proc/PID/stat.
func (s *server) CPU() time.Duration { return procCPU(s.cmd.Process.Pid) }

// clockTick is USER_HZ, 100 on every Linux this runs on.
const clockTick = 10 * time.Millisecond

func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * clockTick
}

// coresBusy is the busy (non-idle, non-iowait) and, apart, steal time of cores (/proc/stat).
func coresBusy(cores ...string) (busy, steal time.Duration) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	want := map[string]bool{}
	for _, c := range cores {
		want["cpu"+c] = true
	}
	var ticks, stolen int64
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || !want[f[0]] {
			continue
		}
		for i, v := range f[1:9] {
			n, _ := strconv.ParseInt(v, 10, 64)
			switch i {
			case 3, 4:
			case 7:
				stolen += n
			default:
				ticks += n
			}
		}
	}
	return time.Duration(ticks) * clockTick, time.Duration(stolen) * clockTick
}

func cpusAllowed(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func schedulingOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "?"
	}
	i := bytes.LastIndexByte(b, ')') // the command name may hold spaces
	if i < 0 {
		return "?"
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 39 {
		return "?"
	}
	nice, err1 := strconv.ParseInt(f[16], 10, 32)
	prio, err2 := strconv.ParseUint(f[37], 10, 32)
	policy, err3 := strconv.ParseUint(f[38], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return "?"
	}
	return pin.Scheduling(uint32(policy), uint32(prio), int32(nice))
}

// runPinned runs bin on the generator core via taskset (which execs: the rusage is bin's own).
func runPinned(ctx context.Context, cpu string, srv *server, limit time.Duration, stdout io.Writer, bin string, args ...string) (usage, string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "taskset", append([]string{"-c", cpu, bin}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout = stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	var u usage
	m0 := markServer(srv, cpu, false)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return u, "", err
	}
	pinned, sched := make(chan string, 1), make(chan string, 1)
	go func() {
		// loadgate sets its own priority only once its load starts.
		time.Sleep(200 * time.Millisecond)
		pinned <- cpusAllowed(cmd.Process.Pid)
		sched <- schedulingOf(cmd.Process.Pid)
	}()
	err := cmd.Wait()
	u.Wall = time.Since(t0)
	u.addServer(m0, markServer(srv, cpu, true))
	select {
	case u.Pinned = <-pinned:
		u.Sched = <-sched
	default:
		u.Pinned, u.Sched = "?", "?"
	}
	if ctx.Err() != nil {
		return u, stderr.String(), fmt.Errorf("%s did not finish within %s", bin, limit)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return u, stderr.String(), err
	}
	st := cmd.ProcessState
	u.ExitCode = st.ExitCode()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.User, u.Sys = time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
		u.CPU = u.User + u.Sys
		u.Nvcsw, u.Nivcsw = ru.Nvcsw, ru.Nivcsw
		u.MaxRSS = ru.Maxrss * 1024 // KiB on Linux
	}
	return u, stderr.String(), nil
}

type serverMark struct {
	cpu, busy, steal time.Duration
	st               srvStats
	err              error // of the stats request
}

func markServer(srv *server, cpu string, end bool) serverMark {
	var m serverMark
	if end {
		m.st, m.err = srv.Stats()
	}
	m.cpu = srv.CPU()
	m.busy, m.steal = coresBusy(srv.cpu, cpu)
	if !end {
		m.st, m.err = srv.Stats()
	}
	return m
}

func (u *usage) addServer(m0, m1 serverMark) {
	u.Server.CPU = m1.cpu - m0.cpu
	u.CoresBusy, u.CoresSteal = m1.busy-m0.busy, m1.steal-m0.steal
	u.Conns, u.Reqs = -1, -1
	if m0.err == nil && m1.err == nil {
		st0, st1 := m0.st, m1.st
		u.Conns, u.Reqs = st1.Conns-st0.Conns, st1.Reqs-st0.Reqs
		if st0.Rusage && st1.Rusage {
			u.Server = srvUsage{User: st1.User - st0.User, Sys: st1.Sys - st0.Sys,
				Nvcsw: st1.Nvcsw - st0.Nvcsw, Nivcsw: st1.Nivcsw - st0.Nivcsw, Rusage: true}
			u.Server.CPU = u.Server.User + u.Server.Sys
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
