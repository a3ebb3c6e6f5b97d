package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Schemas of the verdict files: a run's and a gate's keys differ.
const (
	VerdictSchema     = "loadgate/verdict/v1"      // a run's verdict.json (JSON)
	GateVerdictSchema = "loadgate/gate-verdict/v1" // a gate's or a compare's verdict.json (CompareJSON)
)

// VerdictFile is a run's verdict.json: keys in this order, lists never null.
type VerdictFile struct {
	Schema    string                    `json:"schema"`
	Value     verdict.Value             `json:"value"`
	ExitCode  int                       `json:"exit_code"`
	Workloads []verdict.WorkloadVerdict `json:"workloads"`
	Reasons   []string                  `json:"reasons"`
	Recovery  []verdict.RecoveryVerdict `json:"recovery,omitempty"` // per injected fault
}

// GateVerdictFile is a gate's verdict.json: a run's keys, then the gate's.
type GateVerdictFile struct {
	VerdictFile
	Scenario         GateScenario             `json:"scenario"`
	Rounds           int                      `json:"rounds"`
	Order            string                   `json:"order"`       // roundOrder.label: "ABBA", "duet", …
	FirstSides       []string                 `json:"first_sides"` // per round; [] when not recorded and in a duet
	Paused           bool                     `json:"paused"`      // every round's idle side was paused
	Tolerance        float64                  `json:"tolerance"`
	ToleranceFloorMs float64                  `json:"tolerance_floor_ms,omitempty"` // the absolute floor (0: none)
	Confidence       float64                  `json:"confidence"`
	Percentile       string                   `json:"percentile"`
	UntrustedRounds  []verdict.UntrustedRound `json:"untrusted_rounds,omitempty"` // generator behind
	LeftOutRounds    []int                    `json:"left_out_rounds,omitempty"`  // duet rounds left out
	Noise            *verdict.NoiseUse        `json:"noise,omitempty"`            // stand-in bound or unused calibration
	Sequential       *verdict.SeqDecision     `json:"sequential,omitempty"`       // last look
	Sides            []GateSideFile           `json:"sides"`
	Notes            []string                 `json:"notes"`
	Shards           []rounds.ShardInfo       `json:"shards,omitempty"` // a merged gate's, by K
	// Accepted: the failing verdict accepted by label; value and exit_code stay the verdict's.
	Accepted *verdict.Acceptance `json:"accepted,omitempty"`
}

type GateScenario struct {
	Name string `json:"name"`
	Hash string `json:"hash"`
}

type GateSideFile struct {
	Name      string `json:"name"`
	Ref       string `json:"ref"`
	Commit    string `json:"commit"`
	Rounds    int    `json:"rounds"`
	StackCPUs string `json:"stack_cpus"`
	LoadCPUs  string `json:"load_cpus"`
	Pinned    bool   `json:"pinned"` // every round pinned
}

// JSON writes v as a run's verdict.json: indented, stable order, [] not null.
func JSON(w io.Writer, v verdict.Verdict) error {
	v = Explain(v)
	return encodeFile(w, &VerdictFile{
		Schema: VerdictSchema, Value: v.Value, ExitCode: v.ExitCode(),
		Workloads: v.Workloads, Reasons: NoteTexts(v.Notes), Recovery: v.Recovery,
	})
}

// CompareJSON writes a gate's verdict.json, likewise.
func CompareJSON(w io.Writer, out rounds.Outcome) error {
	g := gateReport(out)
	g.normalize()
	v := Explain(g.Verdict)
	o := g.order()
	f := &GateVerdictFile{
		VerdictFile: VerdictFile{Schema: GateVerdictSchema, Value: v.Value, ExitCode: v.ExitCode(),
			Workloads: v.Workloads, Reasons: NoteTexts(v.Notes)},
		Scenario: GateScenario{Name: g.Scenario.Name, Hash: g.Scenario.Hash},
		Rounds:   g.Rounds, Order: o.label(), Paused: o.paused,
		Tolerance: v.Tolerance, ToleranceFloorMs: v.ToleranceFloorMs, Confidence: v.Confidence, Percentile: v.Percentile,
		UntrustedRounds: v.Untrusted, LeftOutRounds: v.LeftOut, Noise: v.Noise, Sequential: v.Sequential, Notes: g.warnings(),
		Shards: g.Shards, Accepted: g.Accepted,
	}
	for _, bf := range o.baseFirst {
		if bf {
			f.FirstSides = append(f.FirstSides, g.Base.Name)
		} else {
			f.FirstSides = append(f.FirstSides, g.Head.Name)
		}
	}
	for _, s := range g.sides() {
		pinned := len(s.Results) > 0
		for _, r := range s.Results {
			pinned = pinned && r != nil && r.Topology.Pinned
		}
		f.Sides = append(f.Sides, GateSideFile{Name: s.Name, Ref: s.Ref, Commit: sideCommit(s), Rounds: len(s.Results),
			StackCPUs: topo(s, stackCPUs), LoadCPUs: topo(s, loadCPUs), Pinned: pinned})
	}
	return encodeFile(w, f)
}

