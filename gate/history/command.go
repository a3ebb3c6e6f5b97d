package history

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/rounds"
)

// Read is `loadgate history` short of words; opt.Since may be any revision of the clone.
func Read(ctx context.Context, s *Store, scenario string, opt Options) (Analysis, error) {
	es, err := s.Load(ctx, scenario)
	if err != nil {
		return Analysis{}, err
	}
	if opt.Since != "" && !commitRE.MatchString(opt.Since) {
		c, err := s.git().Run(ctx, s.Dir, nil, "rev-parse", "--verify", "--end-of-options", opt.Since+"^{commit}")
		if err != nil {
			return Analysis{}, fmt.Errorf("history: since %s: not a commit of %s: %w", opt.Since, s.Dir, err)
		}
		opt.Since = strings.TrimSpace(string(c))
	}
	a, err := Analyze(NewChain(es), opt)
	if err != nil {
		return a, err
	}
	a.Scenario = scenario
	return a, nil
}

// Record appends a gate's head's entry and returns its path. Call it on a push to a
// protected branch, never for a pull request.
func Record(ctx context.Context, s *Store, o rounds.Outcome, ref string, date time.Time) (string, error) {
	e, err := FromGate(o, ref, date)
	if err != nil {
		return "", err
	}
	path, err := s.Append(ctx, e)
	if err != nil {
		return "", fmt.Errorf("history: record %s: %w", ref, err)
	}
	return path, nil
}

// Previous is the newest entry of scenario, the next push's gate's base.
func Previous(ctx context.Context, s *Store, scenario string) (e Entry, ok bool, err error) {
	es, err := s.Load(ctx, scenario)
	if err != nil || len(es) == 0 {
		return Entry{}, false, err
	}
	c := NewChain(es)
	return c.Entries[len(c.Entries)-1], true, nil
}
