// Command gatequality is the analysis half of `make gate-quality`: it estimates
// a gate's false-regression, pass and detection rates by resampling the committed
// corpora's A/A rounds. Method and figures: bench/gate-quality.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/verdict"
)

type options struct {
	cfg                                    config
	corpora, pack, name, estimators, prof  string
	abOnly                                 bool
	shardsOut, shardNs, shardB, shardDelta string
	shardGates                             int
}

func parseFlags() options {
	var o options
	c := &o.cfg
	flag.StringVar(&c.corpus, "corpus", "", "a corpus collect.sh wrote (e.g. .bench/gatequality/corpus); \"\": every committed corpus under -corpora")
	flag.StringVar(&o.corpora, "corpora", "bench/gatequality/corpora", "the committed corpora (<name>/corpus.jsonl.gz and CONDITIONS.md)")
	flag.StringVar(&o.pack, "pack", "", "pack the corpus collect.sh wrote in this directory into -corpora/<-name>, and judge nothing")
	flag.StringVar(&o.name, "name", "", "the packed corpus's name (-pack), e.g. 2026-12-05")
	flag.StringVar(&o.estimators, "estimators", verdict.DefaultEstimator, "comma-separated estimators of the gate (verdict.Estimator*) judged side by side")
	flag.StringVar(&c.repo, "repo", ".", "the checkout holding the designs' scenario files")
	flag.StringVar(&c.out, "out", "bench/gate-quality.md", "the table, markdown (\"\" for stdout only)")
	flag.IntVar(&c.gates, "gates", 150, "resampled A/A gates per design and plan")
	flag.IntVar(&c.detectGates, "detect-gates", 30, "resampled gates per design, plan, workload and δ")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the resampling")
	flag.StringVar(&c.rounds, "rounds", "3,5,8,12", "fixed round counts to try beside --rounds auto (\"\": none)")
	flag.StringVar(&c.deltas, "deltas", "0.05,0.10,0.20,0.50", "the slowdowns δ made by scaling head's latencies by 1+δ")
	flag.DurationVar(&c.budget, "budget", 10*time.Minute, "the --rounds auto candidate's budget (the Action's default)")
	flag.IntVar(&c.maxRounds, "max-rounds", verdict.DefaultSeqMaxRounds, "the --rounds auto candidate's --max-rounds (the default of the CLI and the Action)")
	flag.StringVar(&c.spending, "spending", verdict.SpendOBF, "the --rounds auto candidate's alpha spending: "+verdict.SpendOBF+" (the gate's) or "+verdict.SpendPocock)
	flag.Float64Var(&c.tolerance, "tolerance", verdict.DefaultTolerance, "the gate's tolerance")
	flag.IntVar(&c.workers, "workers", runtime.GOMAXPROCS(0), "simulations in parallel")
	flag.StringVar(&c.only, "designs", "", "comma-separated designs to judge (default: all in the corpus)")
	flag.StringVar(&c.cache, "cache", ".bench/gatequality/cells", "where estimated cells are kept (\"\": none)")
	flag.StringVar(&c.ab, "ab", ".bench/gatequality/ab", "the real A/B gates ab.sh ran")
	flag.StringVar(&c.percentile, "percentile", "", "the judged percentile (default: the gate's, each workload's thresholds' percentiles, else p95)")
	flag.IntVar(&c.onSchedule, "on-schedule", 6, "also judge each design on its pairs whose generator kept its schedule, when at least this many (0: not)")
	flag.StringVar(&o.prof, "cpuprofile", "", "write a CPU profile to this `file`")
	flag.BoolVar(&o.abOnly, "ab-only", false, "rewrite only the real A/B gates' section of -out (the corpus's cells are not judged again)")
	flag.BoolVar(&c.symmetryOnly, "symmetry-only", false, "rewrite only the sides' symmetry section of -out (the corpus's cells are not judged again)")
	flag.StringVar(&o.shardsOut, "shards", "", "write the shards table (shards.go: N runners' rounds merged) to this file instead, e.g. bench/shards.md")
	flag.IntVar(&o.shardGates, "shard-gates", 40, "-shards: merged gates per cell")
	flag.StringVar(&o.shardNs, "shard-ns", "1,2,4", "-shards: the shard counts")
	flag.StringVar(&o.shardB, "shard-rounds", "4,6,10", "-shards: the rounds per shard (the same budget for every shard)")
	flag.StringVar(&o.shardDelta, "shard-deltas", "0.10,0.20", "-shards: the slowdowns δ")
	flag.Parse()
	c.workers = max(c.workers, 1)
	for _, e := range strings.Split(o.estimators, ",") {
		c.estimators = append(c.estimators, strings.TrimSpace(e))
	}
	return o
}