type verdictFile interface {
	schema() string
	check() error
	normalize()
}

func (f *VerdictFile) schema() string     { return f.Schema }
func (f *GateVerdictFile) schema() string { return f.Schema }

func (f *VerdictFile) check() error {
	return checkFile(VerdictSchema, f.Schema, f.Value, f.ExitCode)
}

func (f *GateVerdictFile) check() error {
	return checkFile(GateVerdictSchema, f.Schema, f.Value, f.ExitCode)
}

func checkFile(want, schema string, v verdict.Value, exit int) error {
	if schema != want {
		return schemaErr(want, schema)
	}
	if code := (verdict.Verdict{Value: v}).ExitCode(); code != exit {
		return fmt.Errorf("exit_code %d does not go with value %q (exit %d)", exit, v, code)
	}
	return nil
}

func schemaErr(want, found string) error {
	if found == "" {
		return fmt.Errorf("no schema; this loadgate reads %q", want)
	}
	return fmt.Errorf("schema %q is not supported here; this reads %q", found, want)
}

// normalize makes contract lists non-nil and omitempty ones nil: decode(encode(f)) == f.
func (f *VerdictFile) normalize() {
	f.Workloads = normWorkloads(f.Workloads)
	f.Reasons = nonNil(f.Reasons)
}

func (f *GateVerdictFile) normalize() {
	f.VerdictFile.normalize()
	f.FirstSides = nonNil(f.FirstSides)
	f.Sides = nonNil(f.Sides)
	f.Notes = nonNil(f.Notes)
	if len(f.UntrustedRounds) == 0 {
		f.UntrustedRounds = nil
	}
	if len(f.LeftOutRounds) == 0 {
		f.LeftOutRounds = nil
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func normWorkloads(wvs []verdict.WorkloadVerdict) []verdict.WorkloadVerdict {
	out := make([]verdict.WorkloadVerdict, len(wvs))
	for i, wv := range wvs {
		wv.Checks = append([]verdict.Check{}, wv.Checks...)
		if len(wv.Comparisons) == 0 {
			wv.Comparisons = nil
		} else {
			cs := make([]verdict.Comparison, len(wv.Comparisons))
			for j, c := range wv.Comparisons {
				if len(c.RoundRatios) == 0 {
					c.RoundRatios = nil
				}
				if len(c.Open) == 0 {
					c.Open = nil
				}
				cs[j] = c
			}
			wv.Comparisons = cs
		}
		out[i] = wv
	}
	return out
}

func encodeFile(w io.Writer, f verdictFile) error {
	f.normalize()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("report: verdict file: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Encode writes f as JSON does, refusing what DecodeVerdict would refuse.
func (f *VerdictFile) Encode(w io.Writer) error {
	if err := f.check(); err != nil {
		return fmt.Errorf("report: verdict file: %w", err)
	}
	c := *f
	return encodeFile(w, &c)
}

// Encode writes f as CompareJSON does, refusing what DecodeGateVerdict would.
func (f *GateVerdictFile) Encode(w io.Writer) error {
	if err := f.check(); err != nil {
		return fmt.Errorf("report: gate verdict file: %w", err)
	}
	c := *f
	return encodeFile(w, &c)
}

// DecodeVerdict reads a run's verdict.json, refusing another schema, unknown
// fields, trailing data and an exit code not matching the value.
func DecodeVerdict(r io.Reader) (*VerdictFile, error) {
	f := &VerdictFile{}
	if err := decodeFile(r, VerdictSchema, f); err != nil {
		return nil, fmt.Errorf("report: verdict file: %w", err)
	}
	return f, nil
}

// DecodeGateVerdict reads a gate's (or compare's) verdict.json likewise.
func DecodeGateVerdict(r io.Reader) (*GateVerdictFile, error) {
	f := &GateVerdictFile{}
	if err := decodeFile(r, GateVerdictSchema, f); err != nil {
		return nil, fmt.Errorf("report: gate verdict file: %w", err)
	}
	return f, nil
}

func decodeFile(r io.Reader, want string, f verdictFile) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	// Schema first, so another file fails on its schema, not an unknown key.
	var head struct {
		Schema *string `json:"schema"`
	}
	if json.Unmarshal(data, &head) == nil && head.Schema != nil && *head.Schema != want {
		return schemaErr(want, *head.Schema)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(f); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the verdict object")
	}
	if err := f.check(); err != nil {
		return err
	}
	f.normalize()
	return nil
}
