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

// Encode writes r as indented JSON with a trailing newline. Keys come in
// struct order and map keys sorted, so equal results encode to equal bytes.
// Lists and maps of the contract that are nil are written as [] and {}.
// Encode refuses a result Decode would refuse (wrong schema, a histogram that
// does not decode or whose count is not its summary's count), so every file
// it writes reads back.
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

// Decode reads one result. It refuses unknown fields, a schema other than
// Schema (naming both), trailing data, and a histogram that does not decode
// or whose total count differs from the count of the summary it travels with;
// those errors name the JSON path (phases[1].workloads[0].histogram: ...).
// null or absent lists and maps of the contract decode as empty ones, and
// empty omitempty ones (unusable, synthetic, scenario.thresholds) as nil, so
// Decode(Encode(Decode(x))) deeply equals Decode(x).
func Decode(rd io.Reader) (*Result, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	// The schema first: a newer file fails on its schema, not on the first
	// field this version does not know.
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

// WriteFile encodes r to path (mode 0644) through internal/outfile: a
// temporary file in path's directory renamed over path, so a symlink at
// path is replaced, never followed, and a reader never sees half a result.
func (r *Result) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := r.Encode(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return outfile.WriteFile(path, buf.Bytes()) // errors name path
}

// ReadFile decodes the result stored at path.
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

// validate checks the schema and every histogram against its summary count.
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
	return r.Steal.validate()
}

// normalized returns r, copied where needed so r itself is not modified,
// with nil contract lists and maps made empty and empty omitempty ones nil,
// and the derived "generator" warning recomputed from the counts.
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

// Check recomputes the counting invariants and returns what does not hold,
// in words (nil when the result is consistent):
//   - no count is negative;
//   - offered == recorded, at top level and for warm-up;
//   - per workload, offered == succeeded + failed + abandoned;
//   - per workload and for warm-up, the failures by class sum to failed;
//   - top-level offered and recorded equal their sums over the phases
//     and the faults' during (requests due while a fault was in effect).
//
// A result with problems is not usable (design rule 3); Check does not
// change Usable.
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
