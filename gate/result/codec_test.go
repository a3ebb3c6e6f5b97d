package result_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
)

var update = flag.Bool("update", false, "rewrite testdata/result.json from the sample")

func encodeResult(t testing.TB, r *result.Result) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := r.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testdata/result.json is the sample result, kept valid by this test
// (go test -run TestSampleFile -update rewrites it).
func TestSampleFile(t *testing.T) {
	path := filepath.Join("testdata", "result.json")
	want := encodeResult(t, sample(t))
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; rerun with -update", path)
	}
	r, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if problems := r.Check(); len(problems) != 0 {
		t.Errorf("sample is inconsistent: %q", problems)
	}
}

func TestRoundTrip(t *testing.T) {
	r := sample(t)
	data := encodeResult(t, r)
	if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.HasPrefix(data, []byte("{\n  \"schema\": \"loadgate/result/v1\",\n")) {
		t.Errorf("encoding is not indented JSON with a trailing newline:\n%.200s", data)
	}
	got, err := result.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("decoded result differs from the encoded one")
	}
	if again := encodeResult(t, got); !bytes.Equal(again, data) {
		t.Errorf("second encoding differs")
	}

	path := filepath.Join(t.TempDir(), "result.json")
	if err := r.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	fromFile, err := result.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFile, r) {
		t.Errorf("ReadFile(WriteFile(r)) differs from r")
	}
}

// Nil contract lists and maps are written as [] and {}.
// A duet round (both sides at the same instants) says so, and reads back;
// a round without a mode keeps the file as it was.
func TestRoundModeRoundTrips(t *testing.T) {
	r := sample(t)
	r.Round = &result.Round{Number: 3, Mode: result.RoundDuet}
	data := encodeResult(t, r)
	if !bytes.Contains(data, []byte(`"mode": "duet"`)) {
		t.Fatalf("encoding has no duet mode:\n%s", data)
	}
	got, err := result.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got.Round == nil || *got.Round != *r.Round {
		t.Errorf("round %+v, want %+v", got.Round, r.Round)
	}
	r.Round = &result.Round{Number: 1, First: true, OtherPaused: true}
	if data := encodeResult(t, r); bytes.Contains(data, []byte(`"mode"`)) {
		t.Errorf("a round without a mode writes one:\n%s", data)
	}
}

func TestEncodeEmptyCollections(t *testing.T) {
	r := &result.Result{Schema: result.Schema, Phases: []result.Phase{{Name: "sustain", Workloads: []result.Workload{{Name: "a"}}}}}
	data := string(encodeResult(t, r))
	for _, want := range []string{`"not_measured": []`, `"failures": {}`, `"histogram": ""`} {
		if !strings.Contains(data, want) {
			t.Errorf("encoding lacks %s:\n%s", want, data)
		}
	}
	if r.NotMeasured != nil || r.Phases[0].Workloads[0].Failures != nil {
		t.Error("Encode modified its receiver")
	}
}

func TestDecodeErrors(t *testing.T) {
	good := string(encodeResult(t, sample(t)))
	h := result.NewHistogram()
	record(t, h, 1)
	oneSample := encode(t, h)
	w0 := sample(t).Phases[1].Workloads[0] // phases[1].workloads[0]

	for _, c := range []struct{ name, in, want string }{
		{"unknown field", strings.Replace(good, `"schema"`, `"bogus": 1, "schema"`, 1),
			`result: json: unknown field "bogus"`},
		{"wrong schema", strings.Replace(good, result.Schema, "loadgate/result/v2", 1),
			`result: schema "loadgate/result/v2" is not supported; this loadgate reads "loadgate/result/v1"`},
		{"newer schema with new fields", `{"schema": "loadgate/result/v2", "new": true}`,
			`result: schema "loadgate/result/v2" is not supported; this loadgate reads "loadgate/result/v1"`},
		{"no schema", `{"offered": 1}`,
			`result: no schema; this loadgate reads "loadgate/result/v1"`},
		{"corrupt histogram", strings.Replace(good, w0.Histogram, "AAAA"+w0.Histogram[4:], 1),
			`result: phases[1].workloads[0].histogram: hdrhistogram: cookie 0x4 is not V2 compressed`},
		{"not base64", strings.Replace(good, w0.ServiceH, "%%", 1),
			`result: phases[1].workloads[0].service_histogram: hdrhistogram: not base64: illegal base64 data at input byte 0`},
		{"count mismatch", strings.Replace(good, `"count": 142,`, `"count": 141,`, 1),
			`result: phases[0].workloads[1].histogram holds 142 samples, but phases[0].workloads[1].latency_ms.count is 141`},
		{"lateness count", strings.Replace(good, `"lateness_histogram": "`+sample(t).LatenessHist, `"lateness_histogram": "`+oneSample, 1),
			`result: lateness_histogram holds 1 samples, but lateness_ms.count is 597`},
		{"trailing data", good + "{}",
			`result: unexpected data after the result object`},
		{"syntax", `{"schema": `,
			`result: unexpected EOF`},
		{"unknown round mode", `{"schema": "loadgate/result/v1", "round": {"number": 1, "first": true, "other_paused": true, "mode": "abba"}}`,
			`result: round.mode: "abba" is not a round mode (want "duet", or none: one side after the other)`},
		{"type", strings.Replace(good, `"offered": 600`, `"offered": "600"`, 1),
			`result: json: cannot unmarshal string into Go struct field Result.offered of type int64`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.in == good {
				t.Fatal("replacement did not apply")
			}
			_, err := result.Decode(strings.NewReader(c.in))
			if err == nil || err.Error() != c.want {
				t.Errorf("Decode error\n got: %v\nwant: %s", err, c.want)
			}
		})
	}
}

func TestFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := result.ReadFile(bad)
	if want := bad + `: result: schema "x" is not supported; this loadgate reads "loadgate/result/v1"`; err == nil || err.Error() != want {
		t.Errorf("ReadFile error = %v, want %s", err, want)
	}
	if _, err := result.ReadFile(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("ReadFile(missing) error = %v", err)
	}
	out := filepath.Join(dir, "out.json")
	err = (&result.Result{Schema: "nope"}).WriteFile(out)
	if want := out + `: result: encode: schema "nope" is not supported; this loadgate reads "loadgate/result/v1"`; err == nil || err.Error() != want {
		t.Errorf("WriteFile error = %v, want %s", err, want)
	}
}

func TestCheck(t *testing.T) {
	r := sample(t)
	if p := r.Check(); p != nil {
		t.Fatalf("consistent sample: %q", p)
	}
	w := &r.Phases[1].Workloads[0]
	w.Abandoned++ // recorded one more than offered, here and at top level
	w.Failures["reset"] = 1
	r.Warmup.Recorded--
	want := []string{
		"warmup: offered 120 != recorded 119",
		"phases[1].workloads[0] (recover/api_read): offered 138 != succeeded 132 + failed 5 + abandoned 2 = 139",
		"phases[1].workloads[0] (recover/api_read): failures by class sum to 6, failed is 5",
		"recorded 600 != 601, the sum over phases",
	}
	if got := r.Check(); !reflect.DeepEqual(got, want) {
		t.Errorf("Check =\n%q\nwant\n%q", got, want)
	}
	r = sample(t)
	r.Offered++
	want = []string{"offered 601 != recorded 600", "offered 601 != 600, the sum over phases"}
	if got := r.Check(); !reflect.DeepEqual(got, want) {
		t.Errorf("Check =\n%q\nwant\n%q", got, want)
	}
}

func TestLookups(t *testing.T) {
	r := sample(t)
	if p := r.JudgedPhase(); p == nil || p.Name != "sustain" {
		t.Errorf("JudgedPhase = %v", p)
	}
	if p := r.RecoverPhase(); p == nil || p.Name != "recover" {
		t.Errorf("RecoverPhase = %v", p)
	}
	if r.PhaseNamed("burst") != nil || r.PhaseNamed("recover") != &r.Phases[1] {
		t.Error("PhaseNamed")
	}
	p := r.PhaseNamed("sustain")
	w := p.Workload("ingest")
	if w != &r.Phases[0].Workloads[1] || p.Workload("nope") != nil || (*result.Phase)(nil).Workload("x") != nil {
		t.Error("Workload")
	}
	r.Phases[0].Judged = false
	if r.JudgedPhase() != nil {
		t.Error("JudgedPhase without a judged phase")
	}
	rate, n := (&result.Workload{Succeeded: 90, Failed: 10, Abandoned: 5}).ErrorRate()
	if rate != 0.1 || n != 100 {
		t.Errorf("ErrorRate = %v, %d", rate, n)
	}
	if rate, n := (&result.Workload{Abandoned: 5}).ErrorRate(); rate != 0 || n != 0 {
		t.Errorf("ErrorRate of nothing = %v, %d", rate, n)
	}
	h, err := w.LatencyHistogram()
	if err != nil || h.TotalCount() != w.LatencyMS.Count || result.Summarize(h) != w.LatencyMS {
		t.Errorf("LatencyHistogram: %v", err)
	}
}
