package scenario

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCeiling is wrapped by every refusal for asking more than the ceilings allow.
var ErrCeiling = errors.New("ceiling")

// Error is a problem in a scenario file, by file, line and field. Parse and
// Load errors (but reading the file) are or wrap one; ceiling refusals also
// wrap ErrCeiling, fixed limits ErrLimit.
type Error struct {
	File  string // the file as given to Load or Parse ("" in memory)
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path such as "phases[1].rate"; "" for the whole file
	Msg   string
	Err   error // optional cause (ErrCeiling for ceiling refusals)
}

// Error formats as "file:line: field: msg", leaving out unknown parts.
func (e *Error) Error() string {
	loc := e.File
	switch {
	case loc != "" && e.Line > 0:
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	case loc == "" && e.Line > 0:
		loc = fmt.Sprintf("line %d", e.Line)
	}
	msg := e.Msg
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if loc == "" {
		return msg
	}
	return loc + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errors is every problem Parse found in one file, in line order, one per
// independent part (a section, a phase, a workload); errors.As finds the first
// *Error.
type Errors []*Error

// Error formats one problem a line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
