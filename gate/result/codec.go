package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/loadgate/loadgate/internal/outfile"
)

// Encode writes r as indented JSON, equal results to equal bytes; it refuses a
// result Decode would refuse, so every file it writes reads back.
func (r *Result) Encode(w io.Writer) error {
	if r == nil {
		return errors.New("result: encode: nil result")
	}
	if err := r.validate(); err != nil {
		return fmt.Errorf("result: encode: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalized(r)); err != nil {
		return fmt.Errorf("result: encode: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Decode reads one result strictly, naming the JSON path of what it refuses;
// Decode(Encode(Decode(x))) deeply equals Decode(x).
func Decode(rd io.Reader) (*Result, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	// The schema first: a newer file fails on its schema, not on an unknown field.
	var head struct {
		Schema *string `json:"schema"`
	}
	if json.Unmarshal(data, &head) == nil && head.Schema != nil && *head.Schema != Schema {
		return nil, fmt.Errorf("result: %w", schemaError(*head.Schema))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("result: unexpected data after the result object")
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	return normalized(&r), nil
}

func schemaError(found string) error {
	if found == "" {
		return fmt.Errorf("no schema; this loadgate reads %q", Schema)
	}
	return fmt.Errorf("schema %q is not supported; this loadgate reads %q", found, Schema)
}

// WriteFile writes r to path by renaming a temporary file over it: a symlink is
// replaced, not followed, and no reader sees half a result.
func (r *Result) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := r.Encode(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return outfile.WriteFile(path, buf.Bytes()) // errors name path
}

func ReadFile(path string) (*Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err // names path
	}
	defer f.Close()
	r, err := Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

func (r *Result) validate() error {
	if r.Schema != Schema {
		return schemaError(r.Schema)
	}
	if r.Round != nil {
		if err := r.Round.Mode.check(); err != nil {
			return err
		}
	}
	counts := make([]int64, countsLen) // reused across histograms
	check := func(path, hist string, sumPath string, count int64) error {
		clear(counts)
		n, err := decodeCounts(hist, counts)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if n != count {
			return fmt.Errorf("%s holds %d samples, but %s.count is %d", path, n, sumPath, count)
		}
		return nil
	}
	if err := check("lateness_histogram", r.LatenessHist, "lateness_ms", r.LatenessMS.Count); err != nil {
		return err
	}
	for i, p := range r.Phases {
		for j, w := range p.Workloads {
			at := fmt.Sprintf("phases[%d].workloads[%d].", i, j)
			if err := check(at+"histogram", w.Histogram, at+"latency_ms", w.LatencyMS.Count); err != nil {
				return err
			}
			if err := check(at+"service_histogram", w.ServiceH, at+"service_ms", w.ServiceMS.Count); err != nil {
				return err
			}
			if err := w.validateSession(at, check); err != nil { // session.go
				return err
			}
		}
	}
	if err := r.Wait.validate(); err != nil {
		return err
	}
	return r.Steal.validate()
}

// normalized returns r, copied where needed, nils normalized and the generator
// warning recomputed.
func normalized(r *Result) *Result {
	n := *r
	n.Generator = r.GeneratorBehind() // derived: one owner for the fact
	if len(n.Unusable) == 0 {
		n.Unusable = nil
	}
	if len(n.Synthetic) == 0 {
		n.Synthetic = nil
	}
	if len(n.Scenario.Thresholds) == 0 {
		n.Scenario.Thresholds = nil
	}
	if n.NotMeasured == nil {
		n.NotMeasured = []string{}
	}
	if len(n.Warmup.Failures) == 0 {
		n.Warmup.Failures = nil
	}
	n.Phases = make([]Phase, len(r.Phases))
	for i, p := range r.Phases {
		p.Workloads = make([]Workload, len(p.Workloads))
		for j, w := range r.Phases[i].Workloads {
			if w.Failures == nil {
				w.Failures = map[string]int64{}
			}
			p.Workloads[j] = w
		}
		n.Phases[i] = p
	}
	if r.Stack != nil {
		s := *r.Stack
		if s.Services == nil {
			s.Services = []Service{}
		}
		n.Stack = &s
	}
	return &n
}

// Check returns, in words, the counting invariants that do not hold (nil when
// consistent). A result with problems is not usable; Check does not change Usable.
func (r *Result) Check() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if r.Offered < 0 || r.Recorded < 0 || r.Late < 0 {
		add("negative count: offered %d, recorded %d, late %d", r.Offered, r.Recorded, r.Late)
	}
	if r.Offered != r.Recorded {
		add("offered %d != recorded %d", r.Offered, r.Recorded)
	}
	if r.Warmup.Offered != r.Warmup.Recorded {
		add("warmup: offered %d != recorded %d", r.Warmup.Offered, r.Warmup.Recorded)
	}
	var warmFailures int64
	for _, c := range r.Warmup.Failures {
		warmFailures += c
	}
	if warmFailures != r.Warmup.Failed || r.Warmup.Failed < 0 || r.Warmup.Failed > r.Warmup.Recorded {
		add("warmup: failures by class sum to %d, failed is %d of %d recorded", warmFailures, r.Warmup.Failed, r.Warmup.Recorded)
	}
	var offered, recorded int64
	for i, p := range r.Phases {
		for j, w := range p.Workloads {
			at := fmt.Sprintf("phases[%d].workloads[%d] (%s/%s)", i, j, p.Name, w.Name)
			if w.Offered < 0 || w.Succeeded < 0 || w.Failed < 0 || w.Abandoned < 0 {
				add("%s: negative count: offered %d, succeeded %d, failed %d, abandoned %d",
					at, w.Offered, w.Succeeded, w.Failed, w.Abandoned)
			}
			rec := w.Succeeded + w.Failed + w.Abandoned
			if w.Offered != rec {
				add("%s: offered %d != succeeded %d + failed %d + abandoned %d = %d",
					at, w.Offered, w.Succeeded, w.Failed, w.Abandoned, rec)
			}
			var failures int64
			for _, c := range w.Failures {
				failures += c
			}
			if failures != w.Failed {
				add("%s: failures by class sum to %d, failed is %d", at, failures, w.Failed)
			}
			offered += w.Offered
			recorded += rec
		}
	}
	fo, fr, over := r.faultCounts() // faults.go: requests due during a fault are in faults[].workloads[].during
	if r.Offered != offered+fo {
		add("offered %d != %d, the sum over %s", r.Offered, offered+fo, over)
	}
	if r.Recorded != recorded+fr {
		add("recorded %d != %d, the sum over %s", r.Recorded, recorded+fr, over)
	}
	r.checkFaults(add) // faults.go
	return out
}
