//go:build linux

package pin

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Available returns the CPUs this process may run on (cgroup cpuset included).
func Available() (Set, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return Set{}, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return fromMask(&m)
}

func fromMask(m *unix.CPUSet) (Set, error) {
	var ids []int
	for i := 0; i < len(m)*64; i++ {
		if m.IsSet(i) {
			ids = append(ids, i)
		}
	}
	return Of(ids...)
}

func toMask(s Set) (*unix.CPUSet, error) {
	var m unix.CPUSet
	for _, c := range s.cpus {
		if c >= len(m)*64 {
			return nil, fmt.Errorf("cpu %d does not fit the affinity mask", c)
		}
		m.Set(c)
	}
	return &m, nil
}

// PinProcess restricts every thread to s and sets GOMAXPROCS to len(s). A
// thread cloned meanwhile by an unpinned one may be missed: check ReadBack.
func PinProcess(s Set) error {
	if s.Empty() {
		return errors.New("pin: empty cpu set")
	}
	m, err := toMask(s)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return fmt.Errorf("pin: sched_getaffinity(self): %w", err)
	}
	if err := unix.SchedSetaffinity(0, m); err != nil {
		return fmt.Errorf("pin: cpus %s: sched_setaffinity(self): %w", s, err)
	}
	// The kernel silently drops CPUs outside the cgroup's cpuset: check.
	if got, err := Available(); err != nil || !got.Equal(s) {
		_ = unix.SchedSetaffinity(0, &before)
		return fmt.Errorf("pin: cpus %s are not all allowed for this process (got %s)", s, got)
	}
	err = eachThread(map[int]bool{unix.Gettid(): true}, func(tid int) error {
		if err := unix.SchedSetaffinity(tid, m); err != nil {
			return fmt.Errorf("pin: sched_setaffinity(tid %d): %w", tid, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	runtime.GOMAXPROCS(s.Len())
	return nil
}

// eachThread calls set for every thread not in done until a pass finds none new.
func eachThread(done map[int]bool, set func(tid int) error) error {
	for pass := 0; pass < 10; pass++ {
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			if err := set(tid); err != nil && !errors.Is(err, syscall.ESRCH) {
				return err
			}
			done[tid] = true
		}
		if fresh == 0 {
			break
		}
	}
	return nil
}

func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("pin: list threads: %w", err)
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out, nil
}

// ThreadSets returns every thread's affinity by thread id.
func ThreadSets() (map[int]Set, error) {
	tids, err := threads()
	if err != nil {
		return nil, err
	}
	out := map[int]Set{}
	for _, tid := range tids {
		var m unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &m); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				continue
			}
			return nil, fmt.Errorf("sched_getaffinity(tid %d): %w", tid, err)
		}
		s, err := fromMask(&m)
		if err != nil {
			return nil, err
		}
		out[tid] = s
	}
	return out, nil
}

// ReadBack reads the main thread's allowed CPUs (Cpus_allowed_list).
func ReadBack() (Set, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Set{}, fmt.Errorf("pin: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return Parse(v)
		}
	}
	if err := sc.Err(); err != nil {
		return Set{}, fmt.Errorf("pin: read /proc/self/status: %w", err)
	}
	return Set{}, errors.New("pin: no Cpus_allowed_list in /proc/self/status")
}
