package report

import (
	"encoding/json"
	"io"

	"github.com/loadgate/loadgate/gate/verdict"
)

// VerdictSchema is the version of verdict.json written by JSON.
const VerdictSchema = "loadgate/verdict/v1"

// verdictFile is verdict.json: keys in this fixed order, lists never null.
type verdictFile struct {
	Schema    string                    `json:"schema"`
	Value     verdict.Value             `json:"value"`
	ExitCode  int                       `json:"exit_code"`
	Workloads []verdict.WorkloadVerdict `json:"workloads"`
	Reasons   []string                  `json:"reasons"`
}

// JSON writes v as verdict.json: schema, value, exit code, per-workload
// verdicts with their checks, and reasons; indented by two spaces, keys in a
// stable order, empty lists as [].
func JSON(w io.Writer, v verdict.Verdict) error {
	f := verdictFile{
		Schema:    VerdictSchema,
		Value:     v.Value,
		ExitCode:  v.ExitCode(),
		Workloads: make([]verdict.WorkloadVerdict, 0, len(v.Workloads)),
		Reasons:   append([]string{}, v.Reasons...),
	}
	for _, wv := range v.Workloads {
		wv.Checks = append([]verdict.Check{}, wv.Checks...)
		f.Workloads = append(f.Workloads, wv)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(f)
}
