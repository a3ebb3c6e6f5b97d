package session

import (
	"context"
	"net/url"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Spec is one load and what its result states that is known before it runs.
type Spec struct {
	Scenario    *scenario.Scenario
	Env         map[string]string // the scenario's ${ENV} values, resolved
	Target      *url.URL
	TargetLabel string               // "": the target's URL; a stack's: service:port (host:port)
	Topology    result.Topology      // the stack's (Compose.Topology) or a plain run's (PlainTopology); the Runner adds the generator's own cpus
	Dir         string               // snapshots.jsonl is written here
	Side        string               // in a gate: "base" or "head"
	Commit      string               // in a gate
	Round       *result.Round        // in a gate
	Started     []func(t0 time.Time) // told the schedule's start; nil entries skipped
	// StartAt is the schedule's start (zero: when the load starts), shared in a duet.
	StartAt  time.Time
	Faults   load.FaultHook      // nil: the scenario injects none
	Progress func(load.Progress) // when set, also told each progress snapshot
	// NoProgress draws no progress line (a duet's second side: two would garble).
	NoProgress bool
}

// Runner runs one load and returns its result. Run must be safe for concurrent use (a duet
// runs both sides at once). Errors carry their kind: ErrUsage if refused before any load,
// else ErrUnusable.
type Runner interface {
	Run(ctx context.Context, spec Spec) (*result.Result, error)
}

// Counter is one load's "counted by the service" reads. The engine calls
// Started's listener; the goroutine that ran the load calls Finish, after it.
type Counter interface {
	// Started returns the listener timing the reads (nil: no count to read).
	Started() func(t0 time.Time)
	// Finish makes the last read and writes res.Counting.
	Finish(ctx context.Context, res *result.Result)
}

// hooks is the non-nil ones of fs.
func hooks(fs ...func(time.Time)) []func(time.Time) {
	var out []func(time.Time)
	for _, f := range fs {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}
