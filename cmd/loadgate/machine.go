package main

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

// fillMachine records where the generator ran (rule 12).
func fillMachine(r *result.Result) {
	host, _ := os.Hostname()
	r.Machine = result.Machine{Host: host, CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		r.Machine.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	r.Topology.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if set, err := pin.ReadBack(); err == nil {
		r.Topology.LoadCPUs = set.String()
	}
}
