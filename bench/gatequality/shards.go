package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
)

type shardCell struct {
	n, perShard         int
	aaGates, aaReg      int
	power               map[float64][]float64 // δ → per workload, the share called a regression
	seqStops            []int                 // δ = the largest: per-shard rounds at the first decided look
	seqGates, seqDecide int
}

type shardConfig struct {
	ns, budgets []int
	deltas      []float64
	gates       int
}

// runShards writes to out the gain of shards on each corpus, each gate standing in for a runner.
func runShards(cfg config, corpora, out string, sc shardConfig) error {
	dirs, err := committedCorpora(corpora)
	if err != nil {
		return err
	}
	var doc strings.Builder
	fmt.Fprintf(&doc, "# Shards: N runners' rounds merged into one gate\n\n")
	fmt.Fprintf(&doc, "Made by `go run ./bench/gatequality -shards bench/shards.md -shard-gates %d -shard-deltas %s -seed %d` (bench/gatequality/shards.go).\n\n",
		sc.gates, joinFloats(sc.deltas), cfg.seed)
	doc.WriteString(`**Method.** Each gate (chunk) of a committed corpus stands in for one runner: a shard's rounds are
drawn (without replacement) from one chunk only, N shards from N distinct chunks, and their paired
rounds are pooled as ` + "`loadgate merge`" + ` pools them (renumbered in turn) and judged by ` + "`verdict.Compare`" + `,
the comparisons of the merge's ` + "`verdict.Gate`" + `. Every shard has the same budget of rounds, so N shards
take one shard's wall time: the set-up, the rounds and the teardown margins, at the corpus's
median paired round. A change is head's latencies of one workload × (1+δ), one workload at a time
(as in bench/gate-quality.md); power is the share of merged gates that call that workload a
regression. The tolerance is the gate's 10%: a regression is called only when the interval lies
above +10%, so a true +10% change is (by design) almost never called one; +20% and +30% are the
changes to detect. The sequential column looks at the pooled rounds after every 2 rounds of each
shard (` + "`verdict.Sequential`" + `, the first look at 4 pooled rounds or more): what shards would need if
the merge could stop them. loadgate's shards run their budget and the merge looks once.

`)
	for _, dir := range dirs {
		tmp, err := os.MkdirTemp("", "gatequality-corpus-")
		if err != nil {
			return err
		}
		err = unpackCorpus(dir, tmp)
		var designs []*design
		if err == nil {
			designs, err = loadCorpus(tmp, cfg.repo)
		}
		os.RemoveAll(tmp)
		if err != nil {
			return fmt.Errorf("corpus %s: %w", dir, err)
		}
		for _, ds := range designs {
			part, err := shardsOf(cfg, ds, sc, filepath.Base(dir))
			if err != nil {
				return err
			}
			doc.WriteString(part)
		}
	}
	return write(out, doc.String())
}

func runners(ds *design) [][]int {
	by := map[string][]int{}
	var names []string
	for i, p := range ds.pairs {
		if _, ok := by[p.chunk]; !ok {
			names = append(names, p.chunk)
		}
		by[p.chunk] = append(by[p.chunk], i)
	}
	sort.Strings(names)
	out := make([][]int, 0, len(names))
	for _, n := range names {
		idx := by[n]
		sort.Slice(idx, func(a, b int) bool { return ds.pairs[idx[a]].round < ds.pairs[idx[b]].round })
		out = append(out, idx)
	}
	return out
}

func draw(rng *rand.Rand, rs [][]int, n, perShard int) [][]int {
	pick := rng.Perm(len(rs))[:n]
	shards := make([][]int, n)
	for s, r := range pick {
		idx := slices.Clone(rs[r])
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		shards[s] = idx[:perShard]
	}
	return shards
}

