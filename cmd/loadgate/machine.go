package main

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

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
	r.Topology.LoadCPUs = cpusAllowed()
}

// cpusAllowed reads this process's CPU affinity list as the kernel reports it.
func cpusAllowed() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
