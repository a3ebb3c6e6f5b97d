package scenario

import (
	"errors"
	"fmt"
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
