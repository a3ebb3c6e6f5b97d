package strictjson_test

import (
	"strings"
	"testing"

	"github.com/loadgate/loadgate/internal/strictjson"
)

func TestDecode(t *testing.T) {
	var v struct{ A int }
	for in, want := range map[string]string{
		`{"A":1}`:         "",
		`{"A":1,"B":2}`:   "unknown field",
		`{"A":1} {"A":2}`: "data after",
		`{"A":"` + strings.Repeat("x", 64) + `"}`: "larger than",
	} {
		err := strictjson.Decode(strings.NewReader(in), 32, &v)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%.20q: %v, want %q", in, err, want)
		}
	}
}
