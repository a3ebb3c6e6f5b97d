package session

import (
	"context"
	"net/url"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

// Spec is one load as its caller asks for it: what the engine needs, and
// what the result states of the load that is known before it (machine
// aside), so that the result comes back final.
type Spec struct {
	Scenario    *scenario.Scenario
	Env         map[string]string // the scenario's ${ENV} values, resolved
	Target      *url.URL
	TargetLabel string          // "": the target's URL; a stack's: service:port (host:port)
	Topology    result.Topology // the stack's (Compose.Topology) or a plain run's (PlainTopology); the Runner adds the generator's own cpus
	Dir         string          // snapshots.jsonl is written here
	Side        string          // in a gate: "base" or "head"
	Commit      string          // in a gate
	Round       *result.Round   // in a gate
	// Started are told the schedule's start (load.Config.Started): the
	// samplers and the counted reads; nil entries are skipped.
	Started []func(t0 time.Time)
	// StartAt is the schedule's start (load.Config.StartAt; zero: when the
	// load starts): in a duet round both sides' one common instant.
	StartAt time.Time
	// Faults is the load's fault injector (nil: the scenario injects none).
	Faults load.FaultHook
	// Progress, when set, is also told each progress snapshot (a soak's).
	Progress func(load.Progress)
	// NoProgress: draw no progress line (a duet round's second side: two
	// lines redrawn at once would garble each other).
	NoProgress bool
}

// Runner runs one load (warm-up and phases) and returns its result.
//
// Run may be called from several goroutines at once (a duet gate runs
// both sides' loads together): a Runner must be safe for that. Its errors
// carry their kind (ErrUsage: refused before any load; else ErrUnusable).
type Runner interface {
	Run(ctx context.Context, spec Spec) (*result.Result, error)
}

// Counter is one load's "counted by the service": the reads before and
// after each phase, timed on the schedule's own start.
//
// Started's listener is called by the engine; Finish by the goroutine that
// ran the load, after it.
type Counter interface {
	// Started is told the schedule's start (load.Config.Started) and times
	// the reads from it (nil: the scenario names no count, nothing to time).
	Started() func(t0 time.Time)
	// Finish makes the last read and writes what was counted into res
	// (result.Counting, and not_measured for what could not be read).
	Finish(ctx context.Context, res *result.Result)
}

// hooks is the non-nil ones of fs, for load.Config.Started.
func hooks(fs ...func(time.Time)) []func(time.Time) {
	var out []func(time.Time)
	for _, f := range fs {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}
