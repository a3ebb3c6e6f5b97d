package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
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

// A duet round's result (both engines in one loadgate process) states the
// generator's own figures of that process: its report names the row for
// what it is, both sides together; a one-side-at-a-time round's does not.
func TestDuetRoundNamesTheGeneratorRowForBothSides(t *testing.T) {
	for _, duet := range []bool{false, true} {
		r := base()
		r.Side, r.Round = "head", &result.Round{Number: 2, First: true, OtherPaused: true}
		if duet {
			r.Round = &result.Round{Number: 2, Mode: result.RoundDuet}
		}
		r.Stack = &result.Stack{Services: []result.Service{{Name: "api", CPUAvgPct: 41.27, CPUPeakPct: 187.5, MemPeakBytes: 48 << 20, Samples: 356}},
			Generator: &result.Service{Name: "loadgate (generator)", CPUAvgPct: 47.0, CPUPeakPct: 62.0, MemPeakBytes: 60 << 20, Samples: 356}}
		md, text, _ := render(t, r, verdict.Verdict{Value: verdict.Pass})
		for what, s := range map[string]string{"markdown": md, "text": text} {
			both := strings.Contains(s, report.DuetGeneratorRow)
			alone := strings.Contains(s, "loadgate (generator) ") || strings.Contains(s, "| loadgate (generator) |")
			if both != duet || alone == duet {
				t.Errorf("duet %v, %s: the generator row names both sides %v, names it alone %v:\n%s", duet, what, both, alone, s)
			}
		}
		if duet && !strings.Contains(md, "| "+report.DuetGeneratorRow+" | 47.0 | 62.0 | 60.0 | 356 |") {
			t.Errorf("markdown row of the duet's generator:\n%s", md)
		}
	}
}

// A duet round behind its schedule on both sides is left out of the
// verdict; the report says which, pools (and draws) the other rounds, and
// verdict.json lists it in left_out_rounds.
func TestDuetLeftOutRoundIsNamedAndNotPooled(t *testing.T) {
	duet := func(base, head []*result.Result) {
		for i := range base {
			for _, r := range []*result.Result{base[i], head[i]} {
				r.Round = &result.Round{Number: i + 1, Mode: result.RoundDuet}
				r.StartedAt = base[i].StartedAt
			}
		}
	}
	gr := gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm, func(base, head []*result.Result) {
		duet(base, head)
		behindSchedule(t, base[2])
		behindSchedule(t, head[2])
	})
	gr.Rounds = len(calm)
	if got := gr.Verdict.LeftOut; len(got) != 1 || got[0] != 3 {
		t.Fatalf("the premise: round 3 left out, got %v", got)
	}
	var md, js bytes.Buffer
	if err := report.CompareMarkdown(&md, gr); err != nil {
		t.Fatal(err)
	}
	if err := report.CompareJSON(&js, gr); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	if !strings.Contains(s, "pooled over 4 of 5 rounds (round 3 left out) per side") || !strings.Contains(s, "duet round 3 left out") {
		t.Errorf("markdown does not name the left-out round:\n%s", s)
	}
	// The charts' n is the four rounds' (the table's n), not five.
	c := gr.Verdict.Workloads[0].Comparisons[0]
	if want := "n=" + report.Count(c.HeadN); !strings.Contains(s, "second line head "+want) {
		t.Errorf("the chart does not pool the rounds judged (want %s):\n%s", want, s)
	}
	// The comment's table of each round's change heads the rounds judged.
	var cm bytes.Buffer
	if err := report.CompareSummary(&cm, gr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.String(), "| round 1 | round 2 | round 4 | round 5 |") {
		t.Errorf("the comment's round table does not skip round 3:\n%s", cm.String())
	}
	if !strings.Contains(js.String(), "\"left_out_rounds\": [\n    3\n  ]") {
		t.Errorf("verdict.json has no left_out_rounds [3]:\n%s", js.String())
	}
}
