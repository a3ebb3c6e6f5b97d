package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
)

// A duet gate's rounds (both sides at the same instants, result.RoundDuet)
// are worded as such in every report: no ABBA order, no pausing claimed.
func TestDuetRoundsAreWorded(t *testing.T) {
	gr := gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm[:3], func(base, head []*result.Result) {
		for i := range base {
			for _, r := range []*result.Result{base[i], head[i]} {
				r.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
				r.StartedAt = base[i].StartedAt // one common schedule start
			}
		}
	})
	gr.Rounds = 3
	var md, txt, js bytes.Buffer
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	if err := report.CompareText(&txt, gr); err != nil {
		t.Fatal(err)
	}
	if err := report.CompareJSON(&js, gr); err != nil {
		t.Fatal(err)
	}
	if s := md.String(); !strings.Contains(s, "duet: both sides ran at the same instants") || !strings.Contains(s, "3 paired, duet") ||
		strings.Contains(s, "ABBA") || strings.Contains(s, "was paused") || strings.Contains(s, "order not recorded") {
		t.Errorf("markdown does not word the duet:\n%s", s)
	}
	if s := txt.String(); !strings.Contains(s, "3 rounds, duet") {
		t.Errorf("text header:\n%s", s)
	}
	if s := js.String(); !strings.Contains(s, `"order": "duet"`) || !strings.Contains(s, `"paused": false`) {
		t.Errorf("verdict.json:\n%s", s)
	}
	// One round not a duet: the rounds are not called one.
	gr.Base.Results[1].Round = &result.Round{Number: 2, First: true, OtherPaused: true}
	md.Reset()
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "duet") {
		t.Errorf("mixed rounds called a duet:\n%s", md.String())
	}
}
