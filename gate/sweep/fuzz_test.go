package sweep_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/loadgate/loadgate/gate/sweep"
)

// FuzzDecodeSweep: Decode never panics, and whatever it accepts survives
// Encode → Decode deeply equal, with a byte-identical second encoding.
func FuzzDecodeSweep(f *testing.F) {
	var buf bytes.Buffer
	if err := sampleSweep(f).Encode(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":"loadgate/sweep/v1"}`))
	f.Add([]byte(`{"schema":"loadgate/sweep/v1","rates":[1,2],"steps":[{"number":1,"rate":1,"held":true,"failures":null,"workloads":[{"name":"w","failures":null}]}],"sustainable_rate":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sw, err := sweep.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		var first bytes.Buffer
		if err := sw.Encode(&first); err != nil {
			t.Fatalf("Encode of a decoded sweep: %v", err)
		}
		sw2, err := sweep.Decode(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("Decode of an encoded sweep: %v\n%s", err, first.Bytes())
		}
		if !reflect.DeepEqual(sw, sw2) {
			t.Fatalf("Decode(Encode(s)) != s\n%s", first.Bytes())
		}
		var second bytes.Buffer
		if err := sw2.Encode(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("encodings differ:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}
