package session

import (
	"context"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// Sampled is gate/soak's Sampler on a Target, torn down after the load. The
// goroutine that runs the soak calls Start, then Finish once.
type Sampled struct {
	Target Target
	Dir    string
	stop   func(*result.Result) error
}

// Start opens Dir/stats.jsonl; its listener arms the samplers for t0 + warmup.
func (s *Sampled) Start(ctx context.Context, warmup time.Duration) (func(time.Time), error) {
	start, stop, err := s.Target.Sample(ctx, s.Dir, warmup)
	s.stop = stop
	return start, err
}

// Finish stops the samplers, tears down and completes res (nil: load failed); it returns
// the watched processes' summaries (a Plain's).
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