func main() {
	o := parseFlags()
	// Judging decodes many large short-lived histograms: default GC pacing collects more than it judges.
	debug.SetGCPercent(800)
	if o.prof != "" {
		f, err := os.Create(o.prof)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gatequality:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if code := o.run(); code != 0 {
		os.Exit(code)
	}
}

func (o options) run() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "gatequality:", err)
		return 1
	}
	switch {
	case o.pack != "":
		if o.name == "" || strings.ContainsAny(o.name, `/\`) {
			fmt.Fprintln(os.Stderr, "gatequality: -pack needs -name, a directory name such as 2026-12-05")
			return 2
		}
		if err := packCorpus(o.pack, filepath.Join(o.corpora, o.name)); err != nil {
			return fail(err)
		}
	case o.abOnly:
		if err := rewriteAB(o.cfg.out, o.cfg.ab); err != nil {
			return fail(err)
		}
	case o.cfg.spending != verdict.SpendOBF && o.cfg.spending != verdict.SpendPocock:
		fmt.Fprintf(os.Stderr, "gatequality: -spending %q: want %s or %s\n", o.cfg.spending, verdict.SpendOBF, verdict.SpendPocock)
		return 2
	case o.shardsOut != "":
		sc := shardConfig{gates: o.shardGates}
		var err error
		if sc.ns, err = ints(o.shardNs); err == nil {
			if sc.budgets, err = ints(o.shardB); err == nil {
				sc.deltas, err = floats(o.shardDelta)
			}
		}
		if err == nil {
			err = runShards(o.cfg, o.corpora, o.shardsOut, sc)
		}
		if err != nil {
			return fail(err)
		}
	default:
		if err := runAll(o.cfg, o.corpora); err != nil {
			return fail(err)
		}
	}
	return 0
}

func runAll(cfg config, corpora string) error {
	if cfg.corpus != "" {
		doc, err := run(cfg)
		if err != nil {
			return err
		}
		return write(cfg.out, doc)
	}
	dirs, err := committedCorpora(corpora)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return fmt.Errorf("no committed corpus under %s: collect one (bench/gatequality/collect.sh) and pack it (-pack)", corpora)
	}
	if cfg.symmetryOnly {
		return errors.New("-symmetry-only: name one corpus (-corpus)")
	}
	var doc strings.Builder
	for i, dir := range dirs {
		tmp, err := os.MkdirTemp("", "gatequality-corpus-")
		if err != nil {
			return err
		}
		c := cfg
		c.corpus, c.corpusName, c.out = tmp, filepath.Base(dir), ""
		err = unpackCorpus(dir, tmp)
		var part string
		if err == nil {
			part, err = run(c)
		}
		os.RemoveAll(tmp)
		if err != nil {
			return fmt.Errorf("corpus %s: %w", dir, err)
		}
		if i > 0 {
			part = part[strings.Index(part, "**How far the figures carry.**"):]
		}
		fmt.Fprintf(&doc, "%s\n", strings.Replace(part, "**How far the figures carry.**", "## Corpus "+c.corpusName+" ("+dir+")\n\n**How far the figures carry.**", 1))
	}
	return write(cfg.out, doc.String())
}

func write(out, doc string) error {
	fmt.Print(doc)
	if out == "" {
		return nil
	}
	if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gatequality: wrote %s\n", out)
	return nil
}

type config struct {
	corpus, repo, out, rounds, deltas, only, ab, percentile, cache string
	spending                                                       string // the auto plan's alpha spending
	gates, detectGates, maxRounds, workers, onSchedule             int
	seed                                                           uint64
	budget                                                         time.Duration
	tolerance                                                      float64
	symmetryOnly                                                   bool // -symmetry-only
	estimators                                                     []string
	corpusName                                                     string // the committed corpus judged ("": a collected one)
}

// row is one design × plan × estimator: its A/A cell and a detection cell per workload and δ.
type row struct {
	ds     *design
	p      plan
	est    string
	aa     cell
	detect map[condition]cell
}

func run(cfg config) (string, error) {
	designs, err := loadCorpus(cfg.corpus, cfg.repo)
	if err != nil {
		return "", err
	}
	if len(designs) == 0 {
		return "", fmt.Errorf("no kept chunk under %s: run bench/gatequality/collect.sh first", cfg.corpus)
	}
	designs = selectDesigns(cfg, designs)
	if cfg.symmetryOnly {
		return "", rewriteSymmetry(cfg.out, designs, verdict.CompareOptions{Tolerance: cfg.tolerance, Percentile: cfg.percentile})
	}
	plans, err := plansOf(cfg)
	if err != nil {
		return "", err
	}
	ds, err := floats(cfg.deltas)
	if err != nil {
		return "", fmt.Errorf("-deltas: %w", err)
	}
	opt := verdict.CompareOptions{Tolerance: cfg.tolerance, Percentile: cfg.percentile}
	ab, err := loadAB(cfg.ab)
	if err != nil {
		return "", err
	}
	if cfg.corpusName != "" {
		ab = nil // the A/B gates are the collecting machine's, not a committed corpus's
	}
	rows, jobs := jobsOf(designs, plans, cfg.estimators, ds)
	start := time.Now()
	if err := simulateAll(cfg, opt, jobs, start); err != nil {
		return "", err
	}
	var sb strings.Builder
	conditions, err := os.ReadFile(filepath.Join(cfg.corpus, "CONDITIONS.md"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	sb.WriteString(preamble(strings.TrimSpace(string(conditions))))
	if err := writeTable(&sb, cfg, opt, designs, rows, ds); err != nil {
		return "", err
	}
	writeAB(&sb, ab)
	fmt.Fprintf(os.Stderr, "gatequality: judged %s (%s)\n", cfg.corpus, time.Since(start).Round(time.Second))
	return sb.String(), nil
}

func selectDesigns(cfg config, designs []*design) []*design {
	if cfg.only != "" {
		keep := map[string]bool{}
		for _, n := range strings.Split(cfg.only, ",") {
			keep[strings.TrimSpace(n)] = true
		}
		var ds []*design
		for _, d := range designs {
			if keep[d.name] {
				ds = append(ds, d)
			}
		}
		designs = ds
	}
	if cfg.onSchedule > 0 {
		for _, d := range append([]*design(nil), designs...) {
			if q := d.onSchedule(cfg.onSchedule); q != nil {
				designs = append(designs, q)
			}
		}
	}
	return designs
}

func plansOf(cfg config) ([]plan, error) {
	var fixed []int
	if cfg.rounds != "" {
		var err error
		if fixed, err = ints(cfg.rounds); err != nil {
			return nil, fmt.Errorf("-rounds: %w", err)
		}
	}
	plans := []plan{}
	for _, r := range fixed {
		plans = append(plans, plan{Rounds: r, Budget: cfg.budget})
	}
	sp := cfg.spending
	if sp == verdict.SpendOBF {
		sp = "" // the cache keys the gate's own spending as ""
	}
	return append(plans, plan{Auto: true, Budget: cfg.budget, MaxRounds: cfg.maxRounds, Spending: sp}), nil
}

// job is one cell to simulate: a row's A/A cell or one condition's detection cell.
type job struct {
	r    *row
	cond condition
	seq  uint64
}

func jobsOf(designs []*design, plans []plan, estimators []string, deltas []float64) ([]*row, []job) {
	var rows []*row
	var jobs []job
	for _, d := range designs {
		for _, p := range plans {
			for _, e := range estimators {
				r := &row{ds: d, p: p, est: e, detect: map[condition]cell{}}
				rows = append(rows, r)
				// The stream leaves the estimator out: estimators judge the same gates.
				jobs = append(jobs, job{r: r, seq: stream(d.name, p, condition{})})
				for _, w := range d.workloads {
					for _, delta := range deltas {
						cond := condition{Workload: w, Delta: delta}
						jobs = append(jobs, job{r: r, cond: cond, seq: stream(d.name, p, cond)})
					}
				}
			}
		}
	}
	return rows, jobs
}

func simulateAll(cfg config, opt verdict.CompareOptions, jobs []job, start time.Time) error {
	cache := cellCache{dir: cfg.cache}
	var mu sync.Mutex
	var firstErr error
	inParallel(cfg.workers, jobs, 50, "", start, func(j job) {
		gates := cfg.gates
		if j.cond.Workload != "" {
			gates = cfg.detectGates
		}
		key := cache.key(j.r.ds, j.r.p, j.cond, gates, cfg.seed, cfg, j.r.est)
		if c, ok := cache.get(key); ok {
			mu.Lock()
			store(j.r, j.cond, c)
			mu.Unlock()
			return
		}
		hs, err := scaledHeads(j.r.ds, j.cond)
		if err != nil {
			mu.Lock()
			firstErr = err
			mu.Unlock()
			return
		}
		rng := rand.New(rand.NewPCG(cfg.seed, j.seq))
		o := opt
		o.Estimator = j.r.est
		c := simulate(j.r.ds, j.r.p, hs, gates, rng, o, j.cond.Workload == "")
		err = cache.put(key, c)
		mu.Lock()
		store(j.r, j.cond, c)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	})
	return firstErr
}

func inParallel[J any](workers int, jobs []J, every int, label string, start time.Time, do func(J)) {
	ch := make(chan J)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				do(j)
			}
		}()
	}
	for i, j := range jobs {
		ch <- j
		if i%every == every-1 {
			fmt.Fprintf(os.Stderr, "gatequality: %s%d of %d cells (%s)\n", label, i+1, len(jobs), time.Since(start).Round(time.Second))
		}
	}
	close(ch)
	wg.Wait()
}

// stream is a cell's own stream: it draws the same gates whatever else the table holds.
func stream(design string, p plan, cond condition) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%+v|%+v", design, p, cond)
	return h.Sum64()
}

func store(r *row, cond condition, c cell) {
	if cond.Workload == "" {
		r.aa = c
	} else {
		r.detect[cond] = c
	}
}

func pct(k, n int) string {
	if n == 0 {
		return "–"
	}
	return report.Percent(float64(k) / float64(n))
}

func (r *row) wall() time.Duration {
	n := r.aa.Gates - r.aa.Errors
	if n == 0 {
		return 0
	}
	mean := float64(r.aa.RoundsSum) / float64(n)
	return r.ds.setupDur + time.Duration(mean*float64(r.ds.pairDur))
}

func (r *row) detWall(c cell) time.Duration {
	n := c.Gates - c.Errors
	if n == 0 {
		return 0
	}
	return r.ds.setupDur + time.Duration(float64(c.RoundsSum)/float64(n)*float64(r.ds.pairDur))
}

func spendingNote(s string) string {
	if s == "" || s == verdict.SpendOBF {
		return ""
	}
	return fmt.Sprintf(", with %s-type alpha spending in place of the gate's %s (a candidate)", s, verdict.SpendOBF)
}

func writeTable(w io.Writer, cfg config, opt verdict.CompareOptions, designs []*design, rows []*row, deltas []float64) error {
	fmt.Fprintf(w, "## Operating characteristic (make gate-quality)\n\n")
	pctl := cfg.percentile
	if pctl == "" {
		pctl = "each workload's threshold percentiles, else p95 (the gate's default)"
	}
	fmt.Fprintf(w, "Resampled gates: %s per A/A cell, %s per detection cell (seed %d); tolerance %s; confidence %s; judged: %s; `--rounds auto --budget %s --max-rounds %d`%s. Run at %s.\n\n",
		report.Count(int64(cfg.gates)), report.Count(int64(cfg.detectGates)), cfg.seed, report.Percent(cfg.tolerance), report.Percent(verdict.DefaultConfidence), pctl, cfg.budget, cfg.maxRounds, spendingNote(cfg.spending),
		time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(w, "Corpus (real A/A rounds, both sides one commit, run as each design's flags run a gate: duet rounds both at once, else ABBA with the idle side paused):\n\n")
	for _, d := range designs {
		fmt.Fprintf(w, "- %s\n", d.describe())
	}
	fmt.Fprintln(w)
	if err := writeSymmetry(w, designs, opt); err != nil {
		return err
	}
	writeSummary(w, rows, deltas)
	fmt.Fprintf(w, "%s\n", perGateHead)
	fmt.Fprintf(w, "| design | rounds | estimator | false regression | decided (pass) | undecidable: a round behind schedule | threshold broken | rounds run (mean) | wall time (mean) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		n := r.aa.Gates - r.aa.Errors
		mean := "–"
		if n > 0 {
			mean = strconv.FormatFloat(float64(r.aa.RoundsSum)/float64(n), 'f', 1, 64)
		}
		fmt.Fprintf(w, "| %s | %s%s | %s | %s | %s | %s | %s | %s | %s |\n", r.ds.name, r.p, replacementMark(r.aa), r.est,
			pct(r.aa.AnyReg, n), pct(r.aa.AllPass, n), pct(r.aa.Untrusted, n), pct(r.aa.ThrFail, n), mean, r.wall().Round(time.Second))
	}
	fmt.Fprintf(w, "\n### Per workload\n\n")
	fmt.Fprintf(w, "Detected at +δ: a regression called on the workload with only its head latencies scaled by 1+δ. Wall time at +50%%: the mean gate's with that change.\n\n")
	fmt.Fprintf(w, "| design | rounds | estimator | workload | A/A false regression | A/A pass |")
	for _, d := range deltas {
		fmt.Fprintf(w, " detected +%s |", trimPct(d))
	}
	fmt.Fprintf(w, " wall time at +50%% |\n|---|---|---|---|---|---|")
	for range deltas {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|\n")
	for _, r := range rows {
		n := r.aa.Gates - r.aa.Errors
		for _, wl := range r.ds.workloads {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |", r.ds.name, r.p, r.est, wl, pct(r.aa.Reg[wl], n), pct(r.aa.Pass[wl], n))
			var last cell
			for _, d := range deltas {
				c := r.detect[condition{Workload: wl, Delta: d}]
				fmt.Fprintf(w, " %s |", pct(c.Reg[wl], c.Gates-c.Errors))
				last = c
			}
			fmt.Fprintf(w, " %s |\n", r.detWall(last).Round(time.Second))
		}
	}
	for _, r := range rows {
		if r.aa.Errors > 0 {
			fmt.Fprintf(w, "\n%s, %s rounds: %d of %d simulated gates not judged: %v\n", r.ds.name, r.p, r.aa.Errors, r.aa.Gates, r.aa.FirstErr)
		}
	}
	if len(rows) > 0 {
		fmt.Fprintf(w, "\nEach simulated gate is one of the corpus's %d real gates, judged as a unit (its rounds in a random order, never rounds of several gates together), as one pair of stack instances.\n", rows[0].aa.Units)
	}
	fmt.Fprintf(w, "\n† more rounds than a real gate holds: its rounds drawn with replacement (a round can appear twice; the estimate leans on few distinct rounds).\n")
	return nil
}

func writeSummary(w io.Writer, rows []*row, deltas []float64) {
	fmt.Fprintf(w, "### Estimators side by side\n\nCaught at δ: the mean over the workloads, each scaled alone, and (after /) the worst workload's rate.\n\n")
	fmt.Fprintf(w, "| design | rounds | estimator | A/A false regression | A/A decided (pass) |")
	for _, d := range deltas {
		fmt.Fprintf(w, " caught +%s |", trimPct(d))
	}
	fmt.Fprintf(w, " wall time A/A (mean) |\n|---|---|---|---|---|")
	for range deltas {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|\n")
	for _, r := range rows {
		n := r.aa.Gates - r.aa.Errors
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |", r.ds.name, r.p, r.est, pct(r.aa.AnyReg, n), pct(r.aa.AllPass, n))
		for _, d := range deltas {
			var sum, k int
			worst := -1.0
			for _, wl := range r.ds.workloads {
				c := r.detect[condition{Workload: wl, Delta: d}]
				m := c.Gates - c.Errors
				if m == 0 {
					continue
				}
				f := float64(c.Reg[wl]) / float64(m)
				if worst < 0 || f < worst {
					worst = f
				}
				sum += c.Reg[wl]
				k += m
			}
			if k == 0 {
				fmt.Fprintf(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %s / %s |", pct(sum, k), report.Percent(worst))
		}
		fmt.Fprintf(w, " %s |\n", r.wall().Round(time.Second))
	}
	fmt.Fprintln(w)
}

func replacementMark(c cell) string {
	if c.Replacement {
		return " †"
	}
	return ""
}

func trimPct(d float64) string { return strconv.FormatFloat(d*100, 'f', -1, 64) + "%" }

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q: want whole numbers ≥ 1", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || x <= 0 {
			return nil, fmt.Errorf("%q: want fractions > 0 (0.2 is 20%%)", f)
		}
		out = append(out, x)
	}
	return out, nil
}
