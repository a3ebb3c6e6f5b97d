package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
)

type report struct {
	Start, End      time.Time
	Interrupted     bool
	Server          *server
	ServerMode      string
	ServerCPU       string
	GenCPU          string
	Crit            criterion
	JudgeRate       int   // high rate of the CPU and context-switch targets
	LowRate         int   // low rate of the CPU and context-switch targets
	LatenessRates   []int // rates of the lateness target
	Workers         int
	Retries         int // -retries: attempts after the first
	Timeout         time.Duration
	MaxInFlight     int
	Dur, SearchDur  time.Duration
	VegetaVersion   string
	LoadgateVersion string
	Tools           []generator
	Runs            []run
	MaxHeld         map[string]int
	SearchNote      map[string]string
	RT              bool   // both generators ran SCHED_RR 1
	LgOld           bool   // the loadgate binary predates --load-priority
	SchedNote       string // why not, when it was asked for
	// Startup is each tool's voluntary context switches in a run of one request.
	Startup map[string]int64
	LowDur  time.Duration // each low-rate run's duration
	LowNote string        // why a low-rate mode was not run
	OnlyLow bool          // -only-low: the low rates alone
}

// Targets from the issue (15).
const (
	targetLatenessP99MS = 0.1 // loadgate lateness p99 at each of LatenessRates, ms
	targetCPURatioHigh  = 0.8 // loadgate CPU/req ÷ vegeta's at JudgeRate, at most
	targetCPURatioLow   = 1.0 // loadgate CPU/req ÷ vegeta's at LowRate, at most
	targetMaxHeldRatio  = 2.0 // loadgate highest held ÷ vegeta's, at least
	targetVcsLow        = 1.0 // loadgate voluntary context switches per request at LowRate, at most
	// targetVcsHigh reads "well under 1" per request at JudgeRate as at most a half.
	targetVcsHigh = 0.5
)

type target struct {
	What, Value string
	Met         bool // false also when not measured
}

// targets judges the targets; "not measured" is never met.
func (rep *report) targets() []target {
	var ts []target
	add := func(what string, ok bool, value string, met bool) {
		if !ok {
			value, met = "not measured", false
		}
		ts = append(ts, target{what, value, met})
	}
	for _, rate := range rep.LatenessRates {
		lg, ok := rep.find("loadgate", rate)
		ok = ok && lg.LatenessN > 0
		add(fmt.Sprintf("loadgate lateness p99 at %d/s ≤ %g ms", rate, targetLatenessP99MS), ok,
			fmt.Sprintf("%s ms (p50 %s, n=%d)", ms(lg.LatenessP99), ms(lg.LatenessP50), lg.LatenessN), lg.LatenessP99 <= targetLatenessP99MS)
	}
	for _, c := range []struct {
		rate  int
		ratio float64
	}{{rep.LowRate, targetCPURatioLow}, {rep.JudgeRate, targetCPURatioHigh}} {
		lg, lgOK := rep.find("loadgate", c.rate)
		vg, vgOK := rep.find("vegeta", c.rate)
		ok := lgOK && vgOK && lg.Sent > 0 && vg.Sent > 0
		ratio := lg.CPUPerReq() / vg.CPUPerReq()
		add(fmt.Sprintf("CPU per request at %d/s, loadgate ÷ vegeta ≤ %g", c.rate, c.ratio), ok,
			fmt.Sprintf("%.2f (%.2f ÷ %.2f µs)", ratio, lg.CPUPerReq(), vg.CPUPerReq()), ratio <= c.ratio)
	}
	lgMax, vgMax := rep.MaxHeld["loadgate"], rep.MaxHeld["vegeta"]
	ratio := float64(lgMax) / float64(vgMax)
	add(fmt.Sprintf("highest held rate, loadgate ÷ vegeta ≥ %g", targetMaxHeldRatio),
		rep.measured("loadgate") && rep.measured("vegeta") && vgMax > 0,
		fmt.Sprintf("%.2f (%d ÷ %d /s)", ratio, lgMax, vgMax), ratio >= targetMaxHeldRatio)
	for _, c := range []struct {
		rate int
		max  float64
		what string
	}{{rep.LowRate, targetVcsLow, "≤ %g"}, {rep.JudgeRate, targetVcsHigh, "well under 1 (≤ %g)"}} {
		lg, ok := rep.find("loadgate", c.rate)
		ok = ok && lg.Sent > 0
		value := fmt.Sprintf("%.2f (%d for %d requests; involuntary %.2f)", lg.VcsPerReq(), lg.Nvcsw, lg.Sent, lg.IvcsPerReq())
		if vg, vok := rep.find("vegeta", c.rate); vok && vg.Sent > 0 {
			value += fmt.Sprintf("; vegeta %.2f", vg.VcsPerReq())
		}
		if s, sok := rep.Startup["loadgate"]; sok && ok {
			value += fmt.Sprintf("; a run of one request makes %d (the process's start and exit): %.3f a request beyond them", s, float64(lg.Nvcsw-s)/float64(lg.Sent))
		}
		add(fmt.Sprintf("loadgate voluntary context switches per request at %d/s "+c.what, c.rate, c.max), ok, value, lg.VcsPerReq() <= c.max)
	}
	return ts
}

