// Package load is the engine: the schedule (due times as pure functions of
// the phases), the mix (which workload each request is), the dispatcher
// (each request sent at its due time on one monotonic clock, bounded by
// max_in_flight, late and stalled time counted) and the operations. It
// implements design.md's measurement rules: open arrival, latency from the
// due and the send time, one record per offered request, latency over
// successes only, warm-up excluded, throughput twice.
package load
