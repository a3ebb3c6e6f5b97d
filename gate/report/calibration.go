package report

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

// CalibrationRounds are the gate sizes (rounds per side) whose smallest detectable slowdown
// Calibration prints.
var CalibrationRounds = []int{1, 4, 6, 10}

const calibrationPower = 0.8

// Calibration writes each series' log-ratio sd and the smallest slowdown a gate
// of R rounds detects at tol and conf (0: the defaults), power 80%.
func Calibration(w io.Writer, n *verdict.Noise, tol, conf float64) error {
	if tol == 0 {
		tol = verdict.DefaultTolerance
	}
	if conf == 0 {
		conf = verdict.DefaultConfidence
	}
	ew := &errWriter{w: w}
	ew.printf("calibration of %s (%s), %s A/A pairs, %s\n", n.Scenario, result.ShortHash(n.Hash), Count(int64(n.Pairs)), date(n.Date))
	ew.printf("smallest slowdown detected with power %s at tolerance %s, confidence %s:\n", Percent(calibrationPower), Percent(tol), Confidence(conf))
	ew.printf("%-28s %-6s %8s", "phase/workload", "metric", "sd")
	for _, r := range CalibrationRounds {
		ew.printf(" %9s", "R="+strconv.Itoa(r))
	}
	ew.printf("\n")
	for _, e := range n.Entries {
		ew.printf("%-28s %-6s %8s", e.Phase+"/"+e.Workload, e.Metric, LogSD(e.SD))
		for _, r := range CalibrationRounds {
			ew.printf(" %9s", SignedPercent(e.Detectable(r, tol, conf, calibrationPower)))
		}
		ew.printf("\n")
	}
	return ew.err
}

// LogSD formats a log-ratio sd: four decimals, "—" for NaN.
func LogSD(sd float64) string {
	if math.IsNaN(sd) {
		return dash
	}
	return strconv.FormatFloat(sd, 'f', 4, 64)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
