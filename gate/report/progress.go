package report

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/soak"
)

// ProgressOn says whether to draw a progress line on w (auto: when a terminal).
func ProgressOn(w io.Writer, mode string) bool {
	switch mode {
	case "always":
		return true
	case "auto":
		f, ok := w.(*os.File)
		if !ok {
			return false
		}
		st, err := f.Stat()
		return err == nil && st.Mode()&os.ModeCharDevice != 0
	}
	return false
}

// ProgressLine redraws one load's status line per snapshot; Update and Finish lock.
type ProgressLine struct {
	mu     sync.Mutex
	w      io.Writer
	on     bool
	drawn  bool
	late   int64
	maxP99 float64
}

func NewProgressLine(w io.Writer, mode string) *ProgressLine {
	return &ProgressLine{w: w, on: ProgressOn(w, mode)}
}

func (p *ProgressLine) Update(pr load.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := pr.Snapshot
	p.late += s.Late
	if s.P99MS > p.maxP99 {
		p.maxP99 = s.P99MS
	}
	if !p.on {
		return
	}
	per := pr.Interval.Seconds()
	fmt.Fprintf(p.w, "\r\033[K%s %.0f/%.0fs · offered %.0f/s · completed %.0f/s · in flight %d · late %s · p99 %s ms (n=%s, worst second %s ms)",
		pr.Phase, pr.PhaseElapsed.Seconds(), pr.PhaseDuration.Seconds(), float64(s.Offered)/per, float64(s.Succeeded+s.Failed)/per,
		s.InFlight, Count(p.late), MS(s.P99MS), Count(s.Count), MS(p.maxP99))
	p.drawn = true
}

// Finish ends the line, if one was drawn.
func (p *ProgressLine) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
}

// SoakProgressLine is ProgressLine for a soak, with each process's growth estimate.
type SoakProgressLine struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	drawn bool
	total time.Duration
}

// NewSoakProgressLine is a soak's progress line; total is the whole load.
func NewSoakProgressLine(w io.Writer, mode string, total time.Duration) *SoakProgressLine {
	return &SoakProgressLine{w: w, on: ProgressOn(w, mode), total: total}
}

func (p *SoakProgressLine) Update(pr load.Progress, estimates []soak.Estimated) {
	if !p.on {
		return
	}
	ests := make([]SoakEstimate, len(estimates))
	for i, e := range estimates {
		ests[i] = SoakEstimate{Name: e.Name, BytesPerHour: e.BytesPerHour, OK: e.OK}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	per := pr.Interval.Seconds()
	s := pr.Snapshot
	fmt.Fprintf(p.w, "\r\033[K%s", SoakProgress(pr.Phase, pr.Elapsed, p.total, float64(s.Offered)/per, float64(s.Succeeded+s.Failed)/per, ests))
	p.drawn = true
}

// Finish ends the line, if one was drawn.
func (p *SoakProgressLine) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
}

// Engine is e with its words on log: each load's first line, progress and warnings.
func Engine(e session.Engine, log io.Writer, mode string) *session.Engine {
	e.Starting = func(s session.Spec) {
		fmt.Fprintf(log, "loadgate: %s (%s) → %s for %s, results in %s\n",
			s.Scenario.Name, result.ShortHash(s.Scenario.Hash), s.Target.Redacted(), s.Scenario.TotalDuration().Round(time.Millisecond), s.Dir)
	}
	e.Progress = func() (func(load.Progress), func()) {
		pl := NewProgressLine(log, mode)
		return pl.Update, pl.Finish
	}
	e.Warn = Warner(log)
	return &e
}

// ProgressMode is --progress as a flag.TextVar: auto, always or never.
type ProgressMode string

func (m ProgressMode) MarshalText() ([]byte, error) { return []byte(m), nil }

func (m *ProgressMode) UnmarshalText(b []byte) error {
	switch s := string(b); s {
	case "auto", "always", "never":
		*m = ProgressMode(s)
		return nil
	}
	return fmt.Errorf("want auto, always or never")
}

// Warner prints a warning on log: a figure lost, the result standing.
func Warner(log io.Writer) func(format string, a ...any) {
	return func(format string, a ...any) { fmt.Fprintf(log, "loadgate: warning: "+format+"\n", a...) }
}
