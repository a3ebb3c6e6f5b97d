package verdict

import (
	"math"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

// Duet rounds: the interval of a comparison whose rounds ran base and head
// at the same instants (result.RoundDuet).
//
// The order-statistics floor (IntervalSampling) treats each side's
// percentile as an independent sample of its n requests, so the sampling
// variance of r_i = ln(head_i/base_i) is the sum of the two sides'. In a
// duet round the two sides' requests are due at the same instants and
// share the machine's noise at every instant (a stall, a frequency change,
// a neighbour's burst hits both), so their percentiles are strongly
// positively correlated and Var(r_i) = v_base + v_head − 2·cov is far below
// the sum: on the demo (A/A, p95 of 3–25 ms endpoints) the rounds' own sd
// of r_i was 1.7–8.5% where the floor implied ≈ 20% per round. The floor
// is then no bound of anything but the sides taken apart, and it is what
// kept duet gates inconclusive. The rounds' spread s already contains all
// of r_i's noise, the sampling part included: the t interval over the
// rounds is the whole interval, and its R − 1 degrees of freedom are what
// protects against an s small by luck (the t quantile, exact for normal
// r_i at any R ≥ 2).
//
// Why a minimum of rounds: the t interval is exact only for normal r_i,
// and a gate's r_i have heavy tails (a stalled round). With few rounds a
// heavy tail makes s small by luck more often than the t quantile allows
// for, and a histogram's 3 significant digits can make s 0 when the
// percentiles land on the same bucket. DuetMinRounds = 6 (5 degrees of
// freedom, t = 2.57 at 95%, 31% above z): six rounds are three ABBA-sized
// steps (a sequential gate's looks at 6, 8, 10 use it, its first look at 4
// keeps the floor), and the seeded simulations (duet_test.go, README "Duet
// rounds") keep false regressions at the tolerance within 2.5% at 6 rounds
// for normal and for t₃-distributed per-round noise. Below it a duet
// comparison is judged as any other (the floor stays a part).
const DuetMinRounds = 6

// allDuet: every result of both sides ran in a duet round. A mix (a
// compare of duet and one-after-the-other files) is not: it is judged as
// one-after-the-other rounds are, with the floor.
func allDuet(base, head []*result.Result) bool {
	for _, rs := range [][]*result.Result{base, head} {
		for _, r := range rs {
			if !isDuet(r) {
				return false
			}
		}
	}
	return len(base) > 0 && len(head) > 0
}

// isDuet: r ran in a duet round.
func isDuet(r *result.Result) bool {
	return r != nil && r.Round != nil && r.Round.Mode == result.RoundDuet
}

// leaveOutSharedStalls: in a duet, a round whose generator fell behind its
// schedule for a cause both sides share is left out of the comparison —
// rule 19: no regression is called on that round — and the comparison is
// judged on the other rounds, which stay whole pairs:
//
//   - behind on both sides (the same instants: a stall of the machine, as
//     the A/A corpus shows);
//   - behind on one side only while neither side's engine waited for an
//     in-flight permit (Result.Stalled 0 on both) and the other side was at
//     least half-way to the limits (nearlyBehind): one process sends both
//     sides' requests at the same instants, so a lateness both sides show is
//     its own (the machine's CPU), and which side crossed the limit is
//     chance (the A/A corpus: its one-sided rounds had lateness p99 just
//     over 5 ms on one side, just under on the other).
//
// A round behind on one side whose engine stalled at max_in_flight, or
// whose other side was on schedule with room to spare, is kept and marks
// the comparison untrusted as in any gate: its cause may be that side's own
// (a slow head holding every permit, or costing its engine more work per
// request), and leaving it out could hide it. Nothing is left out when fewer than two rounds would remain. The
// left-out rounds come back in order, with the side behind ("" for both).
func leaveOutSharedStalls(base, head []*result.Result) (b, h []*result.Result, left []leftOut) {
	left = sharedStalls(base, head)
	if len(left) == 0 || len(base)-len(left) < 2 {
		return base, head, nil
	}
	out := map[int]bool{}
	for _, l := range left {
		out[l.index] = true
	}
	for i := range base {
		if !out[i] {
			b, h = append(b, base[i]), append(h, head[i])
		}
	}
	return b, h, left
}

// onlySharedStalls: every round behind its schedule (on either side) is
// one leaveOutSharedStalls would leave out, had enough others stayed, and
// at least one round kept its schedule on both sides: more rounds can then
// make the comparison trustworthy (Sequential goes on). A gate whose every
// round so far fell behind stops untrusted, as before: a machine stalled
// throughout would spend the budget on nothing.
func onlySharedStalls(base, head []*result.Result) bool {
	shared := sharedStalls(base, head)
	behind := 0
	for i := range base {
		if i < len(head) && (base[i].GeneratorBehind() != nil || head[i].GeneratorBehind() != nil) {
			behind++
		}
	}
	return behind > 0 && behind == len(shared) && behind < len(base)
}

// nearlyBehind: r's generator was at least half-way to the behind-schedule
// limits (late share or lateness p99) — the evidence that the other side's
// lateness in the same round was shared, not caused by that side alone (a
// head that makes its own engine late, by bodies to drain or dials, leaves
// base's lateness low, and its round is kept).
func nearlyBehind(r *result.Result) bool {
	share := 0.0
	if r.Offered > 0 {
		share = float64(r.Late) / float64(r.Offered)
	}
	return share >= result.LateShareLimit/2 || r.LatenessMS.P99 >= result.LatenessP99LimitMS/2
}

// sharedStalls are the duet rounds behind their schedule for a cause both
// sides share (see leaveOutSharedStalls), in order.
func sharedStalls(base, head []*result.Result) (left []leftOut) {
	if !allDuet(base, head) || len(base) != len(head) {
		return nil
	}
	for i := range base {
		bb, hb := base[i].GeneratorBehind() != nil, head[i].GeneratorBehind() != nil
		switch {
		case bb && hb:
			left = append(left, leftOut{round: roundNo(base[i], i), index: i})
		case bb && base[i].Stalled == 0 && head[i].Stalled == 0 && nearlyBehind(head[i]):
			left = append(left, leftOut{round: roundNo(base[i], i), index: i, side: "base"})
		case hb && base[i].Stalled == 0 && head[i].Stalled == 0 && nearlyBehind(base[i]):
			left = append(left, leftOut{round: roundNo(base[i], i), index: i, side: "head"})
		}
	}
	return left
}

// leftOut is a duet round leaveOutSharedStalls left out: its number, its
// place among the results, and the side behind ("" for both).
type leftOut struct {
	round, index int
	side         string
}

// roundNo is the gate's number of the i-th result of a side: a duet round's
// own number (after leaveOutSharedStalls the i-th result is not round i+1),
// else i+1.
func roundNo(r *result.Result, i int) int {
	if isDuet(r) && r.Round.Number > 0 {
		return r.Round.Number
	}
	return i + 1
}

// DuetBusyPct is how busy a duet's stack cpus may be, in % of them, before
// a gate says that its two stacks queue behind each other
// (NoteDuetStackBusy; DuetStackBusy's share, to 0.1, must exceed it). A duet
// runs both sides' stacks on the same cpus, so each side's requests wait
// behind the other's work: on the demo (duet A/A gates on a 2-core VM,
// 2 December 2026, README "Measured a fifth time"), with both sides'
// services 50–66% of the one stack core, a round's p95 was 9–26 ms for
// 3 ms of work and the sides were ±13–43% apart a round (the sd of a
// round's log ratio), one side slower on every workload at once
// (correlation 0.68–0.88 across workloads); at 41–45% the p95 was 7–8 ms
// and the sides ±3–23% apart (search the noisiest, correlation 0.41–0.84).
// Past it, much of a gate's noise is the queue's, not the change's; the
// demo's gate load, at 41–45%, stays below it.
const DuetBusyPct = 50

// DuetStackBusy is how busy a duet's stack cpus were (the number
// NoteDuetStackBusy carries, and make gate-quality's symmetry section
// prints): per round, both sides' services' mean CPU
// (result.Service.CPUAvgPct, % of one core) summed and divided by the
// stack cpus (base's topology), averaged over the rounds given (Compare
// gives the rounds it judges, without those it left out), to 0.1 (as the
// note prints it, so that what is compared with DuetBusyPct is what the
// reader sees). ok is false
// where the sides' rounds differ in number, a round sampled no stack, its
// stack was not pinned (its services may have run on any cpu), or the
// sides name other stack cpus or none that read as a cpu list.
func DuetStackBusy(base, head []*result.Result) (pct float64, cpus string, ok bool) {
	if len(base) == 0 || len(base) != len(head) {
		return 0, "", false
	}
	cpus = base[0].Topology.StackCPUs
	set, err := pin.Parse(cpus)
	if err != nil || set.Len() == 0 {
		return 0, "", false
	}
	for i := range base {
		if base[i].Topology.StackCPUs != cpus || head[i].Topology.StackCPUs != cpus || !base[i].Topology.Pinned || !head[i].Topology.Pinned {
			return 0, "", false
		}
		round := 0.0
		for _, r := range []*result.Result{base[i], head[i]} {
			if r.Stack == nil || len(r.Stack.Services) == 0 {
				return 0, "", false
			}
			for _, s := range r.Stack.Services {
				round += s.CPUAvgPct
			}
		}
		pct += round / float64(set.Len())
	}
	return math.Round(pct/float64(len(base))*10) / 10, cpus, true
}
