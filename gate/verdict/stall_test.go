package verdict_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/testtier"
)

// stallSim is a bad day for a sequential duet gate of five workloads:
// each round's log ratio head/base of a workload is a round noise shared
// by the workloads plus the workload's own, both t₃ scaled to sd
// roundSD and ownSD (heavy tails); with probability stall a round is a
// stall, one side (either, at random) 3.5–6× slower on every workload.
// Head carries ln(1+delta) on workload 0.
type stallSim struct {
	roundSD, ownSD, stall, delta float64
	normal                       bool // the round noise normal, not t₃
}

var stallWorkloads = []string{"api_read", "item", "search", "profile", "ingest"}

func t3(rng *rand.Rand) float64 {
	z := rng.NormFloat64()
	var chi2 float64
	for range 3 {
		x := rng.NormFloat64()
		chi2 += x * x
	}
	return z / math.Sqrt(chi2/3) / math.Sqrt(3)
}

func (s stallSim) ratios(rng *rand.Rand, R int) [][]float64 {
	out := make([][]float64, len(stallWorkloads))
	for range R {
		c := s.roundSD * t3(rng)
		if s.normal {
			c = s.roundSD * rng.NormFloat64()
		}
		stall := 0.0
		if rng.Float64() < s.stall {
			stall = math.Log(3.5 + 2.5*rng.Float64())
			if rng.IntN(2) == 0 {
				stall = -stall // base stalled
			}
		}

		for k := range stallWorkloads {
			l := c + s.ownSD*t3(rng) + stall
			if k == 0 {
				l += math.Log1p(s.delta)
			}
			out[k] = append(out[k], math.Exp(l))
		}
	}
	return out
}

// stallGate is one sequential gate (at most 20 rounds, looks from 4 every
// 2, O'Brien–Fleming spending) judged by each estimator on the same
// rounds: per estimator, whether any comparison was a regression, whether
// workload 0's was, whether every comparison passed, and the rounds run.
type stallOutcome struct {
	anyReg, reg0, pass bool
	rounds             int
}

func stallGate(t testing.TB, seed uint64, s stallSim, ests []string) []stallOutcome {
	rng := rand.New(rand.NewPCG(seed, 0x57a11))
	const maxR = verdict.DefaultSeqMaxRounds
	// The rounds a re-run takes come after the gate's 20 (the same 20 as
	// without re-runs: ratios draws round by round).
	ratios := s.ratios(rng, maxR+verdict.StallCap(maxR))
	base, head := ratioRounds(t, stallWorkloads, ratios)
	out := make([]stallOutcome, len(ests))
	for i, e := range ests {
		e, rule := strings.CutSuffix(e, stallRule)
		plan := verdict.SeqPlan{MaxRounds: maxR}
		opt := verdict.CompareOptions{Percentile: "p95", Estimator: e}
		looks := stallLooks(ratios, maxR, rule)
		for _, look := range looks {
			R := len(look.kept)
			b, h := make([]*result.Result, R), make([]*result.Result, R)
			for j, k := range look.kept {
				b[j], h[j] = base[k], head[k]
			}
			v, err := verdict.Sequential(b, h, opt, plan)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Sequential.Decided() {
				continue
			}
			o := stallOutcome{pass: v.Value == verdict.Pass, rounds: look.ran}
			for _, wv := range v.Workloads {
				for _, c := range wv.Comparisons {
					if c.Value == verdict.Regression {
						o.anyReg = true
						o.reg0 = o.reg0 || wv.Workload == stallWorkloads[0]
					}
				}
			}
			out[i] = o
			break
		}
	}
	return out
}

// stallRule marks an estimator judged on the rounds a gate keeps under
// the stalled-round rule (verdict.FindStalls, capped re-runs).
const stallRule = " + re-run rule"

// stallLook is one look of a sequential gate: the rounds it judges (their
// places in the drawn rounds) and how many it ran.
type stallLook struct {
	kept []int
	ran  int
}

// stallLooks are the looks (after 4, 6, … maxR kept rounds) of a gate
// over ratios[k][i] run as gate/rounds runs it: with rule, after every
// round a stalled round is replaced by the next drawn one, at most
// StallCap(maxR) times, and a look waits for the re-run.
func stallLooks(ratios [][]float64, maxR int, rule bool) []stallLook {
	var looks []stallLook
	var kept []int
	next, replaced := 0, 0
	flagged := map[int]bool{}
	for len(kept) < maxR {
		kept = append(kept, next)
		next++
		for rule && len(kept) >= 4 {
			cells := make([][]float64, len(ratios))
			for k := range ratios {
				for _, i := range kept {
					cells[k] = append(cells[k], math.Log(ratios[k][i]))
				}
			}
			var st *verdict.Stall
			for _, x := range verdict.StallsOfCells(cells) {
				if !flagged[kept[x.Index]] {
					st = &x
					break
				}
			}
			if st == nil {
				break
			}
			if replaced >= verdict.StallCap(maxR) {
				flagged[kept[st.Index]] = true
				continue
			}
			kept[st.Index] = next
			next++
			replaced++
		}
		if R := len(kept); R >= verdict.DefaultSeqMinRounds && R%2 == 0 {
			looks = append(looks, stallLook{kept: slices.Clone(kept), ran: next})
		}
	}
	return looks
}

type stallRow struct {
	anyReg, reg0, pass, rounds float64 // shares of gates; mean rounds
}

