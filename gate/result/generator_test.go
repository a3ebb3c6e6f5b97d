package result_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

// behind is a result whose generator fell far behind: 57% of its requests
// late, lateness p99 833 ms (the run of issue 8).
func behind(t testing.TB) *result.Result {
	r := &result.Result{Schema: result.Schema, Offered: 600, Recorded: 600, Late: 342, LateAfterMS: 1}
	r.LatenessMS = result.Summary{Count: 600, P50: 19.8, P90: 412, P95: 611, P99: 833.2, P999: 900, Max: 912}
	return r
}

func TestGeneratorBehind(t *testing.T) {
	for _, tc := range []struct {
		name  string
		late  int64
		p99   float64
		want  bool
		share float64
	}{
		{"on schedule", 3, 0.41, false, 0},
		{"at both limits", 6, 5, false, 0}, // limits are inclusive: passing them means above
		{"late share over", 7, 0.41, true, 7.0 / 600},
		{"p99 over", 0, 5.01, true, 0},
		{"issue 8", 342, 833.2, true, 0.57},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := behind(t)
			r.Late, r.LatenessMS.P99 = tc.late, tc.p99
			g := r.GeneratorBehind()
			if (g != nil) != tc.want {
				t.Fatalf("GeneratorBehind() = %+v, want behind %v", g, tc.want)
			}
			if g == nil {
				return
			}
			if !g.BehindSchedule || g.Late != tc.late || g.Offered != 600 || g.LateShare != tc.share ||
				g.LatenessP99MS != tc.p99 || g.LatenessCount != 600 ||
				g.LateShareLimit != result.LateShareLimit || g.LatenessP99LimitMS != result.LatenessP99LimitMS {
				t.Errorf("GeneratorBehind() = %+v", g)
			}
			// Numbers only: the words are gate/report's (report.GeneratorWhy).
			if g.Reason != "" {
				t.Errorf("GeneratorBehind worded the warning: %q", g.Reason)
			}
		})
	}
	if g := (&result.Result{Schema: result.Schema}).GeneratorBehind(); g != nil {
		t.Errorf("nothing offered: %+v, want nil", g)
	}
}

// The field is derived: written from the numbers whatever the caller set,
// absent when on schedule (so such results encode as before it existed),
// and recomputed on read (a file written before the field existed gets it).
func TestGeneratorFieldDerived(t *testing.T) {
	r := behind(t)
	r.LatenessHist, r.LatenessMS.Count = "", 0 // no histogram: keep the summary valid without one
	r.Generator = nil                          // the caller forgot to set it
	data := encodeResult(t, r)
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var g result.Generator
	if err := json.Unmarshal(raw["generator"], &g); err != nil || !g.BehindSchedule || g.LateShare != 0.57 {
		t.Fatalf("encoded generator = %s (%v)", raw["generator"], err)
	}
	if r.Generator != nil {
		t.Error("Encode modified its receiver")
	}

	// Written by an older loadgate: no "generator" field; read, it is there.
	old := bytes.Replace(data, []byte(`"generator": {`), []byte(`"generator_was": {`), 1)
	var m map[string]any
	if err := json.Unmarshal(old, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "generator_was")
	old, _ = json.Marshal(m)
	got, err := result.Decode(bytes.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if got.Generator == nil || got.Generator.Late != 342 || got.Generator.LateShare != 0.57 {
		t.Errorf("decoded generator = %+v", got.Generator)
	}

	// result.json carries the numbers, not words; a file written when it
	// still carried a "reason" reads, and the stale words are dropped.
	if bytes.Contains(data, []byte(`"reason"`)) {
		t.Errorf("the encoded generator carries words:\n%s", raw["generator"])
	}
	worded := bytes.Replace(data, []byte(`"late_share": 0.57,`), []byte(`"late_share": 0.57, "reason": "generator behind schedule: 57% of requests late",`), 1)
	if got, err := result.Decode(bytes.NewReader(worded)); err != nil || got.Generator == nil || got.Generator.Reason != "" || got.Generator.Late != 342 {
		t.Errorf("a result.json with the generator's reason: %+v, %v", got.Generator, err)
	}

	// A stale or forged value in a file is replaced by the derived one.
	forged := bytes.Replace(data, []byte(`"late_share": 0.57`), []byte(`"late_share": 0.001`), 1)
	if got, err := result.Decode(bytes.NewReader(forged)); err != nil || got.Generator.LateShare != 0.57 {
		t.Errorf("forged late_share: %+v, %v", got.Generator, err)
	}

	// On schedule: no field at all, even when a caller set one.
	r.Late, r.LatenessMS.P99 = 1, 0.4
	r.Generator = &result.Generator{BehindSchedule: true}
	if data := encodeResult(t, r); bytes.Contains(data, []byte(`"generator"`)) {
		t.Errorf("on schedule, the encoding has a generator field:\n%s", data)
	}
}

// Merging rounds recomputes the warning from the summed numbers.
func TestMergeGenerator(t *testing.T) {
	a := sample(t)
	if a.Generator == nil {
		t.Fatal("the sample (37% late at late_after 0.25 ms) should be behind schedule")
	}
	b := sample(t)
	b.Late = 0
	for i := range b.Phases {
		for j := range b.Phases[i].Workloads {
			b.Phases[i].Workloads[j].Late = 0
		}
	}
	m, err := result.Merge(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Generator == nil || m.Generator.Late != a.Late || m.Generator.Offered != a.Offered+b.Offered {
		t.Errorf("merged generator = %+v", m.Generator)
	}
}
