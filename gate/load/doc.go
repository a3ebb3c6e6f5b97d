// Package load is the engine: the schedule (due times as pure functions of
// the phase schedule), the mix (which workload each request is), the
// dispatcher (sends each request at its due time on one monotonic clock,
// bounded by max_in_flight permits, with late and stall accounting) and the
// operations (HTTP).
//
// Measurement rules it implements (see design.md): open arrival; latency
// from the due time and from the send time; every offered request leaves
// exactly one record (succeeded, failed with a class, or abandoned at the
// end); latency over successes only; warm-up excluded; throughput twice.
package load
