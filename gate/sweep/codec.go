package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// Encode writes sw as indented JSON, nils as [] and {}; it refuses what Decode would, so
// every file it writes reads back.
func (sw *Sweep) Encode(w io.Writer) error {
	if sw == nil {
		return errors.New("sweep: encode: nil sweep")
	}
	n := normalized(sw)
	if err := n.validate(); err != nil {
		return fmt.Errorf("sweep: encode: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(n); err != nil {
		return fmt.Errorf("sweep: encode: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Decode reads one sweep.json strictly; errors name the field.
func Decode(rd io.Reader) (*Sweep, error) {
	data, err := io.ReadAll(io.LimitReader(rd, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("sweep: larger than %d bytes", maxFile)
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if json.Unmarshal(data, &head) == nil && head.Schema != nil && *head.Schema != Schema {
		return nil, fmt.Errorf("sweep: schema %q is not supported; this loadgate reads %q", *head.Schema, Schema)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var sw Sweep
	if err := dec.Decode(&sw); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("sweep: unexpected data after the sweep object")
	}
	n := normalized(&sw)
	if err := n.validate(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	return n, nil
}

const maxFile = 16 << 20

// WriteFile writes sw to path via internal/outfile.
func (sw *Sweep) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := sw.Encode(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return outfile.WriteFile(path, buf.Bytes())
}

func ReadFile(path string) (*Sweep, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sw, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sw, nil
}

func (sw *Sweep) validate() error {
	if sw.Schema != Schema {
		if sw.Schema == "" {
			return fmt.Errorf("no schema; this loadgate reads %q", Schema)
		}
		return fmt.Errorf("schema %q is not supported; this loadgate reads %q", sw.Schema, Schema)
	}
	if len(sw.Rates) > MaxSteps {
		return fmt.Errorf("rates: %d, at most %d", len(sw.Rates), MaxSteps)
	}
	for i, r := range sw.Rates {
		if !(r > 0) || math.IsInf(r, 0) || (i > 0 && r <= sw.Rates[i-1]) {
			return fmt.Errorf("rates[%d]: %v is not a positive rate above the one before it", i, r)
		}
	}
	if len(sw.Steps) > len(sw.Rates) {
		return fmt.Errorf("steps: %d steps but %d rates planned", len(sw.Steps), len(sw.Rates))
	}
	for i, s := range sw.Steps {
		if s.Number != i+1 {
			return fmt.Errorf("steps[%d].number: %d, want %d", i, s.Number, i+1)
		}
		if s.Rate != sw.Rates[i] {
			return fmt.Errorf("steps[%d].rate: %v is not rates[%d] (%v)", i, s.Rate, i, sw.Rates[i])
		}
		if s.Held != (len(s.NotHeld) == 0) {
			return fmt.Errorf("steps[%d].held: %v contradicts not_held %v", i, s.Held, s.NotHeld)
		}
	}
	if err := stepRate("sustainable_rate", sw.SustainableRate, sw.Steps, true); err != nil {
		return err
	}
	if err := stepRate("degrades_at", sw.DegradesAt, sw.Steps, false); err != nil {
		return err
	}
	if !knownManner(sw.Manner) {
		return fmt.Errorf("manner: %q is not a manner", sw.Manner)
	}
	for i, s := range sw.Steps {
		if !knownManner(s.Manner) {
			return fmt.Errorf("steps[%d].manner: %q is not a manner", i, s.Manner)
		}
		for _, r := range s.NotHeld {
			if !knownReason(r) {
				return fmt.Errorf("steps[%d].not_held: %q is not a reason", i, r)
			}
		}
	}
	if (sw.Manner == "") != (sw.MannerStep == 0) {
		return fmt.Errorf("manner_step: %d with manner %q", sw.MannerStep, sw.Manner)
	}
	if sw.MannerStep < 0 || sw.MannerStep > len(sw.Steps) {
		return fmt.Errorf("manner_step: %d is not a step", sw.MannerStep)
	}
	if sw.SustainableRate != nil && sw.DegradesAt != nil && *sw.SustainableRate >= *sw.DegradesAt {
		return fmt.Errorf("sustainable_rate %v is not below degrades_at %v", *sw.SustainableRate, *sw.DegradesAt)
	}
	return nil
}

func stepRate(field string, r *float64, steps []Step, held bool) error {
	if r == nil {
		return nil
	}
	for _, s := range steps {
		if s.Rate == *r {
			if s.Held != held {
				return fmt.Errorf("%s: step %d at %v has held %v", field, s.Number, *r, s.Held)
			}
			return nil
		}
	}
	return fmt.Errorf("%s: %v is not the rate of a step", field, *r)
}

func normalized(sw *Sweep) *Sweep {
	n := *sw
	if n.Rates == nil {
		n.Rates = []float64{}
	}
	if n.NotMeasured == nil {
		n.NotMeasured = []string{}
	}
	if len(n.Synthetic) == 0 {
		n.Synthetic = nil
	}
	if len(n.Scenario.Thresholds) == 0 {
		n.Scenario.Thresholds = nil
	}
	steps := make([]Step, len(sw.Steps))
	for i, s := range sw.Steps {
		if s.NotHeld == nil {
			s.NotHeld = []Reason{}
		}
		if s.Failures == nil {
			s.Failures = map[string]int64{}
		}
		if s.Checks == nil {
			s.Checks = []verdict.Check{}
		}
		if s.Workloads == nil {
			s.Workloads = []Workload{}
		}
		if len(s.Unusable) == 0 {
			s.Unusable = nil
		}
		if len(s.Services) == 0 {
			s.Services = nil
		}
		ws := make([]Workload, len(s.Workloads))
		for j, w := range s.Workloads {
			if w.Failures == nil {
				w.Failures = map[string]int64{}
			}
			ws[j] = w
		}
		s.Workloads = ws
		steps[i] = s
	}
	n.Steps = steps
	return &n
}

func knownManner(m Manner) bool {
	switch m {
	case "", HonestRefusal, Queueing, Errors, Collapse, GeneratorLimit:
		return true
	}
	return false
}

func knownReason(r Reason) bool {
	switch r {
	case ReasonCompletionsBehind, ReasonThresholds, ReasonGenerator, ReasonUnusable, ReasonInterrupted, ReasonNothingOffered:
		return true
	}
	return false
}
