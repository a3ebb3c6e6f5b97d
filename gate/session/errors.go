package session

import (
	"errors"
	"fmt"
)

// The two kinds of error that end a command without a verdict. Every error
// a measured run returns carries one of them (errors.Is); cmd/loadgate
// maps them to exit codes in one place: ErrUsage 2, ErrUnusable 3.
var (
	// ErrUsage: bad input or refused (a flag, a scenario file, a ceiling,
	// a target that is not allowed, results of different loads).
	ErrUsage = errors.New("usage error or refused")
	// ErrUnusable: the run could not measure what it was asked to (a stack
	// that did not come up, a checkout that failed, an interruption).
	ErrUnusable = errors.New("unusable")
)

// kindError is an error of a kind; its message is its cause's.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.err} }
func (e *kindError) Is(target error) bool {
	return target == e.kind
}

// Usage marks err as ErrUsage (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: ErrUsage, err: err}
}

// Unusable marks err as ErrUnusable (nil stays nil).
func Unusable(err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: ErrUnusable, err: err}
}

// Usagef is Usage(fmt.Errorf(format, a...)).
func Usagef(format string, a ...any) error { return Usage(fmt.Errorf(format, a...)) }

// Unusablef is Unusable(fmt.Errorf(format, a...)).
func Unusablef(format string, a ...any) error { return Unusable(fmt.Errorf(format, a...)) }

// KindOf is the outermost kind err carries: ErrUsage, ErrUnusable, or nil
// when it carries none. The outermost wins: a gate that wraps a refused
// side as unusable is unusable.
func KindOf(err error) error {
	var ke *kindError
	if errors.As(err, &ke) {
		return ke.kind
	}
	return nil
}

// orUnusable is err marked unusable unless it carries a kind already.
func orUnusable(err error) error {
	if err != nil && KindOf(err) == nil {
		return Unusable(err)
	}
	return err
}
