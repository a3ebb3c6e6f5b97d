// Package sweep owns `loadgate sweep`'s staircase, its verdicts and sweep.json. Its
// functions are pure; a *Sweep is not safe for concurrent mutation.
package sweep
