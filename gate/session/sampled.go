package session

import (
	"context"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// Sampled is a target sampled into one directory for one long load and
// torn down after it: gate/soak's Sampler on a Compose or a Plain.
//
// It is used by the goroutine that runs the soak: Start, then Finish once.
type Sampled struct {
	Target Target
	Dir    string
	stop   func(*result.Result) error
}

// Start opens Dir/stats.jsonl; its listener arms the samplers for the
// schedule's t0 + warmup.
func (s *Sampled) Start(ctx context.Context, warmup time.Duration) (func(time.Time), error) {
	start, stop, err := s.Target.Sample(ctx, s.Dir, warmup)
	s.stop = stop
	return start, err
}

// Finish stops the samplers, completes res (nil: the load failed) with
// what they saw and a stack's teardown, and returns the watched
// processes' summaries (a Plain's).
func (s *Sampled) Finish(res *result.Result) ([]procstat.Summary, error) {
	var err error
	if s.stop != nil {
		into := res
		if into == nil {
			into = &result.Result{} // only stop the samplers and close the file
		}
		err = s.stop(into)
	}
	_, derr := s.Target.Down()
	if _, stack := s.Target.(*Compose); stack && res != nil {
		res.Complete(result.After{TeardownErr: derr})
	}
	if p, ok := s.Target.(*Plain); ok {
		return p.Watched, err
	}
	return nil, err
}
