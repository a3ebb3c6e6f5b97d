package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// Issue 45: a re-run continues the earlier attempt's rounds, and the
// comment says so beside its answer, not folded away.
func TestContinuedGateSaysSoInTheAnswer(t *testing.T) {
	g := duetFixture(t, shape{sustain: 1.31, recover: 1.02, apiFail: 12, ingestOK: 400}, calm, nil)
	g.Notes = append(g.Notes, verdict.Note{Code: verdict.NoteContinued, Rounds: 4, HeadRounds: 8, Attempts: 1})
	var b bytes.Buffer
	if err := report.CompareSummary(&b, g); err != nil {
		t.Fatal(err)
	}
	head, rest, _ := strings.Cut(b.String(), "<details>")
	want := "re-run: this gate continued the 4 paired round(s) of 1 earlier attempt(s) (same base, head, scenario and policy) as the first looks of one sequential test, 8 round(s) in all: a re-run adds looks, it does not start afresh."
	if !strings.Contains(head, want) {
		t.Errorf("the answer lacks %q:\n%s", want, head)
	}
	if strings.Contains(rest, "re-run: this gate continued") {
		t.Error("the folded notes repeat it")
	}
}
