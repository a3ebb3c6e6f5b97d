// Package load is the engine: schedule, mix, dispatcher and operations, under
// design.md's measurement rules (open arrival, latency from the due time).
package load
