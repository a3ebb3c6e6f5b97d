package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Steal is each CPU's cumulative steal from /proc/stat: time a vCPU was ready
// while its hypervisor ran another guest (0 without a reporting hypervisor).
type Steal struct {
	CPU map[int]time.Duration // cpu number → cumulative steal since boot
}

// ReadSteal reads every CPU's cumulative steal from ROOT/stat.
func (r Reader) ReadSteal() (Steal, error) {
	name := filepath.Join(r.root(), "stat")
	b, err := os.ReadFile(name)
	if err != nil {
		return Steal{}, fmt.Errorf("reading %s: %w", name, err)
	}
	s, err := ParseSteal(b)
	if err != nil {
		return Steal{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// ParseSteal parses each CPU's steal from /proc/stat (ParseCPUTimes).
func ParseSteal(b []byte) (Steal, error) {
	times, err := ParseCPUTimes(b)
	if err != nil {
		return Steal{}, err
	}
	s := Steal{CPU: make(map[int]time.Duration, len(times))}
	for cpu, t := range times {
		s.CPU[cpu] = t.Steal
	}
	return s, nil
}

// CPUTimes is one CPU's cumulative times since boot, from /proc/stat.
type CPUTimes struct {
	Busy  time.Duration // user, nice, system, irq and softirq (guest time is in user)
	Steal time.Duration
}

var statCounts = [8]string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// ParseCPUTimes parses /proc/stat's per-CPU lines, skipping the others.
func ParseCPUTimes(b []byte) (map[int]CPUTimes, error) {
	out := map[int]CPUTimes{}
	for n, line := range bytes.Split(b, []byte("\n")) {
		cpu, t, err := parseCPULine(line)
		switch {
		case err != nil:
			return nil, fmt.Errorf("stat: line %d%w", n+1, err)
		case cpu < 0:
			continue
		}
		if _, dup := out[cpu]; dup {
			return nil, fmt.Errorf("stat: line %d: cpu%d listed twice", n+1, cpu)
		}
		out[cpu] = t
	}
	if len(out) == 0 {
		return nil, errors.New("stat: no cpuN line")
	}
	return out, nil
}

// parseCPULine parses one /proc/stat line; cpu is -1 for a non-CPU line. It
// allocates nothing but an error: CPUTimesFile reads several times a second.
func parseCPULine(line []byte) (cpu int, t CPUTimes, err error) {
	const tick = time.Second / ClockTicks
	const maxTicks = int64(1<<63-1) / int64(tick)
	f, rest := nextField(line)
	if len(f) <= 3 || !bytes.HasPrefix(f, []byte("cpu")) {
		return -1, t, nil
	}
	cpu = 0
	for _, d := range f[3:] {
		if d < '0' || d > '9' || cpu > 1<<16 {
			return -1, t, fmt.Errorf(": %q is not cpuN", f)
		}
		cpu = cpu*10 + int(d-'0')
	}
	if cpu > 1<<16 {
		return -1, t, fmt.Errorf(": %q is not cpuN", f)
	}
	var c [8]int64
	for i := range c {
		var v []byte
		v, rest = nextField(rest)
		if len(v) == 0 {
			return -1, t, fmt.Errorf(" (cpu%d): %d counts, want at least 8 (up to steal)", cpu, i)
		}
		n := int64(0)
		for _, d := range v {
			if d < '0' || d > '9' || n > (maxTicks-int64(d-'0'))/10 {
				return -1, t, fmt.Errorf(" (cpu%d): %s %q is not a tick count", cpu, statCounts[i], v)
			}
			n = n*10 + int64(d-'0')
		}
		c[i] = n
	}
	busy := int64(0)
	for _, i := range [...]int{0, 1, 2, 5, 6} {
		if busy > maxTicks-c[i] {
			return -1, t, fmt.Errorf(" (cpu%d): busy ticks overflow", cpu)
		}
		busy += c[i]
	}
	return cpu, CPUTimes{Busy: time.Duration(busy) * tick, Steal: time.Duration(c[7]) * tick}, nil
}

func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	return b[i:j], b[j:]
}

// CPUTimesFile is /proc/stat kept open and re-read into one buffer, cheaper
// than os.ReadFile several times a second. Not safe for concurrent use.
type CPUTimesFile struct {
	f   *os.File
	buf []byte
}

// OpenCPUTimes opens ROOT/stat for CPUTimesFile.Busy.
func (r Reader) OpenCPUTimes() (*CPUTimesFile, error) {
	f, err := os.Open(filepath.Join(r.root(), "stat"))
	if err != nil {
		return nil, err
	}
	return &CPUTimesFile{f: f, buf: make([]byte, 8<<10)}, nil
}

// Busy reads each of cpus' busy time into busy (as long as cpus).
func (c *CPUTimesFile) Busy(cpus []int, busy []time.Duration) error {
	var n int
	for {
		var err error
		n, err = c.f.ReadAt(c.buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if n < len(c.buf) {
			break
		}
		if len(c.buf) >= 1<<20 {
			return errors.New("stat: larger than 1 MiB")
		}
		c.buf = make([]byte, 2*len(c.buf)) // it did not fit: read it whole again
	}
	found := 0
	for b := c.buf[:n]; len(b) > 0; {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		cpu, t, err := parseCPULine(line)
		if err != nil {
			return fmt.Errorf("stat: a line%w", err)
		}
		for i, want := range cpus {
			if cpu == want {
				busy[i] = t.Busy
				found++
			}
		}
	}
	if found != len(cpus) {
		return fmt.Errorf("stat: not every one of cpus %v is listed", cpus)
	}
	return nil
}

// Close closes the file.
func (c *CPUTimesFile) Close() error { return c.f.Close() }

// StealShare is the steal on CPUs over Wall: Share = Stolen ÷ (Wall × len(CPUs)).
type StealShare struct {
	CPUs   []int
	Wall   time.Duration
	Stolen time.Duration
	Share  float64
}

// StealBetween is the steal on cpus between readings wall apart (Share capped at 1).
func StealBetween(before, after Steal, cpus []int, wall time.Duration) (StealShare, error) {
	if len(cpus) == 0 {
		return StealShare{}, errors.New("steal: no cpus")
	}
	if wall <= 0 {
		return StealShare{}, fmt.Errorf("steal: interval %v is not positive", wall)
	}
	out := StealShare{CPUs: append([]int(nil), cpus...), Wall: wall}
	for _, c := range cpus {
		b, ok1 := before.CPU[c]
		a, ok2 := after.CPU[c]
		if !ok1 || !ok2 {
			return StealShare{}, fmt.Errorf("steal: cpu %d is not in /proc/stat", c)
		}
		if a < b {
			return StealShare{}, fmt.Errorf("steal: cpu %d went back from %v to %v", c, b, a)
		}
		out.Stolen += a - b
	}
	out.Share = min(float64(out.Stolen)/(float64(wall)*float64(len(cpus))), 1)
	return out, nil
}
