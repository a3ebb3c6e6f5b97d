// Package session is one measured run: a target (a compose stack or a plain
// URL) with its samplers, counts and faults, the load, the result completed,
// the target torn down. Every command sends a load through Runner, so all measure alike.
package session
