package load

import "runtime/debug"

// The generator's garbage collector. On its one core (the runtime sets
// GOMAXPROCS from the affinity), a GC cycle's mark phase takes the core
// from the dispatcher for a few milliseconds, and the requests due meanwhile
// are late. At the default GOGC=100 a run's small live heap (≈ 4 MiB for one
// workload) made a cycle every second at 20 000 req/s, when fasthttp's
// streamed response bodies cost ≈ 4 allocations a request; GOGC=400 made
// that a cycle every few seconds (bench/README.md, "The generator's garbage
// collector"). An HTTP/1.1 request now allocates nothing (gate/load's
// drainTransport), but a WebSocket session or a gRPC call still allocates
// hundreds of objects, and for them the setting stays. A GOMEMLIMIT bounds
// what the larger goal may cost: past it the collector runs as often as it
// must, as it would with the default.
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
