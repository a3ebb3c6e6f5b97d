package main

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// machine is where the generator runs (rule 12), for load.Config.
func machine() result.Machine {
	host, _ := os.Hostname()
	m := result.Machine{Host: host, CPUModel: procstat.Reader{}.CPUModel(), CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return m
}

// withGenerator is t with the generator's own cpus: GOMAXPROCS and the
// affinity as read back (after pinning).
func withGenerator(t result.Topology) result.Topology {
	t.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if set, err := pin.ReadBack(); err == nil {
		t.LoadCPUs = set.String()
	}
	return t
}
