package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/session"
	"github.com/loadgate/loadgate/gate/soak"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/outfile"
)

// writeFiles renders files into dir; a file not written is session.Unusable.
func writeFiles(dir string, files []namedRender) error {
	for _, f := range files {
		if err := outfile.Write(filepath.Join(dir, f.name), f.render); err != nil {
			return session.Unusable(err)
		}
	}
	return nil
}

type namedRender struct {
	name   string
	render func(io.Writer) error
}

// WriteRun writes a run's result.json, report.md and verdict.json to out, its text to stdout.
func WriteRun(out string, res *result.Result, v verdict.Verdict, stdout, log io.Writer) error {
	if err := res.WriteFile(filepath.Join(out, "result.json")); err != nil {
		return session.Unusable(err)
	}
	if err := writeFiles(out, []namedRender{
		{"report.md", func(w io.Writer) error { return Markdown(w, res, v) }},
		{"verdict.json", func(w io.Writer) error { return JSON(w, v) }},
	}); err != nil {
		return err
	}
	if err := Text(stdout, res, v); err != nil {
		return err
	}
	if st := res.Stack; st != nil && st.UpS > 0 { // a stack this run brought up
		fmt.Fprintf(log, "loadgate: start to first request %s; last request to clean teardown %s\n", seconds(st.UpS), seconds(st.TeardownS))
	}
	fmt.Fprintf(log, "loadgate: results in %s (result.json, report.md, verdict.json, snapshots.jsonl)\n", out)
	return nil
}

// WriteStep writes a sweep step's result.json and report.md to dir.
func WriteStep(dir string, res *result.Result, v verdict.Verdict) error {
	if err := res.WriteFile(filepath.Join(dir, "result.json")); err != nil {
		return err
	}
	return outfile.Write(filepath.Join(dir, "report.md"), func(w io.Writer) error { return Markdown(w, res, v) })
}

// WriteGate writes the gate's files to out and its text to stdout; it returns comment.md.
func WriteGate(out string, gr rounds.Outcome, stdout, log io.Writer) ([]byte, error) {
	var md, comment bytes.Buffer
	if err := CompareMarkdown(&md, gr); err != nil {
		return nil, err
	}
	if err := CompareSummary(&comment, gr); err != nil {
		return nil, err
	}
	if err := writeFiles(out, []namedRender{
		{"report.md", func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }},
		{"comment.md", func(w io.Writer) error { _, err := w.Write(comment.Bytes()); return err }},
		{"verdict.json", func(w io.Writer) error { return CompareJSON(w, gr) }},
		{"latency.svg", func(w io.Writer) error { return ComparePlotSVG(w, gr) }},
	}); err != nil {
		return nil, err
	}
	if err := CompareText(stdout, gr); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "loadgate: gate results in %s (report.md, comment.md, verdict.json, latency.svg, per-side rounds)\n", out)
	return comment.Bytes(), nil
}

// WriteSweep writes sweep.json, sweep.svg and sweep.md to out, its text to stdout.
func WriteSweep(out string, sw *sweep.Sweep, stdout, log io.Writer) error {
	if err := sw.WriteFile(filepath.Join(out, "sweep.json")); err != nil {
		return session.Unusable(err)
	}
	if err := writeFiles(out, []namedRender{
		{"sweep.svg", func(w io.Writer) error { return SweepPlotSVG(w, sw) }},
		{"sweep.md", func(w io.Writer) error { return SweepMarkdown(w, sw, "sweep.svg") }},
	}); err != nil {
		return err
	}
	if err := SweepText(stdout, sw); err != nil {
		return err
	}
	fmt.Fprintf(log, "loadgate: sweep results in %s (sweep.json, sweep.md, sweep.svg, steps/)\n", out)
	return nil
}

// WriteSoak writes the soak's files to out, its text to stdout; code is its exit code.
func WriteSoak(out string, sres *soak.Result, res *result.Result, code int, stdout, log io.Writer) error {
	if err := res.WriteFile(filepath.Join(out, "result.json")); err != nil {
		return session.Unusable(err)
	}
	if err := writeFiles(out, []namedRender{
		{"soak.json", sres.Encode},
		{"soak.md", func(w io.Writer) error { return SoakMarkdown(w, sres, res, code) }},
		{"soak.svg", func(w io.Writer) error { return SoakSVG(w, sres) }},
	}); err != nil {
		return err
	}
	if err := SoakText(stdout, sres); err != nil {
		return err
	}
	fmt.Fprintf(log, "loadgate: results in %s (soak.md, soak.svg, soak.json, result.json, stats.jsonl, snapshots.jsonl)\n", out)
	return nil
}

// SweepOutcome is nil for a complete, usable sweep, else the unusable error.
func SweepOutcome(out string, sw *sweep.Sweep) error {
	if sw.Interrupted {
		return session.Unusablef("sweep: interrupted after %d of %d step(s); what was measured is kept in %s", len(sw.Steps), len(sw.Rates), out)
	}
	for _, s := range sw.Steps {
		if !s.Usable {
			return session.Unusablef("sweep: step %d (%s req/s) is unusable: %s", s.Number, Rate(s.Rate), strings.Join(s.Unusable, "; "))
		}
	}
	return nil
}

// SweepDeps are a sweep's words on log and its steps' files (WriteStep).
func SweepDeps(plan sweep.Plan, log io.Writer) sweep.Deps {
	return sweep.Deps{
		Starting: func(k, n int, rate float64) {
			fmt.Fprintf(log, "loadgate: sweep step %d of %d: %s req/s for %s (warm-up %s)\n", k, n, Rate(rate), plan.Step, plan.Warmup)
		},
		Measured: func(dir string, st sweep.Step, res *result.Result, v verdict.Verdict) error {
			if err := WriteStep(dir, res, v); err != nil {
				return err
			}
			fmt.Fprintf(log, "loadgate: sweep step %d of %d: %s\n", st.Number, len(plan.Rates), SweepStepLine(st))
			return nil
		},
		Warn: Warner(log),
	}
}
