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

// PinProcess is not supported off Linux.
func PinProcess(s Set) error { return ErrUnsupported }

// ReadBack is not supported off Linux.
func ReadBack() (Set, error) { return Set{}, ErrUnsupported }

// ThreadSets is not supported off Linux.
func ThreadSets() (map[int]Set, error) { return nil, ErrUnsupported }
