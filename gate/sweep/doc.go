// Package sweep owns the staircase of `loadgate sweep`: the rates it steps
// through, the scenario each step runs (the scenario's judged phase at one
// rate, with its mix and a warm-up), whether a step holds, where the
// stairs stop, the sustainable rate, where the stack degrades and in what
// manner, and sweep.json ("loadgate/sweep/v1": model, encoding, decoding).
//
// Everything here is a pure function of its inputs (no Docker, no clock,
// no network): the command runs each step with gate/load, judges it with
// verdict.Thresholds and hands both to NewStep; Conclude reads the steps.
// Words and number formats are gate/report's (SweepMarkdown,
// SweepPlotSVG); this package names reasons and manners with codes.
//
// A *Sweep is a plain value: not safe for concurrent mutation; concurrent
// reads are fine.
package sweep