// pooled is the merged gate's rounds, interleaved by round and renumbered as merge does.
func pooled(ds *design, heads []*result.Result, shards [][]int, perShard int) (base, head []*result.Result) {
	for k := 0; k < perShard; k++ {
		for _, s := range shards {
			i := s[k]
			b, h := clone(ds.pairs[i].base), clone(heads[i])
			for _, r := range []*result.Result{b, h} {
				if r.Round != nil {
					rd := *r.Round
					rd.Number = len(base) + 1
					r.Round = &rd
				}
			}
			base, head = append(base, b), append(head, h)
		}
	}
	return base, head
}

func shardsOf(cfg config, ds *design, sc shardConfig, corpus string) (string, error) {
	rs := runners(ds)
	opt := verdict.CompareOptions{Tolerance: cfg.tolerance, Percentile: cfg.percentile}
	conds, heads, err := shardHeads(ds, sc.deltas)
	if err != nil {
		return "", err
	}
	cells, jobs := shardJobs(sc, rs, conds)
	sim := shardSim{ds: ds, rs: rs, heads: heads, opt: opt, gates: sc.gates, seed: cfg.seed, bigD: seqDelta(sc.deltas)}
	var mu sync.Mutex
	inParallel(cfg.workers, jobs, 10, "shards: ", time.Now(), func(j shardJob) {
		reg, stops, decided := sim.judge(j)
		mu.Lock()
		j.cell.add(j.cond, sc.gates, reg, stops, decided, sim.bigD)
		mu.Unlock()
	})
	bias, err := runnerBias(ds, rs, heads, sc, cfg.seed, opt)
	if err != nil {
		return "", err
	}
	return shardTable(ds, cells, sc, corpus, rs) + bias, nil
}

func shardHeads(ds *design, deltas []float64) ([]condition, map[condition][]*result.Result, error) {
	heads := map[condition][]*result.Result{}
	conds := []condition{{}}
	for _, d := range deltas {
		for _, w := range ds.workloads {
			conds = append(conds, condition{Workload: w, Delta: d})
		}
	}
	for _, c := range conds {
		h, err := scaledHeads(ds, c)
		if err != nil {
			return nil, nil, err
		}
		heads[c] = h
	}
	return conds, heads, nil
}

type shardJob struct {
	cell *shardCell
	cond condition
}

func shardJobs(sc shardConfig, rs [][]int, conds []condition) ([]*shardCell, []shardJob) {
	var cells []*shardCell
	var jobs []shardJob
	for _, n := range sc.ns {
		if n > len(rs) {
			continue
		}
		for _, b := range sc.budgets {
			if b > minLen(rs) {
				continue
			}
			c := &shardCell{n: n, perShard: b, power: map[float64][]float64{}}
			cells = append(cells, c)
			for _, cond := range conds {
				jobs = append(jobs, shardJob{c, cond})
			}
		}
	}
	return cells, jobs
}

type shardSim struct {
	ds    *design
	rs    [][]int
	heads map[condition][]*result.Result
	opt   verdict.CompareOptions
	gates int
	seed  uint64
	bigD  float64 // the δ whose sequential stops are counted
}

// judge draws and judges j's gates: regressions called and, at δ = bigD, sequential stops.
func (sim shardSim) judge(j shardJob) (reg int, stops []int, decided int) {
	c := j.cell
	rng := rand.New(rand.NewPCG(sim.seed, uint64(c.n*1000+c.perShard)))
	stops = []int{}
	for range sim.gates {
		shards := draw(rng, sim.rs, c.n, c.perShard)
		base, head := pooled(sim.ds, sim.heads[j.cond], shards, c.perShard)
		v, err := verdict.Compare(base, head, sim.opt)
		if err != nil {
			continue
		}
		o := classify(v, len(head), nil)
		if j.cond.Workload == "" && o.anyReg || j.cond.Workload != "" && o.regression[j.cond.Workload] {
			reg++
		}
		if j.cond.Workload != "" && j.cond.Delta == sim.bigD {
			if k, ok := seqStop(sim.ds, sim.heads[j.cond], shards, c.n, c.perShard, sim.opt); ok {
				stops, decided = append(stops, k), decided+1
			}
		}
	}
	return reg, stops, decided
}

