package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/scenario"
)

type pair struct {
	base, head *result.Result
	chunk      string // the gate it came from (chunk-<k>)
	round      int
}

// design is one candidate design's corpus: every kept round collect.sh ran with its scenario.
type design struct {
	name     string
	scenario string // repository-relative, as the gate was given it
	pairs    []pair
	// Medians over the chunks (a pair, the rest of a gate, the time to round 1) and rounds.RoundEstimate.
	pairDur, setupDur time.Duration
	upDur             time.Duration
	estimate          time.Duration
	workloads         []string // in the scenario's order
	chunks            int
	untrusted         int // results whose generator fell behind its schedule
	// Gates that exited 3 (unusable), and their pairs left out.
	unusableGates, unusablePairs int
}

type done struct {
	Design   string `json:"design"`
	Scenario string `json:"scenario"`
	Rounds   int    `json:"rounds"`
	Exit     int    `json:"exit"`
	WallS    int    `json:"wall_s"`
	Started  int64  `json:"started,omitempty"` // Unix seconds; 0: the DONE file's time less WallS
}

func loadCorpus(dir, repo string) ([]*design, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*", "chunk-*", "DONE"))
	if err != nil {
		return nil, err
	}
	byName := map[string]*design{}
	timings := map[string][]chunkTiming{}
	for _, doneFile := range names {
		name, t, err := readChunk(doneFile, byName)
		if err != nil {
			return nil, err
		}
		timings[name] = append(timings[name], t)
	}
	var out []*design
	for _, ds := range byName {
		if err := ds.settle(timings[ds.name], repo); err != nil {
			return nil, err
		}
		out = append(out, ds)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

type chunkTiming struct {
	pair, setup, up time.Duration
	unusable        bool
}

func readChunk(doneFile string, byName map[string]*design) (string, chunkTiming, error) {
	b, err := os.ReadFile(doneFile)
	if err != nil {
		return "", chunkTiming{}, err
	}
	var d done
	if err := json.Unmarshal(b, &d); err != nil {
		return "", chunkTiming{}, fmt.Errorf("%s: %w", doneFile, err)
	}
	chunkDir := filepath.Dir(doneFile)
	ds := byName[d.Design]
	if ds == nil {
		ds = &design{name: d.Design, scenario: d.Scenario}
		byName[d.Design] = ds
	}
	if ds.scenario != d.Scenario {
		return "", chunkTiming{}, fmt.Errorf("%s: design %s ran %s here, %s elsewhere", doneFile, d.Design, d.Scenario, ds.scenario)
	}
	ds.chunks++
	var first, last time.Time
	if d.Exit == 3 {
		ds.unusableGates++
	}
	for i := 1; i <= d.Rounds; i++ {
		p, usable, err := readPair(chunkDir, i, d.Exit, &first, &last)
		if err != nil {
			return "", chunkTiming{}, err
		}
		if !usable {
			ds.unusablePairs++
			continue
		}
		for _, r := range []*result.Result{p.base, p.head} {
			if r.GeneratorBehind() != nil {
				ds.untrusted++
			}
		}
		ds.pairs = append(ds.pairs, p)
	}

	per := last.Sub(first) / time.Duration(d.Rounds)
	start := time.Unix(d.Started, 0)
	if d.Started == 0 {
		if fi, err := os.Stat(doneFile); err == nil {
			start = fi.ModTime().Add(-time.Duration(d.WallS) * time.Second)
		}
	}
	return d.Design, chunkTiming{pair: per, setup: time.Duration(d.WallS)*time.Second - time.Duration(d.Rounds)*per,
		up: first.Sub(start), unusable: d.Exit == 3}, nil
}

func readPair(chunkDir string, i, exit int, first, last *time.Time) (p pair, usable bool, err error) {
	p = pair{chunk: filepath.Base(chunkDir), round: i}
	usable = true
	for _, side := range []string{"base", "head"} {
		r, err := result.ReadFile(filepath.Join(chunkDir, side, fmt.Sprintf("round-%d", i), "result.json"))
		if err != nil && exit == 3 && errors.Is(err, fs.ErrNotExist) {
			usable = false // the gate stopped before this round
			continue
		}
		if err != nil {
			return p, false, err
		}
		if !r.Usable {
			usable = false
			continue
		}
		if first.IsZero() || r.StartedAt.Before(*first) {
			*first = r.StartedAt
		}
		if r.FinishedAt.After(*last) {
			*last = r.FinishedAt
		}
		if side == "base" {
			p.base = r
		} else {
			p.head = r
		}
	}
	return p, usable, nil
}

func (ds *design) settle(timings []chunkTiming, repo string) error {
	var pairs, setups, ups, upairs, usetups, uups []time.Duration
	for _, t := range timings {
		if t.unusable {
			upairs, usetups, uups = append(upairs, t.pair), append(usetups, t.setup), append(uups, t.up)
		} else {
			pairs, setups, ups = append(pairs, t.pair), append(setups, t.setup), append(ups, t.up)
		}
	}
	if len(pairs) == 0 {
		pairs, setups, ups = upairs, usetups, uups
	}
	ds.pairDur, ds.setupDur, ds.upDur = median(pairs), median(setups), median(ups)
	sc, err := scenario.Load(filepath.Join(repo, ds.scenario), scenario.Options{})
	if err != nil {
		return fmt.Errorf("design %s: %w", ds.name, err)
	}
	if len(ds.pairs) > 0 && ds.pairs[0].base.Scenario.Hash != sc.Hash {
		return fmt.Errorf("design %s: %s has hash %s, the corpus's rounds ran %s: not this file's load", ds.name, ds.scenario, sc.Hash, ds.pairs[0].base.Scenario.Hash)
	}
	ds.estimate = rounds.RoundEstimate(sc, 2, ds.duet())
	for _, w := range sc.Workloads {
		ds.workloads = append(ds.workloads, w.Name)
	}
	return nil
}

func (ds *design) duet() bool {
	for _, p := range ds.pairs {
		if p.base.Round == nil || p.base.Round.Mode != result.RoundDuet {
			return false
		}
	}
	return len(ds.pairs) > 0
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// clone copies r's Phases and Workloads (maps still shared): verdict counts one
// *result.Workload drawn twice as one sample.
func clone(r *result.Result) *result.Result {
	c := *r
	c.Phases = make([]result.Phase, len(r.Phases))
	for i, p := range r.Phases {
		p.Workloads = append([]result.Workload(nil), p.Workloads...)
		c.Phases[i] = p
	}
	return &c
}

func scaled(r *result.Result, workload string, f float64) (*result.Result, error) {
	c := clone(r)
	for i := range c.Phases {
		for j := range c.Phases[i].Workloads {
			w := &c.Phases[i].Workloads[j]
			if w.Name != workload {
				continue
			}
			var err error
			if w.Histogram, w.LatencyMS, err = scaleHist(w.Histogram, f); err != nil {
				return nil, fmt.Errorf("%s/%s: latency: %w", c.Phases[i].Name, workload, err)
			}
			if w.ServiceH, w.ServiceMS, err = scaleHist(w.ServiceH, f); err != nil {
				return nil, fmt.Errorf("%s/%s: service time: %w", c.Phases[i].Name, workload, err)
			}
		}
	}
	return c, nil
}

func scaleHist(enc string, f float64) (string, result.Summary, error) {
	h, err := result.DecodeHistogram(enc)
	if err != nil {
		return "", result.Summary{}, err
	}
	out := result.NewHistogram()
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := int64(math.Round(float64(b.From+b.To) / 2 * f))
		if err := out.RecordValues(max(v, 1), b.Count); err != nil {
			return "", result.Summary{}, err
		}
	}
	s, err := result.EncodeHistogram(out)
	if err != nil {
		return "", result.Summary{}, err
	}
	return s, result.Summarize(out), nil
}

// onSchedule is ds cut to pairs whose generator kept schedule on both sides; nil under minPairs.
func (ds *design) onSchedule(minPairs int) *design {
	c := *ds
	c.name = ds.name + " (on schedule)"
	c.pairs = nil
	c.untrusted = 0
	for _, p := range ds.pairs {
		if p.base.GeneratorBehind() == nil && p.head.GeneratorBehind() == nil {
			c.pairs = append(c.pairs, p)
		}
	}
	if len(c.pairs) < minPairs {
		return nil
	}
	c.chunks = countChunks(c.pairs)
	return &c
}

func countChunks(ps []pair) int {
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.chunk] = true
	}
	return len(seen)
}

