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

// Steal is the cumulative steal time of each CPU of this machine, from
// /proc/stat: time during which the CPU — a virtual CPU — was ready to run
// but its hypervisor ran something else (another guest). A generator's
// thread whose vCPU is not running cannot send on time, and a service's
// cannot answer, so steal on the generator's or the stack's cores during a
// run is a cause of lateness and latency that nothing inside this machine
// shows otherwise. On a machine with no hypervisor, or whose hypervisor
// does not report it, every CPU's steal stays 0.
//
// Like every CPU figure of procstat it is used as a delta (rule 11):
// StealBetween.
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

// ParseSteal parses the contents of /proc/stat for each CPU's steal
// (ParseCPUTimes).
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
	// Busy is the time it ran anything: user, nice, system, irq and
	// softirq (a guest's time is in user already).
	Busy time.Duration
	// Steal is the time it was ready to run while its hypervisor ran
	// something else.
	Steal time.Duration
}

// ReadCPUTimes reads every CPU's cumulative times from ROOT/stat.
func (r Reader) ReadCPUTimes() (map[int]CPUTimes, error) {
	name := filepath.Join(r.root(), "stat")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	t, err := ParseCPUTimes(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// statCounts names /proc/stat's first eight counts of a CPU, in order.
var statCounts = [8]string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// ParseCPUTimes parses the contents of /proc/stat: the per-CPU lines
// "cpuN user nice system idle iowait irq softirq steal ...", steal being
// the eighth count (kernels since 2.6.11 have it). The aggregate "cpu" line
// and every other line are skipped. A file with no per-CPU line, a line
// with fewer than eight counts, a count that is not a number (or whose sum
// overflows) and a CPU listed twice are errors.
func ParseCPUTimes(b []byte) (map[int]CPUTimes, error) {
	out := map[int]CPUTimes{}
	const tick = time.Second / ClockTicks
	const maxTicks = int64(1<<63-1) / int64(tick)
	for n, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		num := f[0][3:]
		cpu, err := strconv.Atoi(num)
		if err != nil || cpu > 1<<16 || strings.TrimLeft(num, "0123456789") != "" {
			return nil, fmt.Errorf("stat: line %d: %q is not cpuN", n+1, f[0])
		}
		if len(f) < 9 {
			return nil, fmt.Errorf("stat: line %d (%s): %d counts, want at least 8 (up to steal)", n+1, f[0], len(f)-1)
		}
		var c [8]int64
		for i := range c {
			v, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil || v < 0 || v > maxTicks {
				return nil, fmt.Errorf("stat: line %d (%s): %s %q is not a tick count", n+1, f[0], statCounts[i], f[i+1])
			}
			c[i] = v
		}
		busy := int64(0)
		for _, i := range []int{0, 1, 2, 5, 6} {
			if busy > maxTicks-c[i] {
				return nil, fmt.Errorf("stat: line %d (%s): busy ticks overflow", n+1, f[0])
			}
			busy += c[i]
		}
		if _, dup := out[cpu]; dup {
			return nil, fmt.Errorf("stat: line %d: %s listed twice", n+1, f[0])
		}
		out[cpu] = CPUTimes{Busy: time.Duration(busy) * tick, Steal: time.Duration(c[7]) * tick}
	}
	if len(out) == 0 {
		return nil, errors.New("stat: no cpuN line")
	}
	return out, nil
}

// StealShare is the steal on a set of CPUs over an interval: Stolen, summed
// over the CPUs, and Share = Stolen ÷ (Wall × len(CPUs)), the fraction of
// the CPUs' time their hypervisor gave to something else.
type StealShare struct {
	CPUs   []int
	Wall   time.Duration
	Stolen time.Duration
	Share  float64
}

// StealBetween is the steal on cpus between two readings wall apart. It
// fails when a cpu is missing from either reading (an offline CPU, or a
// cpu the machine does not have), when steal went backwards, or when cpus
// is empty or wall not positive; it never returns a share below 0. A share
// above 1 (ticks are 10 ms: a short interval rounds) is capped at 1.
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
