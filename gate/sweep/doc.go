// Package sweep owns `loadgate sweep`'s staircase: its rates and steps, whether
// a step holds, the sustainable rate, how the stack degrades, and sweep.json.
// Its functions are pure; a *Sweep is not safe for concurrent mutation.
package sweep