func stallTally(t testing.TB, seed uint64, gates int, s stallSim, ests []string) []stallRow {
	outs := make([][]stallOutcome, gates)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for g := w; g < gates; g += workers {
				outs[g] = stallGate(t, seed+uint64(g), s, ests)
			}
		})
	}
	wg.Wait()
	rows := make([]stallRow, len(ests))
	for _, o := range outs {
		for i, x := range o {
			r := &rows[i]
			if x.anyReg {
				r.anyReg++
			}
			if x.reg0 {
				r.reg0++
			}
			if x.pass {
				r.pass++
			}
			r.rounds += float64(x.rounds)
		}
	}
	for i := range rows {
		for _, p := range []*float64{&rows[i].anyReg, &rows[i].reg0, &rows[i].pass, &rows[i].rounds} {
			*p /= float64(gates)
		}
	}
	return rows
}

// The estimators on a bad day, side by side on the same seeded gates:
// sequential duet gates of five workloads (the gate's default plan), round
// noise with t₃ tails (sd 4% shared by the workloads, 5% each workload's
// own), without and with stalled rounds (1 in 20: one side 3.5–6× slower
// on every workload). Every estimator keeps A/A false regressions within
// the family's 2.5% (+3 standard errors) and passes no +50%; with stalls
// the robust ones decide more A/A gates and catch more +20% than the
// mean does, and so does the mean (or the trimmed mean) judged on the
// rounds a gate keeps under the stalled-round rule (" + re-run rule":
// FindStalls after every round, a flagged round replaced by the next
// drawn one, at most StallCap; rounds counts the re-runs). The table is bench/'s (rows by -run, e.g. SimStall/stalls_1_in_20/+20%): LOADGATE_TEST_TIER=sim
// LOADGATE_SIM_GATES=1000 go test ./gate/verdict -run SimStall -v.
func TestSimStall(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	// Seeded; by default 3 gates of A/A and +50% with stalls (a gate judges
	// 20 rounds of five workloads up to nine times, per estimator, about a
	// second of CPU); the sim tier 30 gates of A/A and +20%, without and
	// with stalls; LOADGATE_SIM_GATES=n the whole table.
	full := testtier.On(t, testtier.Sim)
	gates := testtier.Scale(t, testtier.Sim, 3, 30)
	stalls, deltas := []float64{1.0 / 20}, []float64{0, 0.50}
	if full {
		stalls, deltas = []float64{0, 1.0 / 20}, []float64{0, 0.20}
		if n := simGates(0); n > 0 {
			gates, deltas = n, []float64{0, 0.10, 0.20, 0.50}
		}
	}
	ests := []string{verdict.EstimatorMeanT, verdict.EstimatorHL, verdict.EstimatorTrimmed, verdict.EstimatorMeanT + stallRule, verdict.EstimatorTrimmed + stallRule}
	limit := 0.025 + 3*math.Sqrt(0.025*0.975/float64(gates))
	var lines []string
	for _, stall := range stalls {
		var aa, at20 []stallRow
		for _, delta := range deltas {
			s := stallSim{roundSD: 0.04, ownSD: 0.05, stall: stall, delta: delta}
			seed := uint64(5<<24) + uint64(stall*1000)<<16 + uint64(delta*100)<<8
			var rows []stallRow
			// A subtest per row, so that -run picks rows (SimStall/stalls_1_in_20/+20%).
			t.Run(fmt.Sprintf("stalls %s/%+.0f%%", stallWord(stall), 100*delta), func(t *testing.T) {
				rows = stallTally(t, seed, gates, s, ests)
			})
			for k, r := range rows {
				line := fmt.Sprintf("| %s | %+.0f%% | %s | %.1f%% | %.1f%% | %.1f%% | %.1f |", stallWord(stall), 100*delta, ests[k],
					100*r.anyReg, 100*r.pass, 100*r.reg0, r.rounds)
				lines = append(lines, line)
				t.Log(line)
				if delta == 0 && r.anyReg > limit {
					t.Errorf("%s: A/A: %.1f%% false regressions, want ≤ 2.5%%", line, 100*r.anyReg)
				}
				if delta == 0.5 && r.pass > 0 {
					t.Errorf("%s: +50%% passed in %.1f%% of gates", line, 100*r.pass)
				}
			}
			switch delta {
			case 0:
				aa = rows
			case 0.2:
				at20 = rows
			}
		}
		if stall > 0 && full && aa != nil && at20 != nil {
			for k := 1; k < len(ests); k++ {
				if aa[k].pass <= aa[0].pass || at20[k].reg0 <= at20[0].reg0 {
					t.Errorf("stalls: %s decided %.1f%% of A/A and caught %.1f%% of +20%%, no more than %s's %.1f%% and %.1f%%",
						ests[k], 100*aa[k].pass, 100*at20[k].reg0, ests[0], 100*aa[0].pass, 100*at20[0].reg0)
				}
			}
		}
	}
	t.Logf("%d gates per row (sequential, ≤ %d rounds, five workloads, change on one):\n"+
		"| stalls | change | estimator | any regression | decided (pass) | caught | rounds (mean) |\n"+
		"| --- | --- | --- | ---: | ---: | ---: | ---: |\n%s", gates, verdict.DefaultSeqMaxRounds, strings.Join(lines, "\n"))
}

func stallWord(p float64) string {
	if p == 0 {
		return "none"
	}
	return fmt.Sprintf("1 in %.0f rounds", 1/p)
}
