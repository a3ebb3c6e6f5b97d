package load

import "runtime/debug"

// The generator's collector: on its one core a GC mark phase makes due requests late,
// so the goal is raised to make cycles rare (bench/README.md); GCMemLimit bounds the cost.
const (
	GCPercent  = 400
	GCMemLimit = 1 << 30 // bytes: well above any run's heap at GOGC=400
)

// GC says how to set the collector: as is if GOGC or GOMEMLIMIT is set, else GCPercent, GCMemLimit.
func GC(gogc, gomemlimit string) (percent int, limit int64, set bool) {
	if gogc != "" || gomemlimit != "" {
		return 0, 0, false
	}
	return GCPercent, GCMemLimit, true
}

// ApplyGC applies GC to this process (loadgate's main, as it starts).
func ApplyGC(getenv func(string) string) {
	percent, limit, set := GC(getenv("GOGC"), getenv("GOMEMLIMIT"))
	if !set {
		return
	}
	debug.SetGCPercent(percent)
	debug.SetMemoryLimit(limit)
}
