package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/strictjson"
)

// Schema is the version of an entry file written by this package.
const Schema = "loadgate/history/v1"

// MaxEntryBytes bounds an entry read back: a data branch is input.
const MaxEntryBytes = 16 << 20

// Entry is one protected-branch commit: its load and its gate's steps against the previous entry.
type Entry struct {
	Schema string         `json:"schema"`
	Commit string         `json:"commit"`
	Ref    string         `json:"ref,omitempty"`  // the branch pushed ("main", "release/1.4")
	Date   time.Time      `json:"date"`           // when the entry was measured
	Result *result.Result `json:"result"`         // every round merged, no raw records
	Base   string         `json:"base,omitempty"` // the commit Steps ran against ("": none)
	Steps  []Step         `json:"steps,omitempty"`
}

// Step is one link of the chain: a gate's head/base latency ratio with its interval.
type Step struct {
	Phase      string        `json:"phase"`
	Workload   string        `json:"workload"`
	Metric     string        `json:"metric"` // "p95", "first_message_p99", …
	Ratio      float64       `json:"ratio"`
	CILow      float64       `json:"ci_low"`
	CIHigh     float64       `json:"ci_high"`
	Confidence float64       `json:"confidence"` // of [CILow, CIHigh], two-sided
	Interval   string        `json:"interval"`   // what set its width (verdict.Interval*)
	Rounds     int           `json:"rounds"`
	BaseN      int64         `json:"base_n"`
	HeadN      int64         `json:"head_n"`
	Value      verdict.Value `json:"value"` // the gate's call on this comparison
}

// Key names a series: one workload's percentile in one phase.
type Key struct {
	Phase    string `json:"phase"`
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
}

func (k Key) String() string { return k.Phase + "/" + k.Workload + " " + k.Metric }

func (s Step) Key() Key { return Key{s.Phase, s.Workload, s.Metric} }

// FromGate is the entry of a gate's head: its rounds merged, a step per latency comparison.
func FromGate(o rounds.Outcome, ref string, date time.Time) (Entry, error) {
	e, err := FromResults(o.Head.Results, ref, date)
	if err != nil {
		return Entry{}, err
	}
	if o.Head.Commit != "" {
		e.Commit = o.Head.Commit
	}
	e.Base = o.Base.Commit
	for _, wv := range o.Verdict.Workloads {
		for _, c := range wv.Comparisons {
			if s, ok := stepOf(c, o.Verdict.Confidence); ok {
				e.Steps = append(e.Steps, s)
			}
		}
	}
	return e, nil
}

// FromResults is the entry of a commit measured without a gate: no steps.
func FromResults(rs []*result.Result, ref string, date time.Time) (Entry, error) {
	var kept []*result.Result
	for _, r := range rs {
		if r != nil {
			kept = append(kept, r)
		}
	}
	merged, err := result.MergeAll(kept)
	if me := (*result.MergeError)(nil); errors.As(err, &me) {
		return Entry{}, fmt.Errorf("history: merge round %d: %w", me.Index+1, err)
	} else if err != nil {
		return Entry{}, fmt.Errorf("history: merge: %w", err)
	}
	if merged == nil {
		return Entry{}, errors.New("history: an entry needs at least one result")
	}
	return Entry{Schema: Schema, Commit: merged.Commit, Ref: ref, Date: date.UTC(), Result: merged}, nil
}

func stepOf(c verdict.Comparison, conf float64) (Step, bool) {
	if c.Metric == verdict.MetricErrorRate || c.Interval == "" ||
		!(c.Ratio > 0 && c.CILow > 0 && c.CIHigh >= c.CILow) || math.IsInf(c.CIHigh, 0) {
		return Step{}, false
	}
	if conf == 0 {
		conf = verdict.DefaultConfidence
	}
	return Step{Phase: c.Phase, Workload: c.Workload, Metric: c.Metric, Ratio: c.Ratio, CILow: c.CILow, CIHigh: c.CIHigh,
		Confidence: conf, Interval: c.Interval, Rounds: c.Rounds, BaseN: c.BaseN, HeadN: c.HeadN, Value: c.Value}, true
}

func (e *Entry) Step(k Key) (Step, bool) {
	for _, s := range e.Steps {
		if s.Key() == k {
			return s, true
		}
	}
	return Step{}, false
}

func (e *Entry) check() error {
	if e.Schema != Schema {
		return fmt.Errorf("schema %q is not supported; this loadgate reads %q", e.Schema, Schema)
	}
	if e.Commit == "" {
		return errors.New("entry without a commit")
	}
	if e.Result == nil {
		return errors.New("entry without a result")
	}
	for i, s := range e.Steps {
		if !(s.Ratio > 0 && s.CILow > 0 && s.CIHigh >= s.CILow && s.Confidence > 0 && s.Confidence < 1) ||
			math.IsInf(s.CIHigh, 0) || math.IsNaN(s.CIHigh) {
			return fmt.Errorf("steps[%d] (%s): ratio %v, interval [%v, %v] at %v: not a ratio with an interval", i, s.Key(), s.Ratio, s.CILow, s.CIHigh, s.Confidence)
		}
	}
	return nil
}

type wireEntry struct {
	Schema string          `json:"schema"`
	Commit string          `json:"commit"`
	Ref    string          `json:"ref,omitempty"`
	Date   time.Time       `json:"date"`
	Base   string          `json:"base,omitempty"`
	Steps  []Step          `json:"steps,omitempty"`
	Result json.RawMessage `json:"result"`
}

// Encode writes e as indented JSON, the result through result's codec.
func (e *Entry) Encode(w io.Writer) error {
	if err := e.check(); err != nil {
		return fmt.Errorf("history: encode %s: %w", result.ShortHash(e.Commit), err)
	}
	var rb bytes.Buffer
	if err := e.Result.Encode(&rb); err != nil {
		return fmt.Errorf("history: encode %s: %w", result.ShortHash(e.Commit), err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, rb.Bytes()); err != nil {
		return fmt.Errorf("history: encode %s: %w", result.ShortHash(e.Commit), err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	we := wireEntry{Schema: e.Schema, Commit: e.Commit, Ref: e.Ref, Date: e.Date.UTC(), Base: e.Base, Steps: e.Steps, Result: compact.Bytes()}
	if err := enc.Encode(we); err != nil {
		return fmt.Errorf("history: encode %s: %w", result.ShortHash(e.Commit), err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// Decode reads one entry strictly, at most MaxEntryBytes.
func Decode(rd io.Reader) (*Entry, error) {
	var we wireEntry
	if err := strictjson.Decode(rd, MaxEntryBytes, &we); err != nil {
		return nil, fmt.Errorf("history: entry: %w", err)
	}
	if we.Schema != Schema {
		return nil, fmt.Errorf("history: schema %q is not supported; this loadgate reads %q", we.Schema, Schema)
	}
	r, err := result.Decode(bytes.NewReader(we.Result))
	if err != nil {
		return nil, fmt.Errorf("history: entry %s: %w", result.ShortHash(we.Commit), err)
	}
	e := &Entry{Schema: we.Schema, Commit: we.Commit, Ref: we.Ref, Date: we.Date.UTC(), Result: r, Base: we.Base, Steps: we.Steps}
	if err := e.check(); err != nil {
		return nil, fmt.Errorf("history: entry %s: %w", result.ShortHash(we.Commit), err)
	}
	return e, nil
}
