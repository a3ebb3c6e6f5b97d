package history_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// An entry reads back as written, its result through result's codec.
func TestEntryRoundTrip(t *testing.T) {
	e := chain(t, []float64{1.05}, 0.03).Entries[1]
	var b bytes.Buffer
	if err := e.Encode(&b); err != nil {
		t.Fatal(err)
	}
	got, err := history.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := result.Decode(strings.NewReader(mustEncode(t, e.Result)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Result, want) || !reflect.DeepEqual(got.Steps, e.Steps) || got.Base != e.Base || !got.Date.Equal(e.Date) {
		t.Errorf("round trip: got %+v", got)
	}
}

func mustEncode(t *testing.T, r *result.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDecodeRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"schema":  `{"schema":"loadgate/history/v9","commit":"abc","date":"2026-01-01T00:00:00Z","result":{}}`,
		"unknown": `{"schema":"loadgate/history/v1","commit":"abc","date":"2026-01-01T00:00:00Z","result":{},"x":1}`,
		"result":  `{"schema":"loadgate/history/v1","commit":"abc","date":"2026-01-01T00:00:00Z","result":{"schema":"loadgate/result/v1","phases":[{"workloads":[{"histogram":"!!"}]}]}}`,
		"big":     strings.Repeat(" ", history.MaxEntryBytes+1),
	} {
		if _, err := history.Decode(strings.NewReader(in)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// A gate's outcome becomes an entry: head's rounds merged, a step per
// latency comparison, base's commit as Base.
func TestFromGate(t *testing.T) {
	var base, head []*result.Result
	for i := 0; i < 3; i++ {
		base = append(base, res(t, sha(1), 20*(1+0.01*float64(i))))
		head = append(head, res(t, sha(2), 26*(1+0.01*float64(i))))
	}
	v, err := verdict.Gate(base, head, verdict.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := rounds.Outcome{Base: rounds.SideResults{Name: "base", Commit: sha(1), Results: base},
		Head: rounds.SideResults{Name: "head", Commit: sha(2), Results: head}, Verdict: v}
	e, err := history.FromGate(o, "main", t0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Base != sha(1) || e.Commit != sha(2) || e.Result.JudgedPhase().Workload("api").LatencyMS.Count != 600 {
		t.Errorf("entry: base %s commit %s", e.Base, e.Commit)
	}
	s, ok := e.Step(apiP95)
	if !ok || s.Ratio < 1.25 || s.Ratio > 1.35 || s.Confidence != 0.95 || s.Rounds != 3 {
		t.Errorf("step: %+v %v", s, ok)
	}
	for _, s := range e.Steps {
		if s.Metric == verdict.MetricErrorRate {
			t.Errorf("an error rate was chained: %+v", s)
		}
	}
}
