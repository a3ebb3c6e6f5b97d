package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// R1 M3: a calibration rejected for duet results is worded as such (not
// as "measured on another …"), naming the duet result and what stands in.
func TestNoiseNoteDuetRejection(t *testing.T) {
	v := verdict.Verdict{Tolerance: 0.1, Confidence: 0.95,
		Noise: &verdict.NoiseUse{Source: verdict.NoiseDefault, SD: 0.3, Pairs: 10, Date: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
			Rejected: verdict.NoiseDuet, Here: verdict.NoiseSetting{Side: "base", Round: 1}}}
	got := report.NoiseNote(v)
	for _, want := range []string{"(10 pairs) is not used", "it ran one side at a time", "but base round 1 ran in a duet", "The default bound stands in where the rounds fall short (log-sd 0.3)"} {
		if !strings.Contains(got, want) {
			t.Errorf("noise note %q: want %q", got, want)
		}
	}
	if strings.Contains(got, "measured on") {
		t.Errorf("noise note %q words a duet as another setting", got)
	}
}