func (rep *report) markdown() string {
	var sb strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&sb, format, args...) }

	rep.method(&sb)
	if !rep.OnlyLow {
		p("## Fixed rates (%s each)\n\n", rep.Dur)
		rep.table(&sb, "fixed")
		rep.searchSection(&sb)
		p("\n## The target's side: bench/server's CPU under each tool (fixed rates)\n\n")
		rep.serverTable(&sb)
		p("\n%s\n", serverExplanation)
	}
	rep.lowSection(&sb)
	if !rep.OnlyLow {
		rep.targetsSection(&sb)
	}
	rep.notesSection(&sb)
	p("\nNot measured: the server's latency as the client sees it; loopback softirq CPU may land on either side. " +
		"Single runs, no repetitions: differences of a few percent are within run-to-run noise.\n")
	return sb.String()
}

func (rep *report) method(sb *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	host, _ := os.Hostname()
	p("# loadgate vs vegeta — loopback open-loop benchmark\n\n")
	if rep.Interrupted {
		p("**Interrupted: incomplete.**\n\n")
	}
	p("- date: %s (took %s)\n", rep.Start.UTC().Format(time.RFC3339), rep.End.Sub(rep.Start).Round(time.Second))
	p("- machine: %s, %s, %d cores, kernel %s, %s %s/%s\n", host, cpuModel(), onlineCPUs(), kernel(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	p("- idle cores: %s — how an idle core waits shapes what a wake-up costs and how late it comes\n", cpuIdle("/sys"))
	p("- topology: server (bench/server, %s mode) on core %s (read back: %s); each generator on core %s (taskset), one at a time; "+
		"the orchestrator sleeps in wait4 on core %s\n",
		rep.ServerMode, rep.ServerCPU, rep.Server.CPUs, rep.GenCPU, rep.ServerCPU)
	lgHow, lgFlag := "loadgate with `--load-priority rt` (every thread raised for its load)", " --load-priority rt"
	switch {
	case rep.LgOld && rep.RT:
		lgHow, lgFlag = "loadgate too (this binary predates `--load-priority`)", ""
	case rep.LgOld:
		lgFlag = ""
	case !rep.RT:
		lgFlag = " --load-priority normal"
	}
	switch {
	case rep.RT:
		p("- scheduling: both generators SCHED_RR 1 (vegeta under `chrt -r 1`, %s), read back from /proc while each ran; "+
			"only the kernel's real-time threads and the host can then delay them\n", lgHow)
	case rep.SchedNote != "":
		p("- scheduling: %s\n", rep.SchedNote)
	default:
		p("- scheduling: both generators SCHED_OTHER (`-priority normal`)\n")
	}
	p("- target: http://%s/ (loopback, HTTP/1.1 keep-alive, 200 \"ok\")\n", rep.Server.Addr)
	p("- vegeta %s: `attack -rate=R/1s -duration=D -workers=%d -max-workers=%d -timeout=%s`; "+
		"writing its gob results is part of its measured cost, decoding them afterwards is not\n",
		orUnknown(rep.VegetaVersion), rep.Workers, rep.Workers, rep.Timeout)
	p("- loadgate %s: `loadgate run --scenario S --target URL --out DIR --load-cpus %s --progress never%s`, "+
		"one constant GET phase, no warm-up, timeout %s, max_in_flight %d\n",
		orUnknown(rep.LoadgateVersion), rep.GenCPU, lgFlag, rep.Timeout, rep.MaxInFlight)
	p("- CPU µs/req = the generator's user + system CPU (all threads, wait4 rusage) ÷ requests sent and answered; peak RSS = ru_maxrss. " +
		"Both include process start-up and, for loadgate, writing result.json\n")
	p("- vol. / invol. cs/req = the generator's voluntary (a thread slept) and involuntary (preempted) context switches, all threads, ÷ requests sent and answered. "+
		"They include the process's start and exit, measured alone by a run of one request%s\n", startupText(rep.Startup))
	p("- lateness = send time − due time, ms: loadgate's own `lateness_ms` (HdrHistogram); vegeta's from each hit's Seq and Timestamp, " +
		"taking the least-late hit as 0 late (which can only understate it). Percentiles are nearest-rank\n")
	p("- held rate: vegeta = successes ÷ (last completion − start); loadgate = `throughput.completed_per_s`, at most successes ÷ the phase's seconds\n")
	p("- **held** means: successes ≥ %.0f%% of rate × duration AND lateness p99 ≤ %g ms\n", 100*rep.Crit.MinSuccess, rep.Crit.MaxLatenessMS)
	p("- server CPU %% = the server's own getrusage (else /proc) over the generator's wall time, percent of one core; near 100%% the server was the limit\n")
	p("- conns = connections the server accepted during the run; a note says when the requests it answered differ from the tool's count\n")
	p("- other CPU %% = CPU others used on cores %s and %s; steal %% = time the hypervisor gave them to another guest (/proc/stat, percent of one core). "+
		"Past %d%% together, the run is flagged *contended* in the notes and its figures are not to be trusted\n\n", rep.ServerCPU, rep.GenCPU, contendedPct)
}

func (rep *report) searchSection(sb *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	p("\n## Highest held rate (search: %s runs, stepping up then bisecting)\n\n", rep.SearchDur)
	if rep.Retries > 0 {
		p("A step not held is run again up to %d more time(s) (`-retries`), for every tool alike: at its limit one stall decides a %s step. "+
			"The step is held when any attempt was.\n\n", rep.Retries, rep.SearchDur)
	}
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
	rep.table(sb, "search")
}

func (rep *report) targetsSection(sb *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	p("\n## Targets\n\n| target | value | status |\n| --- | --- | --- |\n")
	met := 0
	ts := rep.targets()
	for _, t := range ts {
		p("| %s | %s | %s |\n", t.What, t.Value, metIf(t.Met))
		if t.Met {
			met++
		}
	}
	p("\n%d of %d targets met.\n", met, len(ts))
}

func (rep *report) notesSection(sb *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(sb, format, args...) }
	contended := 0
	for _, r := range rep.Runs {
		if r.Skipped == "" && r.ContendedPct() > contendedPct {
			contended++
		}
	}
	if contended > 0 {
		p("\n**%d of %d runs were contended** (other processes and steal took over %d%% of a core): their figures are not to be trusted; rerun on a quiet machine.\n",
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
}

func (rep *report) table(sb *strings.Builder, stage string) {
	fmt.Fprintf(sb, "| tool | target rate /s | held rate /s | CPU µs/req | user µs/req | sys µs/req | vol. cs/req | invol. cs/req | lateness p50 ms | lateness p99 ms | lateness n | peak RSS MiB | errors | server CPU %% | other CPU %% | steal %% | conns | held |\n")
	fmt.Fprintf(sb, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rep.Runs {
		if r.Stage != stage {
			continue
		}
		if r.Skipped != "" {
			fmt.Fprintf(sb, "| %s | %d | not measured | | | | | | | | | | | | | | | no |\n", r.Tool, r.Rate)
			continue
		}
		held := "yes"
		if !r.Held {
			held = "no: " + r.Why
		}
		fmt.Fprintf(sb, "| %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s | %d | %.1f | %d | %.0f | %.0f | %.0f | %d | %s |\n",
			r.Tool, r.Rate, r.HeldRate, r.CPUPerReq(), r.UserPerReq(), r.SysPerReq(), r.VcsPerReq(), r.IvcsPerReq(),
			ms(r.LatenessP50), ms(r.LatenessP99), r.LatenessN,
			float64(r.MaxRSS)/(1<<20), r.Errors, r.ServerCPUPct(), r.OtherCPUPct(), r.StealPct(), r.Conns, held)
	}
}

func (rep *report) serverTable(sb *strings.Builder) {
	fmt.Fprintf(sb, "| tool | target rate /s | server CPU µs/req | server CPU %% of a core | server vol. cs/req | server invol. cs/req | server CPU ÷ vegeta's |\n")
	fmt.Fprintf(sb, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rep.Runs {
		if r.Stage != "fixed" || r.Skipped != "" {
			continue
		}
		vs := "–"
		if vg, ok := rep.find("vegeta", r.Rate); ok && r.Tool != "vegeta" {
			vs = fmt.Sprintf("%.2f", r.ServerCPUPerReq()/vg.ServerCPUPerReq())
		}
		cs := func(v float64) string {
			if math.IsNaN(v) {
				return "–"
			}
			return fmt.Sprintf("%.2f", v)
		}
		fmt.Fprintf(sb, "| %s | %d | %.2f | %.0f | %s | %s | %s |\n", r.Tool, r.Rate, r.ServerCPUPerReq(), r.ServerCPUPct(),
			cs(r.ServerVcsPerReq()), cs(r.perReqIf(r.ServerNivcsw)), vs)
	}
}

const serverExplanation = `The server's CPU and context switches come from its own getrusage (` + "`GET /__bench/stats`" + ` before and after each run; else /proc ticks), ÷ the requests answered. ` +
	`It costs more per request under loadgate at low rates because each request comes at its own due time and wakes an idle server, ` +
	`while vegeta's pacer releases requests in bursts that share a wake-up: a property of the load, not of either tool (bench/README.md).`

func (r *run) perReqIf(v int64) float64 {
	if v < 0 {
		return math.NaN()
	}
	return r.perReq(float64(v))
}

func (rep *report) find(tool string, rate int) (run, bool) {
	for _, r := range rep.Runs {
		if r.Tool == tool && r.Rate == rate && r.Stage == "fixed" && r.Skipped == "" {
			return r, true
		}
	}
	return run{}, false
}

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
	if m := (procstat.Reader{}).CPUModel(); m != "" {
		return m
	}
	return "unknown CPU"
}

// onlineCPUs counts the machine's CPUs (runtime.NumCPU: only this process's affinity).
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

func cpuIdle(sys string) string {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(sys, p))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	driver := read("devices/system/cpu/cpuidle/current_driver")
	gov := read("devices/system/cpu/cpuidle/current_governor_ro")
	if gov == "" {
		gov = read("devices/system/cpu/cpuidle/current_governor")
	}
	var parts []string
	if driver != "" {
		parts = append(parts, "cpuidle driver "+driver)
	}
	if gov != "" {
		parts = append(parts, "governor "+gov)
	}
	if ns := read("module/haltpoll/parameters/guest_halt_poll_ns"); ns != "" {
		parts = append(parts, "guest_halt_poll_ns "+ns)
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, ", ")
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

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

func startupText(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, name := range []string{"loadgate", "vegeta"} {
		if n, ok := m[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	return ": " + strings.Join(parts, ", ")
}
