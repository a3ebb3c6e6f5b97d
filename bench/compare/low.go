package main

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"time"
)

// The low rates gates run at (issue 51): each rate in each scheduling mode, for each tool,
// with late share, lateness p50/p99/max and CPU per request.

// lateAfterMS is when a send counts as late: loadgate's default late_after; vegeta's hits
// are counted against the same bound.
const lateAfterMS = 1.0

// lowModes parses -low-modes ("rt,normal"); rt where chrt -r 1 is refused is dropped, and said.
func (b *bench) lowModes(ctx context.Context, s string) (modes []string, note string, err error) {
	for _, m := range strings.Split(s, ",") {
		switch m = strings.TrimSpace(m); m {
		case "":
		case "rt":
			if out, err := exec.CommandContext(ctx, "chrt", "-r", "1", "true").CombinedOutput(); err != nil {
				note = fmt.Sprintf("rt mode not run: SCHED_RR 1 is not permitted here (chrt -r 1: %v %s)", err, strings.TrimSpace(string(out)))
				continue
			}
			modes = append(modes, m)
		case "normal":
			modes = append(modes, m)
		default:
			return nil, "", fmt.Errorf("-low-modes: %q: want rt or normal", m)
		}
	}
	return modes, note, nil
}

// lowRates runs every low rate in every mode for each tool, alternating who goes first, each
// once; b.rt follows the mode and is restored.
func (b *bench) lowRates(ctx context.Context, rep *report, gens []generator, modes []string, rates []int, dur time.Duration) {
	rt, retries := b.rt, b.retries
	defer func() { b.rt, b.retries = rt, retries }()
	b.retries = 0 // within the budget every row is measured once; the notes flag a contended one
	i := 0
	for _, mode := range modes {
		b.rt = mode == "rt"
		for _, rate := range rates {
			for j := range gens {
				if ctx.Err() != nil {
					return
				}
				g := gens[(i+j)%len(gens)]
				if time.Until(b.deadline) < dur+5*time.Second {
					rep.Runs = append(rep.Runs, run{Tool: g.name, Stage: "low", Mode: mode, Rate: rate, Duration: dur,
						Skipped: "not run: the low rates' time budget (-low-budget) was spent"})
					continue
				}
				r := b.measure(ctx, g, "low", rate, dur)
				r.Mode = mode
				rep.Runs = append(rep.Runs, r)
			}
			i++
		}
	}
}

// LateShare is the share of sent requests more than lateAfterMS late (NaN: unknown).
func (r *run) LateShare() float64 {
	if r.LatenessN <= 0 || r.Late < 0 {
		return math.NaN()
	}
	return float64(r.Late) / float64(r.LatenessN)
}

func (rep *report) lowSection(sb *strings.Builder) {
	var some bool
	for _, r := range rep.Runs {
		some = some || r.Stage == "low"
	}
	if !some {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	p("\n## Low rates (%s each, both scheduling modes)\n\n", rep.LowDur)
	p("The rates gates run at. rt: both tools `SCHED_RR 1` (loadgate `--load-priority rt`, vegeta under `chrt -r 1`); "+
		"normal: both `SCHED_OTHER` (loadgate `--load-priority normal`). Late: sent more than %g ms after its due time. "+
		"Early-wake spin: the CPU loadgate spent awake before due times after waking early by the wake-up delay it measured "+
		"(result.json `wait.spun_seconds`), in %% of its core over the run; it is part of CPU µs/req.\n\n", lateAfterMS)
	if rep.LowNote != "" {
		p("%s\n\n", rep.LowNote)
	}
	p("| mode | rate /s | tool | sent | late share | lateness p50 ms | lateness p99 ms | lateness max ms | CPU µs/req | early-wake spin %% of a core | margin ms | other CPU %% | contended |\n")
	p("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rep.Runs {
		if r.Stage != "low" {
			continue
		}
		if r.Skipped != "" {
			p("| %s | %d | %s | not measured | | | | | | | | | %s |\n", r.Mode, r.Rate, r.Tool, cell(r.Skipped))
			continue
		}
		spin, margin := "–", "–"
		if r.SpunS >= 0 && r.Wall > 0 {
			spin = fmt.Sprintf("%.2f", 100*r.SpunS/r.Wall.Seconds())
			margin = fmt.Sprintf("%.3f", r.MarginMS)
		}
		contended := ""
		if r.ContendedPct() > contendedPct {
			contended = "yes (notes)"
		}
		p("| %s | %d | %s | %d | %s | %s | %s | %s | %.1f | %s | %s | %.0f | %s |\n",
			r.Mode, r.Rate, r.Tool, r.Sent, sharePct(r.LateShare()), ms(r.LatenessP50), ms(r.LatenessP99), ms(r.LatenessMax),
			r.CPUPerReq(), spin, margin, r.OtherCPUPct(), contended)
	}
}

// sharePct formats a share as a percent with three decimals ("–": unknown).
func sharePct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.3f%%", 100*v)
}

// cell makes s fit a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }
