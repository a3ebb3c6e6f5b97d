// Package session is one measured run: a target (a stack compose brings
// up, or a plain loopback URL), its samplers, counted reads and fault
// injection armed at the schedule's start on the engine's clock, the load,
// the result completed, the target torn down. Runner is the one seam
// through which run, sweep, soak, calibrate and a gate's rounds send a
// load (Engine is it on gate/load), so that every command measures alike
// and the packages above test with a fake. It formats no number and knows
// no flags.
package session
