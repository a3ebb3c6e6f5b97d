// Package strictjson decodes the JSON files loadgate reads back (stored
// baselines, noise, history entries): bounded in size, no unknown field,
// nothing after the value.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode reads at most maxBytes from r into v.
func Decode(r io.Reader, maxBytes int64, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return err
	}
	if int64(len(b)) > maxBytes {
		return fmt.Errorf("larger than %d bytes", maxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the object")
	}
	return nil
}
