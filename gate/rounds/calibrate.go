package rounds

import (
	"context"
	"errors"
	"time"

	"github.com/loadgate/loadgate/gate/verdict"
)

// DefaultCalibrationPairs is loadgate calibrate's --pairs (9 df).
const DefaultCalibrationPairs = 10

// Calibrate runs an A/A gate of cfg.Head on both sides (Base, Against,
// Auto and Duet ignored) and computes the machine's noise from it.
func Calibrate(ctx context.Context, cfg Config, d Deps, now func() time.Time) (*verdict.Noise, Outcome, error) {
	if cfg.Head == "" {
		cfg.Head = "HEAD"
	}
	cfg.Base, cfg.Against, cfg.Auto, cfg.Duet, cfg.ScenarioFrom = cfg.Head, "base", false, false, ""
	if cfg.Rounds == 0 {
		cfg.Rounds = DefaultCalibrationPairs
	}
	if cfg.Rounds < 2 {
		return nil, Outcome{}, Usagef("calibrate: --pairs must be at least 2 (10 or more make a useful calibration), not %d", cfg.Rounds)
	}
	gr, err := Run(ctx, cfg, d)
	if err != nil {
		return nil, gr, err
	}
	if gr.Verdict.Value == verdict.Unusable {
		return nil, gr, Unusable(&NotesError{Op: "calibrate: the A/A rounds", Notes: gr.Verdict.Notes})
	}
	n, err := verdict.Calibrate(gr.Base.Results, gr.Head.Results, now())
	if ue, ok := errors.AsType[*verdict.UnusableError](err); ok {
		return nil, gr, Unusable(&NotesError{Op: ue.Op, Notes: ue.Notes})
	}
	if err != nil {
		return nil, gr, Unusablef("%w", err)
	}
	return n, gr, nil
}
