package verdict

import (
	"math"

	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/gate/result"
)

// DuetMinRounds: from this many duet rounds on, the t interval over the
// rounds is the whole interval. Base and head ran at the same instants, so the
// independent-sides floor overstates the noise; the minimum guards against a
// spread small by luck under heavy tails.
const DuetMinRounds = 6

// allDuet: every result of both sides ran in a duet round (a mix keeps the floor).
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

func isDuet(r *result.Result) bool {
	return r != nil && r.Round != nil && r.Round.Mode == result.RoundDuet
}

// leaveOutSharedStalls leaves out duet rounds behind schedule for a cause
// both sides share (sharedStalls), unless fewer than two would remain. Other
// behind rounds stay and make the comparison untrusted: the cause may be that side's.
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

// onlySharedStalls: every behind round is a shared stall and some round kept
// its schedule, so more rounds can make the comparison trustworthy.
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

// nearlyBehind: r's generator was half-way to the behind-schedule limits.
func nearlyBehind(r *result.Result) bool {
	share := 0.0
	if r.Offered > 0 {
		share = float64(r.Late) / float64(r.Offered)
	}
	return share >= result.LateShareLimit/2 || r.LatenessMS.P99 >= result.LatenessP99LimitMS/2
}

// sharedStalls are the duet rounds behind on both sides, or on one while the
// other was nearlyBehind and neither engine stalled on max_in_flight.
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

type leftOut struct {
	round, index int
	side         string
}

// roundNo is the gate's number of a side's i-th result.
func roundNo(r *result.Result, i int) int {
	if isDuet(r) && r.Round.Number > 0 {
		return r.Round.Number
	}
	return i + 1
}

// DuetBusyPct is the busy % of a duet's stack cpus above which a comparison
// notes (NoteDuetStackBusy) that the stacks queue behind each other.
const DuetBusyPct = 50

// DuetStackBusy is both sides' stack CPU over the stack cpus, averaged over
// the rounds, to 0.1; not ok when a round is unpinned or unsampled or the
// sides' stack cpus differ.
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
