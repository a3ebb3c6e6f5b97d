package load

import "runtime/debug"

// The generator's garbage collector. On its one core a GC cycle's mark
// phase takes the core from the dispatcher, and the requests due meanwhile
// are late, so the goal is raised to make cycles rare (bench/README.md,
// "The generator's garbage collector"): HTTP/1.1 requests allocate nothing,
// but WebSocket sessions and gRPC calls do. A GOMEMLIMIT bounds what the
// larger goal may cost: past it the collector runs as often as it must.
const (
	GCPercent  = 400
	GCMemLimit = 1 << 30 // bytes: well above any run's heap at GOGC=400
)

// GC says how a generator's process sets its collector: nothing when the
// user set GOGC or GOMEMLIMIT (theirs decide), else GCPercent with
// GCMemLimit.
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
