package session

import (
	"errors"
	"fmt"
)

// The two kinds of error (errors.Is) that end a command without a verdict; every error a
// measured run returns carries one.
var (
	// ErrUsage (exit 2): bad input or refused, e.g. a target not allowed.
	ErrUsage = errors.New("usage error or refused")
	// ErrUnusable (exit 3): the run could not measure what it was asked to.
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

// KindOf is the outermost kind err carries (ErrUsage, ErrUnusable or nil):
// a gate that wraps a refused side as unusable is unusable.
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
