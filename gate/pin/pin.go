// Package pin owns CPU sets (Linux cpu lists such as "0-1,3"), their split
// between stack and generator, and pinning. A Set is immutable.
package pin

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

const maxCPU = 8192 // Linux's CONFIG_NR_CPUS ceiling

// Set is a sorted, duplicate-free set of CPU ids; the zero value is empty.
type Set struct {
	cpus []int
}

// Of returns the set of the given CPU ids (negative ids are an error).
func Of(ids ...int) (Set, error) {
	m := map[int]bool{}
	for _, id := range ids {
		if id < 0 || id >= maxCPU {
			return Set{}, fmt.Errorf("cpu id %d out of range [0,%d)", id, maxCPU)
		}
		m[id] = true
	}
	out := make([]int, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Ints(out)
	return Set{cpus: out}, nil
}

// MustParse is Parse that panics; for tests and constants.
func MustParse(s string) Set {
	set, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return set
}

// Parse reads a Linux cpu list such as "0-1,3" (no strides); "" is empty.
func Parse(s string) (Set, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Set{}, nil
	}
	var ids []int
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return Set{}, fmt.Errorf("cpu list %q: empty item", s)
		}
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := atoi(lo)
		if err != nil {
			return Set{}, fmt.Errorf("cpu list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = atoi(hi); err != nil {
				return Set{}, fmt.Errorf("cpu list %q: %w", s, err)
			}
			if b < a {
				return Set{}, fmt.Errorf("cpu list %q: range %q is reversed", s, item)
			}
		}
		for i := a; i <= b; i++ {
			ids = append(ids, i)
		}
	}
	return Of(ids...)
}

func atoi(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a cpu id", s)
	}
	if n >= maxCPU {
		return 0, fmt.Errorf("cpu id %d out of range [0,%d)", n, maxCPU)
	}
	return n, nil
}

// String formats the set as a Linux cpu list: "0-1,3", "" when empty.
func (s Set) String() string {
	var b strings.Builder
	for i := 0; i < len(s.cpus); {
		j := i
		for j+1 < len(s.cpus) && s.cpus[j+1] == s.cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s.cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s.cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Len is the number of CPUs in the set.
func (s Set) Len() int { return len(s.cpus) }

func (s Set) Empty() bool { return len(s.cpus) == 0 }

// CPUs returns a copy of the sorted CPU ids.
func (s Set) CPUs() []int { return append([]int(nil), s.cpus...) }

func (s Set) Contains(cpu int) bool {
	i := sort.SearchInts(s.cpus, cpu)
	return i < len(s.cpus) && s.cpus[i] == cpu
}

// Equal reports whether both sets hold the same CPUs.
func (s Set) Equal(o Set) bool {
	if len(s.cpus) != len(o.cpus) {
		return false
	}
	for i := range s.cpus {
		if s.cpus[i] != o.cpus[i] {
			return false
		}
	}
	return true
}

// SubsetOf reports whether every CPU of s is in o.
func (s Set) SubsetOf(o Set) bool {
	for _, c := range s.cpus {
		if !o.Contains(c) {
			return false
		}
	}
	return true
}

// MarshalText formats the set as a cpu list (so it encodes as a JSON string).
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *Set) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Overlaps reports whether a and b share at least one CPU.
func Overlaps(a, b Set) bool {
	for _, c := range a.cpus {
		if b.Contains(c) {
			return true
		}
	}
	return false
}

// Split gives the stack the first half of all (at least one) and the load
// the rest; with one CPU both get it, an overlap the caller must report.
func Split(all Set) (stack, load Set) {
	n := len(all.cpus)
	switch n {
	case 0:
		return Set{}, Set{}
	case 1:
		return all, all
	}
	h := n / 2
	return Set{cpus: append([]int(nil), all.cpus[:h]...)}, Set{cpus: append([]int(nil), all.cpus[h:]...)}
}

// ErrUnsupported: CPU affinity or scheduling cannot be used on this platform.
var ErrUnsupported = errors.New("cpu affinity and scheduling policies are not supported on this platform (Linux only)")
