//go:build !linux

package pin

import "runtime"

// Available returns all CPUs runtime.NumCPU reports (no affinity API here).
func Available() (Set, error) {
	ids := make([]int, runtime.NumCPU())
	for i := range ids {
		ids[i] = i
	}
	return Of(ids...)
}

func PinProcess(s Set) error { return ErrUnsupported }

func ReadBack() (Set, error) { return Set{}, ErrUnsupported }

// PinProcess, ReadBack and ThreadSets are unsupported off Linux.
func ThreadSets() (map[int]Set, error) { return nil, ErrUnsupported }
