package result_test

import (
	"bytes"
	"encoding/base64"
	"reflect"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadgate/loadgate/gate/result"
)

// FuzzDecodeResult: Decode never panics, and whatever it accepts survives
// Encode → Decode deeply equal, with a byte-identical second encoding.
func FuzzDecodeResult(f *testing.F) {
	f.Add(encodeResult(f, sample(f)))
	f.Add(encodeResult(f, &result.Result{Schema: result.Schema}))
	f.Add([]byte(`{"schema":"loadgate/result/v1","warmup":{"duration_s":1,"offered":3,"recorded":3,"failed":2,"failures":{"status 404":2}},"round":{"number":2,"first":false,"other_paused":true}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","round":{"number":1,"first":false,"other_paused":false,"mode":"duet"}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","round":{"number":1,"first":true,"other_paused":true,"mode":"abba"}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","warmup":{"failures":{}}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","steal":{"window_s":15.02,"load":{"cpus":"1","stolen_seconds":0.38,"share":0.0253},"stack":{"cpus":"0","stolen_seconds":0.2,"share":0.0133}}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","steal":{"window_s":1,"load":{"cpus":"1","stolen_seconds":2,"share":2}}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","steal":{"window_s":1,"load":{"cpus":"","stolen_seconds":0,"share":0}}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","wait":{"margin_ms":0.084,"wakes":596,"wake_delay_max_ms":0.064,"early_wakes":596,"spun_seconds":0.048}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","wait":{"margin_ms":-1,"wakes":-2,"wake_delay_max_ms":0,"early_wakes":0,"spun_seconds":0}}`))
	f.Add([]byte(`{"schema":"loadgate/result/v1","phases":[{"name":"p","workloads":[{"name":"w","failures":null}]}],"unusable":[],"scenario":{"thresholds":{}},"started_at":"2025-01-02T03:04:05.123+05:30"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := result.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		var first bytes.Buffer
		if err := r.Encode(&first); err != nil {
			t.Fatalf("Encode of a decoded result: %v", err)
		}
		r2, err := result.Decode(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("Decode of an encoded result: %v\n%s", err, first.Bytes())
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("Decode(Encode(r)) != r\n%s", first.Bytes())
		}
		var second bytes.Buffer
		if err := r2.Encode(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("encodings differ:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}

// FuzzDecodeHistogram: DecodeHistogram never panics on any bytes, and what
// it accepts re-encodes to an equal histogram.
func FuzzDecodeHistogram(f *testing.F) {
	h := result.NewHistogram()
	for v := int64(1); v < 100_000; v = v*3 + 1 {
		record(f, h, v)
	}
	for _, h := range []*hdrhistogram.Histogram{h, result.NewHistogram()} {
		raw, err := base64.StdEncoding.DecodeString(encode(f, h))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		h, err := result.DecodeHistogram(base64.StdEncoding.EncodeToString(raw))
		if err != nil {
			return
		}
		h2, err := result.DecodeHistogram(encode(t, h))
		if err != nil || !h2.Equals(h) {
			t.Fatalf("re-encoding: %v", err)
		}
		_ = result.Summarize(h)
	})
}
