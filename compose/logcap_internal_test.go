package compose

import (
	"bytes"
	"strings"
	"testing"
)

// Regression: every line of every container's log went into the results
// artifact, uncapped, with a ${SECRET} the service logged in clear.
func TestSavedLogIsScrubbedAndCapped(t *testing.T) {
	var out bytes.Buffer
	w := newLogScrub(&out, []string{"s3cr3t-token", "ab"}, 100)
	w.Write([]byte("GET /x Authorization: Bearer s3cr3t-"))
	w.Write([]byte("token\nabc\n"))
	for range 10 {
		w.Write([]byte("0123456789\n"))
	}
	w.Write([]byte("tail without newline s3cr3t-token"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Contains(got, "s3cr3t-token") {
		t.Errorf("secret in the log:\n%s", got)
	}
	if !strings.Contains(got, "Bearer ***\n") || !strings.Contains(got, "abc\n") {
		t.Errorf("scrubbed wrongly (a value under 3 characters is kept):\n%s", got)
	}
	if !strings.HasSuffix(got, "[loadgate: log cut at 0 MiB]\n") || len(got) > 140 {
		t.Errorf("not cut at 100 bytes (%d):\n%s", len(got), got)
	}
}
