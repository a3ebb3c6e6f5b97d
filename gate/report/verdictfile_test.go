package report_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
)

// Every golden verdict.json decodes with its own decoder, is refused by
// the other's (naming both schemas), and re-encodes to the same bytes.
func TestVerdictFilesRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json.golden")
	if len(files) < 10 {
		t.Fatalf("%d golden verdict files", len(files))
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if strings.HasPrefix(filepath.Base(path), "gate_") {
			f, err := report.DecodeGateVerdict(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := f.Encode(&out); err != nil {
				t.Fatal(err)
			}
			if _, err := report.DecodeVerdict(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), report.GateVerdictSchema) {
				t.Errorf("%s: the run decoder read a gate verdict (%v)", path, err)
			}
		} else {
			f, err := report.DecodeVerdict(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if err := f.Encode(&out); err != nil {
				t.Fatal(err)
			}
			if _, err := report.DecodeGateVerdict(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), report.VerdictSchema) {
				t.Errorf("%s: the gate decoder read a run verdict (%v)", path, err)
			}
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Errorf("%s: re-encoded differently:\n%s", path, out.Bytes())
		}
	}
	for _, bad := range []string{
		`{"schema":"loadgate/verdict/v1","value":"pass","exit_code":1,"workloads":[],"reasons":[]}`,
		`{"schema":"loadgate/verdict/v1","value":"pass","exit_code":0,"workloads":[],"reasons":[],"extra":1}`,
		`{"schema":"loadgate/verdict/v1","value":"pass","exit_code":0,"workloads":[],"reasons":[]} {}`,
		`{"value":"pass","exit_code":0}`,
	} {
		if _, err := report.DecodeVerdict(strings.NewReader(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func seedVerdicts(f *testing.F, gate bool) {
	files, _ := filepath.Glob("testdata/*.json.golden")
	for _, path := range files {
		if strings.HasPrefix(filepath.Base(path), "gate_") == gate {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// encoder is what both verdict files are.
type encoder interface{ Encode(io.Writer) error }

// roundTrip checks that what decode accepts survives Encode → decode
// deeply equal, with a byte-identical second encoding.
func roundTrip[F encoder](t *testing.T, data []byte, decode func(io.Reader) (F, error)) {
	v, err := decode(bytes.NewReader(data))
	if err != nil {
		return
	}
	var a bytes.Buffer
	if err := v.Encode(&a); err != nil {
		t.Fatalf("Encode of a decoded verdict: %v", err)
	}
	v2, err := decode(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatalf("Decode of an encoded verdict: %v\n%s", err, a.Bytes())
	}
	if !reflect.DeepEqual(v, v2) {
		t.Fatalf("Decode(Encode(v)) != v\n%s", a.Bytes())
	}
	var b bytes.Buffer
	if err := v2.Encode(&b); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("encodings differ (%v):\n%s\n%s", err, a.Bytes(), b.Bytes())
	}
}

// FuzzDecodeVerdict: DecodeVerdict never panics, and what it accepts
// round-trips (roundTrip).
func FuzzDecodeVerdict(f *testing.F) {
	seedVerdicts(f, false)
	f.Add([]byte(`{"schema":"loadgate/verdict/v1","value":"fail","exit_code":1,"workloads":[{"checks":null,"comparisons":[]}],"reasons":null}`))
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, report.DecodeVerdict) })
}

// FuzzDecodeGateVerdict: the same for a gate's verdict.json.
func FuzzDecodeGateVerdict(f *testing.F) {
	seedVerdicts(f, true)
	f.Add([]byte(`{"schema":"loadgate/gate-verdict/v1","value":"unusable","exit_code":3,"workloads":[{"comparisons":[{"round_ratios":[],"open":[]}]}],"untrusted_rounds":[],"sides":null}`))
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, report.DecodeGateVerdict) })
}
