package report_test

import (
	"os"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

// A calibration as `loadgate calibrate` prints it: the noisier entry (an
// sd of 0.08 against 0.02) needs more rounds to detect the same slowdown.
func ExampleCalibration() {
	n := &verdict.Noise{
		Scenario: "demo-api",
		Hash:     "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Date:     time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC),
		Pairs:    10,
		Entries: []verdict.NoiseEntry{
			{Phase: "sustain", Workload: "api_read", Metric: "p95", SD: 0.02, DF: 9, Successes: 24000},
			{Phase: "sustain", Workload: "ingest", Metric: "p95", SD: 0.08, DF: 9, Successes: 6000},
		},
	}
	if err := report.Calibration(os.Stdout, n, 0.05, 0.95); err != nil {
		panic(err)
	}
	// Output:
	// calibration of demo-api (sha256:9f86d081884c), 10 A/A pairs, 2026-11-30 09:15:00 UTC
	// smallest slowdown detected with power 80% at tolerance 5%, confidence 95%:
	// phase/workload               metric       sd       R=1       R=4       R=6      R=10
	// sustain/api_read             p95      0.0200    +11.7%     +9.3%     +8.0%     +7.1%
	// sustain/ingest               p95      0.0800    +34.6%    +23.3%    +17.4%    +13.6%
}