func (c *shardCell) add(cond condition, gates, reg int, stops []int, decided int, bigD float64) {
	if cond.Workload == "" {
		c.aaGates, c.aaReg = gates, reg
		return
	}
	c.power[cond.Delta] = append(c.power[cond.Delta], float64(reg)/float64(gates))
	if cond.Delta == bigD {
		c.seqStops = append(c.seqStops, stops...)
		c.seqGates += gates
		c.seqDecide += decided
	}
}

// runnerBias re-judges 2-shard gates with one shard 30% faster, to show
// whether a faster runner changes any comparison.
func runnerBias(ds *design, rs [][]int, heads map[condition][]*result.Result, sc shardConfig, seed uint64, opt verdict.CompareOptions) (string, error) {
	const n, f = 2, 0.7
	per := min(10, minLen(rs))
	if len(rs) < n {
		return "", nil
	}
	d := sc.deltas[0]
	rng := rand.New(rand.NewPCG(seed, 7))
	gates, same, cmps := 0, 0, 0
	worst := 0.0
	for _, w := range ds.workloads {
		hs := heads[condition{Workload: w, Delta: d}]
		for range max(sc.gates/len(ds.workloads), 4) {
			shards := draw(rng, rs, n, per)
			base, head := pooled(ds, hs, shards, per)
			v1, err := verdict.Compare(base, head, opt)
			if err != nil {
				return "", err
			}
			// Pooled round k of shard 1 is at index k·n+1: that runner is faster.
			for k := 0; k < per; k++ {
				i := k*n + 1
				if base[i], err = scaledAll(ds, base[i], f); err != nil {
					return "", err
				}
				if head[i], err = scaledAll(ds, head[i], f); err != nil {
					return "", err
				}
			}
			v2, err := verdict.Compare(base, head, opt)
			if err != nil {
				return "", err
			}
			gates++
			ok, lat, moved := sameValues(v1, v2)
			cmps, worst = cmps+lat, max(worst, moved)
			if ok {
				same++
			}
		}
	}
	return fmt.Sprintf("**A runner 30%% faster** (2 shards × %d rounds, head +%.0f%% on one workload, one shard's rounds × %.1f): all comparisons kept their value in %s; "+
		"an estimate moved at most %.2f%% (%d latency comparisons).\n\n",
		per, d*100, f, share(same, gates), 100*worst, cmps), nil
}

func scaledAll(ds *design, r *result.Result, f float64) (*result.Result, error) {
	var err error
	for _, w := range ds.workloads {
		if r, err = scaled(r, w, f); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func sameValues(v1, v2 verdict.Verdict) (same bool, latency int, moved float64) {
	a, b := comparisonsOf(v1), comparisonsOf(v2)
	same = len(a) == len(b)
	for k, c := range a {
		if c.Metric == verdict.MetricErrorRate {
			continue
		}
		latency++
		e, found := b[k]
		if !found || e.Value != c.Value {
			same = false
			continue
		}
		if c.Ratio > 0 {
			moved = max(moved, abs(e.Ratio/c.Ratio-1))
		}
	}
	return same, latency, moved
}

func comparisonsOf(v verdict.Verdict) map[string]verdict.Comparison {
	out := map[string]verdict.Comparison{}
	for _, wv := range v.Workloads {
		for _, c := range wv.Comparisons {
			out[c.Phase+"/"+c.Workload+"/"+c.Metric] = c
		}
	}
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// seqStop is the per-shard rounds at the first deciding look (one every 2 per shard);
// false: none decided.
func seqStop(ds *design, heads []*result.Result, shards [][]int, n, perShard int, opt verdict.CompareOptions) (int, bool) {
	first := 2
	for first*n < verdict.DefaultSeqMinRounds {
		first += 2
	}
	if first > perShard {
		return 0, false
	}
	base, head := pooled(ds, heads, shards, perShard)
	plan := verdict.SeqPlan{MaxRounds: n * perShard, MinRounds: n * first, Step: 2 * n}
	for k := first; k <= perShard; k += 2 {
		plan.Final = k+2 > perShard
		v, err := verdict.Sequential(base[:n*k], head[:n*k], opt, plan)
		if err != nil {
			return 0, false
		}
		if v.Sequential.Decided() {
			return k, v.Sequential.Stop != verdict.StopMaxRounds && v.Sequential.Stop != verdict.StopBudget && v.Sequential.Stop != verdict.StopUntrusted
		}
	}
	return perShard, false
}

func seqDelta(ds []float64) float64 {
	if slices.Contains(ds, 0.20) {
		return 0.20
	}
	return slices.Max(ds)
}

func joinFloats(fs []float64) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%.2f", f)
	}
	return strings.Join(out, ",")
}

func minLen(rs [][]int) int {
	m := len(rs[0])
	for _, r := range rs {
		m = min(m, len(r))
	}
	return m
}

func shardTable(ds *design, cells []*shardCell, sc shardConfig, corpus string, rs [][]int) string {
	var b strings.Builder
	sizes := make([]string, len(rs))
	for i, r := range rs {
		sizes[i] = fmt.Sprint(len(r))
	}
	fmt.Fprintf(&b, "## Corpus %s, design %s\n\n", corpus, ds.name)
	fmt.Fprintf(&b, "%d runners' stand-ins (its gates, one after the other on one machine: %s rounds), a paired round %s, set-up %s (medians). %d merged gates per cell, %d workloads.\n\n",
		len(rs), strings.Join(sizes, ", "), ds.pairDur.Round(100*time.Millisecond), ds.upDur.Round(time.Second), sc.gates, len(ds.workloads))
	head := "| shards | rounds per shard | pooled rounds | wall per shard | A/A false regression |"
	sep := "| --: | --: | --: | --: | --: |"
	for _, d := range sc.deltas {
		head += fmt.Sprintf(" power at +%.0f%% (mean; min–max of workloads) |", d*100)
		sep += " --: |"
	}
	head += fmt.Sprintf(" sequential looks at +%.0f%%: decided, per-shard rounds to the decision (median of those decided) |", seqDelta(sc.deltas)*100)
	sep += " --: |"
	b.WriteString(head + "\n" + sep + "\n")
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].perShard != cells[j].perShard {
			return cells[i].perShard < cells[j].perShard
		}
		return cells[i].n < cells[j].n
	})
	for _, c := range cells {
		wall := ds.upDur + time.Duration(c.perShard)*ds.pairDur + 2*teardownMargin
		fmt.Fprintf(&b, "| %d | %d | %d | ≈ %s | %s |", c.n, c.perShard, c.n*c.perShard, wall.Round(10*time.Second), share(c.aaReg, c.aaGates))
		for _, d := range sc.deltas {
			ps := c.power[d]
			if len(ps) == 0 {
				b.WriteString(" — |")
				continue
			}
			m := 0.0
			for _, p := range ps {
				m += p
			}
			fmt.Fprintf(&b, " %.0f%% (%.0f–%.0f%%) |", 100*m/float64(len(ps)), 100*slices.Min(ps), 100*slices.Max(ps))
		}
		med := "—"
		if len(c.seqStops) > 0 {
			s := slices.Clone(c.seqStops)
			slices.Sort(s)
			med = fmt.Sprint(s[len(s)/2])
		}
		fmt.Fprintf(&b, " %s, %s |\n", share(c.seqDecide, c.seqGates), med)
	}
	b.WriteString("\n")
	return b.String()
}

func share(k, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(k)/float64(n), k, n)
}
