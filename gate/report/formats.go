package report

import (
	"io"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// RunFormats are the renderers of one run by --format name (`loadgate report`).
var RunFormats = map[string]func(io.Writer, *result.Result, verdict.Verdict) error{
	"text":     Text,
	"markdown": Markdown,
	"md":       Markdown,
	"json":     func(w io.Writer, _ *result.Result, v verdict.Verdict) error { return JSON(w, v) },
}

// CompareFormats are the renderers of a comparison by --format name (`loadgate compare`).
var CompareFormats = map[string]func(io.Writer, rounds.Outcome) error{
	"text":     CompareText,
	"markdown": CompareMarkdown,
	"md":       CompareMarkdown,
	"json":     CompareJSON,
}
