// Package session is one measured run: a target (a stack brought up by
// gate/stack, or a plain loopback URL), its samplers, counted reads and
// fault injection armed at the schedule's start on the engine's own clock,
// the load run, the result completed, the target torn down.
//
// Runner is the one seam through which run, sweep, soak, calibrate and
// each round of a gate send a load; Engine is it on gate/load. It exists
// so that every command measures a load the same way, and so that the
// packages above it test their logic with a fake Runner.
//
// It formats no number (gate/report does) and knows no flags (the CLI's).
package session
