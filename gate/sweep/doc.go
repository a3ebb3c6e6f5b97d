// Package sweep owns `loadgate sweep`'s staircase: the rates, each step's
// scenario, whether a step holds, where the stairs stop, the sustainable
// rate, how the stack degrades, and sweep.json. Everything is a pure
// function of its inputs; words are gate/report's. A *Sweep is not safe
// for concurrent mutation.
package sweep
