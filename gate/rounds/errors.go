package rounds

import (
	"fmt"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/verdict"
)

// The two kinds of error that end a command without a verdict: cmd/loadgate
// exits 2 on ErrUsage, 3 on ErrUnusable.
var (
	ErrUsage    = session.ErrUsage
	ErrUnusable = session.ErrUnusable
)

// Usage marks err as ErrUsage (exit 2; nil stays nil).
func Usage(err error) error { return session.Usage(err) }

// Unusable marks err as ErrUnusable (exit 3; nil stays nil).
func Unusable(err error) error { return session.Unusable(err) }

// Usagef is Usage(fmt.Errorf(format, a...)).
func Usagef(format string, a ...any) error { return session.Usagef(format, a...) }

// Unusablef is Unusable(fmt.Errorf(format, a...)).
func Unusablef(format string, a ...any) error { return session.Unusablef(format, a...) }

// KindOf is the outermost kind err carries, or nil.
func KindOf(err error) error { return session.KindOf(err) }

// NotesError is a result or gate that cannot be judged, with the notes why.
type NotesError struct {
	Op    string // what was refused, e.g. "calibrate: the A/A rounds"
	Notes []verdict.Note
}

func (e *NotesError) Error() string {
	codes := make([]string, len(e.Notes))
	for i, n := range e.Notes {
		codes[i] = string(n.Code)
	}
	return e.Op + ": unusable: " + strings.Join(codes, "; ")
}

// Words word a gate's log lines (gate/report's GateWords); nil logs bare figures.
type Words interface {
	Plan(verdict.Note) string
	Generator(result.Generator) string
	Note(verdict.Note) string
}

type bareWords struct{}

func (bareWords) Plan(n verdict.Note) string {
	return fmt.Sprintf("--max-rounds %d, budget %s", n.MaxRounds, n.Budget)
}

func (bareWords) Note(n verdict.Note) string {
	return fmt.Sprintf("%s: round %d, %s", n.Code, n.Round, n.Side)
}

func (bareWords) Generator(g result.Generator) string {
	return fmt.Sprintf("generator behind schedule: %d of %d requests late", g.Late, g.Offered)
}
