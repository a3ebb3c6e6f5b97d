package rounds

import "github.com/loadgate/loadgate/gate/session"

// The two kinds of error that end a command without a verdict: the
// session's (gate/session), so that a round's, a sweep's and a run's
// errors are told apart one way. cmd/loadgate maps them to exit codes in
// one place: ErrUsage 2, ErrUnusable 3.
var (
	ErrUsage    = session.ErrUsage
	ErrUnusable = session.ErrUnusable
)

// Usage marks err as ErrUsage (nil stays nil).
func Usage(err error) error { return session.Usage(err) }

// Unusable marks err as ErrUnusable (nil stays nil).
func Unusable(err error) error { return session.Unusable(err) }

// Usagef is Usage(fmt.Errorf(format, a...)).
func Usagef(format string, a ...any) error { return session.Usagef(format, a...) }

// Unusablef is Unusable(fmt.Errorf(format, a...)).
func Unusablef(format string, a ...any) error { return session.Unusablef(format, a...) }

// KindOf is the outermost kind err carries: ErrUsage, ErrUnusable, or nil
// when it carries none.
func KindOf(err error) error { return session.KindOf(err) }
