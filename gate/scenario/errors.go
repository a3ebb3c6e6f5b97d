package scenario

import (
	"errors"
	"fmt"
)

// ErrCeiling is wrapped by every error that refuses a scenario because it
// asks for more rate, duration, in-flight requests, timeout, drain or
// max_body than its ceilings allow (measurement rule 13: ceilings refuse,
// never clamp). Test for it with errors.Is.
var ErrCeiling = errors.New("ceiling")

// Error is a problem in a scenario file, located by file, line and field.
// Every error returned by Parse and Load (other than a failure to read the
// file) is, or wraps, an *Error; refusals by a ceiling also wrap ErrCeiling,
// and refusals by a fixed limit (MaxFileBytes, MaxCells) wrap ErrLimit.
type Error struct {
	File  string // the file as given to Load or Parse ("" in memory)
	Line  int    // 1-based; 0 when unknown
	Field string // dotted path such as "phases[1].rate"; "" for the whole file
	Msg   string
	Err   error // optional cause (ErrCeiling for ceiling refusals)
}

// Error formats as "file:line: field: msg", leaving out the parts that are
// unknown, e.g. "scenario.yaml:12: phases[1].rate: must be > 0".
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

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }
