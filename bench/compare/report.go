package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

type report struct {
	Start, End      time.Time
	Interrupted     bool
	Server          *server
	ServerMode      string
	ServerCPU       string
	GenCPU          string
	Crit            criterion
	JudgeRate       int
	Workers         int
	Timeout         time.Duration
	MaxInFlight     int
	Dur, SearchDur  time.Duration
	VegetaVersion   string
	LoadgateVersion string
	Tools           []generator
	Runs            []run
	MaxHeld         map[string]int
	SearchNote      map[string]string
}

// Targets from the issue.
const (
	targetLatenessP99MS = 1.0 // loadgate lateness p99 at the judge rate
	targetCPURatio      = 0.8 // loadgate CPU/req ÷ vegeta's at the judge rate, at most
	targetMaxHeldRatio  = 1.2 // loadgate highest held ÷ vegeta's, at least
)

func (rep *report) markdown() string {
	var sb strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }

	host, _ := os.Hostname()
	p("# loadgate vs vegeta — loopback open-loop benchmark\n\n")
	if rep.Interrupted {
		p("**Interrupted: incomplete.**\n\n")
	}
	p("- date: %s (took %s)\n", rep.Start.UTC().Format(time.RFC3339), rep.End.Sub(rep.Start).Round(time.Second))
	p("- machine: %s, %s, %d cores, kernel %s, %s %s/%s\n", host, cpuModel(), onlineCPUs(), kernel(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	p("- topology: server (bench/server, %s mode) pinned to core %s (affinity read back: %s); each generator pinned to core %s with taskset, one at a time; the orchestrator shares core %s with the server and sleeps in wait4 while a generator runs\n",
		rep.ServerMode, rep.ServerCPU, rep.Server.CPUs, rep.GenCPU, rep.ServerCPU)
	p("- target: http://%s/ (loopback, HTTP/1.1 keep-alive, 200 \"ok\")\n", rep.Server.Addr)
	p("- vegeta %s (built from the Go module proxy): `attack -rate=R/1s -duration=D -workers=%d -max-workers=%d -timeout=%s`, results written as gob to a file by the attack (part of its measured cost); decoded with `vegeta encode --to csv` after the attack process exited (not counted)\n",
		orUnknown(rep.VegetaVersion), rep.Workers, rep.Workers, rep.Timeout)
	p("- loadgate %s: `loadgate run --scenario S --target URL --out DIR --load-cpus %s --progress never` (under taskset too), one constant phase, one GET workload, no warm-up, timeout %s, max_in_flight %d\n",
		orUnknown(rep.LoadgateVersion), rep.GenCPU, rep.Timeout, rep.MaxInFlight)
	p("- CPU µs/req = (user + system CPU of the generator process, from wait4 rusage) ÷ requests sent and answered; peak RSS = ru_maxrss. Both include process start-up and, for loadgate, writing result.json\n")
	p("- lateness = send time − due time. loadgate: its own `lateness_ms` (HdrHistogram, 3 significant digits). vegeta: computed here from each hit's Seq and Timestamp, due = start + Seq/rate with start = min over hits of (Timestamp − Seq/rate) (the least-late hit is 0 late; this can only understate vegeta's lateness); percentiles nearest-rank over every hit\n")
	p("- held rate: vegeta = successes ÷ (last completion − start); loadgate = its completions inside the phase window per second (`throughput.completed_per_s`), capped at successes ÷ the phase's seconds\n")
	p("- **held** means: successes ≥ %.0f%% of rate × duration AND lateness p99 ≤ %g ms\n", 100*rep.Crit.MinSuccess, rep.Crit.MaxLatenessMS)
	p("- server CPU %% = the server's CPU (from /proc) over the generator's wall time; near 100%% means the server, not the generator, was the limit\n")
	p("- conns = connections the server accepted during the run; the server also counts the requests it answered, and a note says so when that differs from the tool's own count\n")
	p("- other CPU %% = CPU used on cores %s and %s by anything but the server and the generator during the run (from /proc/stat, percent of one core); above %d%% the run is flagged *contended* in the notes and its figures are not to be trusted\n\n", rep.ServerCPU, rep.GenCPU, contendedPct)

	p("## Fixed rates (%s each)\n\n", rep.Dur)
	rep.table(&sb, "fixed")
	p("\n## Highest held rate (search: %s runs, stepping up then bisecting)\n\n", rep.SearchDur)
	p("| tool | highest held rate /s | search |\n| --- | ---: | --- |\n")
	for _, g := range rep.Tools {
		best, ok := rep.MaxHeld[g.name]
		v := "not measured"
		if ok && rep.measured(g.name) {
			v = fmt.Sprint(best)
		}
		p("| %s | %s | %s %s |\n", g.name, v, rep.searchTrail(g.name), rep.SearchNote[g.name])
	}
	p("\n")
	rep.table(&sb, "search")

	p("\n## Targets\n\n| target | value | status |\n| --- | --- | --- |\n")
	lg, lgOK := rep.find("loadgate", rep.JudgeRate)
	vg, vgOK := rep.find("vegeta", rep.JudgeRate)
	if lgOK {
		p("| loadgate lateness p99 at %d/s ≤ %g ms | %s ms (n=%d) | %s |\n", rep.JudgeRate, targetLatenessP99MS,
			ms(lg.LatenessP99), lg.LatenessN, metIf(lg.LatenessN > 0 && lg.LatenessP99 <= targetLatenessP99MS))
	} else {
		p("| loadgate lateness p99 at %d/s ≤ %g ms | not measured | NOT met |\n", rep.JudgeRate, targetLatenessP99MS)
	}
	if lgOK && vgOK && lg.Sent > 0 && vg.Sent > 0 {
		ratio := lg.CPUPerReq() / vg.CPUPerReq()
		p("| CPU per request at %d/s, loadgate ÷ vegeta ≤ %g | %.2f (%.2f ÷ %.2f µs) | %s |\n", rep.JudgeRate, targetCPURatio,
			ratio, lg.CPUPerReq(), vg.CPUPerReq(), metIf(ratio <= targetCPURatio))
	} else {
		p("| CPU per request at %d/s, loadgate ÷ vegeta ≤ %g | not measured | NOT met |\n", rep.JudgeRate, targetCPURatio)
	}
	lgMax, vgMax := rep.MaxHeld["loadgate"], rep.MaxHeld["vegeta"]
	if rep.measured("loadgate") && rep.measured("vegeta") && vgMax > 0 {
		ratio := float64(lgMax) / float64(vgMax)
		p("| highest held rate, loadgate ÷ vegeta ≥ %g | %.2f (%d ÷ %d /s) | %s |\n", targetMaxHeldRatio, ratio, lgMax, vgMax, metIf(ratio >= targetMaxHeldRatio))
	} else {
		p("| highest held rate, loadgate ÷ vegeta ≥ %g | not measured | NOT met |\n", targetMaxHeldRatio)
	}

	contended := 0
	for _, r := range rep.Runs {
		if r.Skipped == "" && r.OtherCPUPct() > contendedPct {
			contended++
		}
	}
	if contended > 0 {
		p("\n**%d of %d runs were contended** (other processes used more than %d%% of a core on the benchmark's cores): their figures, and any target judged on them, are not to be trusted; rerun on a quiet machine.\n",
			contended, len(rep.Runs), contendedPct)
	}

	var notes []string
	for _, r := range rep.Runs {
		if r.Skipped != "" {
			notes = append(notes, fmt.Sprintf("%s %d/s %s: not measured: %s", r.Tool, r.Rate, r.Stage, r.Skipped))
		}
		for _, n := range r.Note {
			notes = append(notes, fmt.Sprintf("%s %d/s %s: %s", r.Tool, r.Rate, r.Stage, n))
		}
	}
	if len(notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range notes {
			p("- %s\n", n)
		}
	}
	p("\nNot measured: the server's latency distribution as the client sees it (each tool reports its own); " +
		"CPU the kernel spends in softirq for loopback traffic is charged to whichever task is running and may land on either side. " +
		"Single runs, no repetitions: differences of a few percent are within run-to-run noise.\n")
	return sb.String()
}

func (rep *report) table(sb *strings.Builder, stage string) {
	fmt.Fprintf(sb, "| tool | target rate /s | held rate /s | CPU µs/req | lateness p50 ms | lateness p99 ms | lateness n | peak RSS MiB | errors | server CPU %% | other CPU %% | conns | held |\n")
	fmt.Fprintf(sb, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rep.Runs {
		if r.Stage != stage {
			continue
		}
		if r.Skipped != "" {
			fmt.Fprintf(sb, "| %s | %d | not measured | | | | | | | | | | no |\n", r.Tool, r.Rate)
			continue
		}
		held := "yes"
		if !r.Held {
			held = "no: " + r.Why
		}
		fmt.Fprintf(sb, "| %s | %d | %.0f | %.2f | %s | %s | %d | %.1f | %d | %.0f | %.0f | %d | %s |\n",
			r.Tool, r.Rate, r.HeldRate, r.CPUPerReq(), ms(r.LatenessP50), ms(r.LatenessP99), r.LatenessN,
			float64(r.MaxRSS)/(1<<20), r.Errors, r.ServerCPUPct(), r.OtherCPUPct(), r.Conns, held)
	}
}

// find returns the fixed-stage run of tool at rate.
func (rep *report) find(tool string, rate int) (run, bool) {
	for _, r := range rep.Runs {
		if r.Tool == tool && r.Rate == rate && r.Stage == "fixed" && r.Skipped == "" {
			return r, true
		}
	}
	return run{}, false
}

// measured reports whether any run of tool was measured.
func (rep *report) measured(tool string) bool {
	for _, r := range rep.Runs {
		if r.Tool == tool && r.Skipped == "" {
			return true
		}
	}
	return false
}

func (rep *report) searchTrail(tool string) string {
	var parts []string
	for _, r := range rep.Runs {
		if r.Tool != tool || r.Stage != "search" {
			continue
		}
		mark := "✓"
		if !r.Held {
			mark = "✗"
		}
		parts = append(parts, fmt.Sprintf("%d%s", r.Rate, mark))
	}
	if len(parts) == 0 {
		return "no search runs"
	}
	return strings.Join(parts, " ")
}

func metIf(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 1000:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

func pct(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// onlineCPUs counts the machine's CPUs (runtime.NumCPU counts only the
// orchestrator's own affinity, one core).
func onlineCPUs() int {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "cpu") && len(l) > 3 && l[3] >= '0' && l[3] <= '9' {
			n++
		}
	}
	return n
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// moduleVersion reads the version of module mod built into a Go binary.
func moduleVersion(bin, mod string) string {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && (f[0] == "mod" || f[0] == "dep") && f[1] == mod {
			return f[2]
		}
	}
	return ""
}