func (ds *design) describe() string {
	s := fmt.Sprintf("%s (%s): %d paired rounds from %d gate(s); %d of %d results with the generator behind schedule; a paired round %s, set-up and teardown %s",
		ds.name, ds.scenario, len(ds.pairs), ds.chunks, ds.untrusted, 2*len(ds.pairs),
		ds.pairDur.Round(time.Second), ds.setupDur.Round(time.Second))
	if st := ds.steal(); st != "" {
		s += "; " + st
	}
	if ds.unusableGates > 0 {
		s += fmt.Sprintf("; %d of the %d gates were unusable (exit 3: a round ended by the watchdog, or a stack that would not pause), %d of their pairs left out", ds.unusableGates, ds.chunks, ds.unusablePairs)
	}
	return s
}

func (ds *design) steal() string {
	var all, behind, onTime []float64
	for _, p := range ds.pairs {
		for _, r := range []*result.Result{p.base, p.head} {
			if r.Steal == nil {
				continue
			}
			all = append(all, r.Steal.Load.Share)
			if r.GeneratorBehind() != nil {
				behind = append(behind, r.Steal.Load.Share)
			} else {
				onTime = append(onTime, r.Steal.Load.Share)
			}
		}
	}
	if len(all) == 0 {
		return ""
	}
	med := func(xs []float64) string {
		if len(xs) == 0 {
			return "–"
		}
		xs = slices.Sorted(slices.Values(xs))
		m := (xs[(len(xs)-1)/2] + xs[len(xs)/2]) / 2
		return fmt.Sprintf("%.1f%%", 100*m)
	}
	return fmt.Sprintf("hypervisor steal on the generator's cores (%d of %d results recorded it): median %s, largest %s; median %s in the results behind schedule, %s in those on it",
		len(all), 2*len(ds.pairs), med(all), fmt.Sprintf("%.1f%%", 100*slices.Max(all)), med(behind), med(onTime))
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
