package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/sweep"
	"github.com/loadgate/loadgate/gate/verdict"
)

// WorkloadWhy words why a workload is not measured or has no checks, or "".
func WorkloadWhy(wv verdict.WorkloadVerdict) string {
	switch wv.Reason {
	case "":
		return wv.Why
	case verdict.ReasonAbsent:
		return "absent from phase " + wv.Phase
	case verdict.ReasonNotOffered:
		return "no request offered in phase " + wv.Phase
	case verdict.ReasonNoSuccess:
		return fmt.Sprintf("no successful request: 0 of %s offered succeeded (%s failed, %s abandoned)",
			Count(wv.Offered), Count(wv.Failed), Count(wv.Abandoned))
	case verdict.ReasonNoThresholds:
		return "no thresholds"
	}
	return string(wv.Reason)
}

// CheckWhy words why a check is not measured or what its number leaves out.
func CheckWhy(c verdict.Check) string {
	switch c.Reason {
	case "":
		return c.Why
	case verdict.ReasonAbsent:
		return "absent from phase " + c.Phase
	case verdict.ReasonNoSuccess:
		return "no successful request"
	case verdict.ReasonNoMessage:
		return "no session received a message"
	case verdict.ReasonNoHandshake:
		return "no session completed its handshake"
	case verdict.ReasonNoCompletion:
		return "no request completed"
	case verdict.ReasonAbandonedExcluded:
		return Count(c.Abandoned) + " abandoned excluded"
	}
	return string(c.Reason)
}

// CheckText renders a check as the reports do, for the Action's annotations.
func CheckText(c verdict.Check) string { return checkText(c) }

// NoteTexts words a verdict's notes in order, each once.
func NoteTexts(ns []verdict.Note) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		if s := NoteText(n); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// NoteText words one note, prefixed by its result ("base round 2: ").
func NoteText(n verdict.Note) string {
	at := noteAt(n)
	if s, ok := resultNoteText(n, at); ok {
		return s
	}
	if s, ok := roundNoteText(n); ok {
		return s
	}
	if s, ok := gateNoteText(n); ok {
		return s
	}
	if n.Detail != "" {
		return at + string(n.Code) + ": " + n.Detail
	}
	return at + string(n.Code)
}

// resultNoteText words the notes about one result; ok is false for others.
func resultNoteText(n verdict.Note, at string) (string, bool) {
	switch n.Code {
	case verdict.NoteNoResult:
		return at + "no result", true
	case verdict.NoteMarkedUnusable:
		return at + "the result is marked unusable", true
	case verdict.NoteResult:
		return at + resultDetail(n.Detail), true
	case verdict.NoteError:
		return at + n.Detail, true
	case verdict.NoteLatencyCount:
		return fmt.Sprintf("%s%s/%s: latency summary counts %s samples for %s successes", at, n.Phase, n.Workload, Count(n.Samples), Count(n.Successes)), true
	case verdict.NoteNoJudgedPhase:
		return at + "no judged phase in the result", true
	case verdict.NoteInterrupted:
		return at + "the run was interrupted before its schedule ended: the phases it did not reach are not measured", true
	case verdict.NoteAbandoned:
		return fmt.Sprintf("%s%s/%s: %s request(s) abandoned at the end, excluded from error_rate", at, n.Phase, n.Workload, Count(n.Abandoned)), true
	case verdict.NoteNoWorkload:
		return fmt.Sprintf("%sphase %s: no workload ran and none has thresholds", at, n.Phase), true
	case verdict.NoteNotRecovered:
		return fmt.Sprintf("%s%s: %s %s: %s did not recover unattended within the declared recovery.within (%s)", at, n.Phase, n.Action, n.Service, n.Workload, seconds(n.WithinS)), true
	case verdict.NoteRecoveryNotMeasured:
		why := "no request in the recovery window"
		if n.NotObservedS > 0 {
			why = fmt.Sprintf("%d of the recovery window's %d seconds lay past the run's end (the fault ended late) and were not observed", n.NotObservedS, n.WindowS)
		}
		return fmt.Sprintf("%s%s: %s %s: %s: %s, recovery not measured", at, n.Phase, n.Action, n.Service, n.Workload, why), true
	case verdict.NoteUnpairedRounds:
		return fmt.Sprintf("base has %d round(s), head %d: rounds are paired, nothing is compared with half a result", n.BaseRounds, n.HeadRounds), true
	case verdict.NotePhasesDiffer:
		return fmt.Sprintf("%sjudged phases %q differ from base round 1's %q", at, n.Phases, n.RefPhases), true
	case verdict.NoteHistogram:
		return fmt.Sprintf("%s%s/%s: latency histogram: %s", at, n.Phase, n.Workload, n.Detail), true
	case verdict.NoteHistogramCount:
		return fmt.Sprintf("%s%s/%s: the latency histogram holds %s samples for %s successes", at, n.Phase, n.Workload, Count(n.Samples), Count(n.Successes)), true
	}
	return "", false
}

func roundNoteText(n verdict.Note) (string, bool) {
	switch n.Code {
	case verdict.NoteMerge:
		return fmt.Sprintf("%s: round %d cannot be merged with the earlier rounds: %s", n.Side, n.Round, n.Detail), true
	case verdict.NoteRoundInterrupted:
		return fmt.Sprintf("%s round %d was interrupted before its schedule ended: what it did not reach is not measured", n.Side, n.Round), true
	case verdict.NoteDuetRoundLeftOut:
		if n.Side != "" {
			// One process sends both sides at once: the lateness is the machine's.
			return fmt.Sprintf("duet round %d left out: the load generator fell behind its schedule on the %s side for a cause both sides shared (the machine); the comparisons use the other %d rounds", n.Round, n.Side, n.Rounds), true
		}
		return fmt.Sprintf("duet round %d left out: its generator fell behind its schedule on both sides at once (a stall of the machine); the comparisons use the other %d rounds", n.Round, n.Rounds), true
	case verdict.NoteFewRounds:
		return fmt.Sprintf("%d round(s): at least 3 are needed to measure the noise between rounds; with fewer, intervals rest on a noise bound or a t interval and decide only large changes", n.Rounds), true
	case verdict.NoteDuetStackBusy:
		return fmt.Sprintf("duet: the services kept the stack's cpus (%s) %s busy, so the stacks waited on each other and the rounds disagree more. Give the stack more cpus (--stack-cpus) or lower the rate",
			n.StackCPUs, Percent(n.BusyPct/100)), true
	case verdict.NoteNoWorkloadEitherSide:
		return fmt.Sprintf("phase %s: no workload ran on either side", n.Phase), true
	case verdict.NoteLatenessNoted:
		return latenessNotedText(n), true
	case verdict.NoteGateInterrupted:
		return "the gate was interrupted before its rounds ended", true
	case verdict.NoteRoundsIncomplete:
		return "the rounds did not complete on both sides", true
	case verdict.NoteWorkflowChanged:
		if n.Was == "" { // decided before any round ran
			return fmt.Sprintf("head changes this gate's workflow (%s) and may loosen its inputs, so no round was run. Use --allow-workflow-changes only where this workflow is enforced",
				strings.Join(n.Paths, ", ")), true
		}
		return fmt.Sprintf("head changes this gate's workflow (%s) and may loosen its inputs; the verdict would have been %s. Use --allow-workflow-changes only where this workflow is enforced",
			strings.Join(n.Paths, ", "), n.Was), true
	}
	return "", false
}

func gateNoteText(n verdict.Note) (s string, ok bool) {
	switch n.Code {
	case verdict.NoteDuetNoiseUnused:
		s = fmt.Sprintf("the noise calibration %s is of rounds that ran one side at a time: not used by a duet gate", n.Path)
	case verdict.NoteScenarioFromHead:
		s = "WARNING: the scenario is head's (--scenario-from head): the change being judged sets its own thresholds, ceilings and load; unsafe for a required check"
	case verdict.NotePolicyApplied:
		s = policyNoteText(n) + ": applied (--scenario-from head)"
	case verdict.NotePolicyNotApplied:
		s = policyNoteText(n) + ": not applied (the scenario is base's; --scenario-from head applies head's, unsafe for a required check)"
	case verdict.NoteScenarioNewInHead:
		s = fmt.Sprintf("the scenario is new in head (base %s has no %s): judged by head's file", result.ShortHash(n.Commit), n.Path)
	case verdict.NoteScenarioRemovedInHead:
		s = fmt.Sprintf("head removes %s: base's scenario applied", n.Path)
	case verdict.NoteScenarioUnreadInHead:
		s = fmt.Sprintf("head's %s does not load (%s): base's scenario applied", n.Path, n.Detail)
	case verdict.NoteHeadDirty:
		s = "head is the working tree with uncommitted changes"
	case verdict.NoteTeardown:
		s = fmt.Sprintf("%s stack was not torn down cleanly: %s", n.Side, n.Detail)
	case verdict.NoteWorkflowChange:
		if n.How == verdict.WorkflowOutsideGate {
			s = workflowNoteText(n) + " (a pinned action bumped or another job): gated normally"
			break
		}
		s = "WARNING: " + workflowNoteText(n) + ": the inputs of this run come from the pull request's own workflow and may loosen it"
	case verdict.NoteGateAdopted:
		s = fmt.Sprintf("not enforced yet: this pull request adds the gate (%s); base runs none, so its own workflow's verdict stands", strings.Join(n.Paths, ", "))
	case verdict.NoteWorkflowAllowed:
		s = "the workflow changes are allowed by the operator's opt-in (--allow-workflow-changes): the verdict stands"
	case verdict.NoteSequentialPlan:
		s = fmt.Sprintf("sequential rounds (--rounds auto): at most %d paired rounds (%s), budget %s", n.Rounds, PlanWhy(n), n.Budget)
	case verdict.NoteStallRerun:
		s = fmt.Sprintf("round %d re-run: %s; the stalled round is kept as %s", n.Round, stallText(n.Stall), n.Path)
	case verdict.NoteStallCapped:
		s = fmt.Sprintf("round %d is judged although %s: the gate re-runs at most %d stalled round(s), so that a change slower everywhere is still judged", n.Round, stallText(n.Stall), n.Rounds)
	case verdict.NoteStallNoBudget:
		s = fmt.Sprintf("round %d is judged although %s: no further round fits the budget to re-run it", n.Round, stallText(n.Stall))
	case verdict.NoteRoundWindows:
		s = windowsText(n.Windows)
	case verdict.NoteContinued:
		if n.Replayed {
			s = fmt.Sprintf("re-run: this gate continued the %d paired round(s) of %d earlier attempt(s) (same base, head, scenario and policy) as one sequential test, and its look after %d of them decides it: no new round ran", n.Rounds, n.Attempts, n.HeadRounds)
			break
		}
		s = fmt.Sprintf("re-run: this gate continued the %d paired round(s) of %d earlier attempt(s) (same base, head, scenario and policy) as the first looks of one sequential test, %d round(s) in all: a re-run adds looks, it does not start afresh", n.Rounds, n.Attempts, n.HeadRounds)
	case verdict.NoteNotContinued:
		s = "an earlier attempt's rounds were found and not continued (" + n.Detail + "): a fresh sequential test"
	case verdict.NoteOperatorLooser:
		if n.Policy != nil {
			s = OperatorLooserText(*n.Policy)
		}
	case verdict.NoteFailOn:
		if n.FailOn == "inconclusive" {
			s = fmt.Sprintf("fail-on inconclusive: this check must decide and the gate did not, so it exits %d (the verdict alone exits %d); what would decide it is beside each undecided comparison", n.ExitCode, n.VerdictExitCode)
			break
		}
		s = fmt.Sprintf("fail-on %s: this step exits %d, not the verdict's %d", n.FailOn, n.ExitCode, n.VerdictExitCode)
	case verdict.NoteShardMissing, verdict.NoteShardFailed, verdict.NoteShardsTooFew:
		s = shardNoteText(n) // shards.go
	default:
		return baselineNoteText(n)
	}
	return s, true
}

func baselineNoteText(n verdict.Note) (s string, ok bool) {
	switch n.Code {
	case verdict.NoteBaselineFromHead:
		s = fmt.Sprintf("baseline %s is read from head's checkout (no --base): on a pull request pass the base commit, so that the change judged cannot replace its own baseline", n.Name)
	case verdict.NoteBaselineOfBase:
		s = fmt.Sprintf("baseline %s is base's: %s at %s", n.Name, n.Path, result.ShortHash(n.Commit))
	case verdict.NoteBaselineRemovedInHead:
		s = fmt.Sprintf("head removes baseline %s (%s): not applied", n.Name, n.Path)
	case verdict.NoteBaselineUnreadInHead:
		s = fmt.Sprintf("head's baseline %s (%s) does not read (%s): not applied", n.Name, n.Path, n.Detail)
	case verdict.NoteBaselineChangedInHead:
		s = fmt.Sprintf("head changes baseline %s (%s): not applied (the baseline is base's)", n.Name, n.Path)
	case verdict.NoteBaselineFixed:
		s = "a stored baseline is a fixed reference: the interval reflects head's round-to-round noise only, not base's"
	case verdict.NoteBaselineMachine:
		b, h := orZero(n.BaseMachine), orZero(n.HeadMachine)
		s = fmt.Sprintf("WARNING: the baseline was measured on another machine (%s%s, %d cpus, kernel %s) than head (%s%s, %d cpus, kernel %s)",
			b.Host, modelText(b.CPUModel), b.CPUs, b.Kernel, h.Host, modelText(h.CPUModel), h.CPUs, h.Kernel)
	case verdict.NoteBaselineTopology:
		b, h := orZero(n.BaseTopology), orZero(n.HeadTopology)
		s = fmt.Sprintf("WARNING: the baseline's topology differs (stack cpus %q, load cpus %q, pinned %v, generator %s) from head's (%q, %q, %v, %s)",
			b.StackCPUs, b.LoadCPUs, b.Pinned, b.Scheduling(), h.StackCPUs, h.LoadCPUs, h.Pinned, h.Scheduling())
	case verdict.NoteBaselineRerun:
		s = fmt.Sprintf("baseline %s is re-measured: its commit %s ran here as the base side, beside head in paired rounds", n.Name, result.ShortHash(n.Commit))
	case verdict.NoteBaselineStoredOnly:
		s = fmt.Sprintf("WARNING: baseline %s's commit could not be run here (%s): head is judged against its stored numbers from another run, with the noise bound below", n.Name, baselineUnrunText(n))
	case verdict.NoteBaselineFirst:
		s = fmt.Sprintf("no baseline `%s` yet: this run's results are stored as it (head alone, judged on its thresholds)", n.Name)
	case verdict.NoteBaselineFirstFailed:
		s = fmt.Sprintf("no baseline `%s` yet: this run did not pass its thresholds, so its results are not stored as it", n.Name)
	default:
		return "", false
	}
	return s, true
}

func baselineUnrunText(n verdict.Note) string {
	switch n.Unrun {
	case verdict.BaselineNoCommit:
		return "it records no commit"
	case verdict.BaselineDirty:
		return fmt.Sprintf("it was measured on %s, a working tree with uncommitted changes", result.ShortHash(strings.TrimSuffix(n.Commit, "+dirty")))
	case verdict.BaselineNotInClone:
		return fmt.Sprintf("commit %s is not in this clone; a shallow checkout lacks it: fetch-depth: 0", result.ShortHash(n.Commit))
	}
	return string(n.Unrun)
}

func orZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// PlanWhy words what capped a sequential plan's rounds: --max-rounds or the budget.
func PlanWhy(n verdict.Note) string {
	if !n.Measured {
		if n.Fit < n.MaxRounds {
			return fmt.Sprintf("the budget %s allows %d at ≈%s a round as scheduled; --max-rounds %d", n.Budget, n.Fit, n.RoundTime.Round(time.Second), n.MaxRounds)
		}
		return fmt.Sprintf("--max-rounds %d", n.MaxRounds)
	}
	took := n.RoundTime.Round(100 * time.Millisecond)
	if n.Fit >= n.MaxRounds {
		return fmt.Sprintf("--max-rounds %d; the budget %s allows %d at %s a round as measured in round 1", n.MaxRounds, n.Budget, n.Fit, took)
	}
	return fmt.Sprintf("the budget %s allows %d at %s a round as measured in round 1; --max-rounds %d", n.Budget, n.Fit, took, n.MaxRounds)
}

// noteAt names the result a note is about ("base round 2: "), "" in a run.
func noteAt(n verdict.Note) string {
	switch {
	case n.Merged:
		return n.Side + " (rounds merged): "
	case n.Side != "" && n.Round > 0:
		return fmt.Sprintf("%s round %d: ", n.Side, n.Round)
	case n.Side != "":
		return n.Side + ": "
	}
	return ""
}

// GateWords words a gate's log lines (rounds.Words).
type GateWords struct{}

func (GateWords) Plan(n verdict.Note) string { return PlanWhy(n) }

func (GateWords) Generator(g result.Generator) string { return GeneratorWhy(g) }

func (GateWords) Note(n verdict.Note) string { return NoteText(n) }

// ErrorText is err's message with every rounds.NotesError's notes worded.
func ErrorText(err error) string {
	s := err.Error()
	var word func(error)
	word = func(e error) {
		switch u := e.(type) {
		case *rounds.NotesError:
			s = strings.Replace(s, u.Error(), u.Op+": unusable: "+strings.Join(NoteTexts(u.Notes), "; "), 1)
		case *sweep.StepRefusedError:
			s = strings.Replace(s, u.Error(), fmt.Sprintf("step %d of --rates (%s req/s) is refused: %v", u.Step, Rate(u.Rate), u.Err), 1)
		case interface{ Unwrap() error }:
			word(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				word(e)
			}
		}
	}
	word(err)
	return s
}

var (
	checkUnrecorded = regexp.MustCompile(`^(warmup: )?offered (\d+) != recorded (\d+)$`)
	checkSum        = regexp.MustCompile(`^(offered|recorded) (\d+) != (\d+), the sum over (.+)$`)
)

// resultDetail words result.Check's count mismatches for a reader.
func resultDetail(s string) string {
	n := func(d string) string {
		v, _ := strconv.ParseInt(d, 10, 64)
		return Count(v)
	}
	if m := checkUnrecorded.FindStringSubmatch(s); m != nil {
		w := ""
		if m[1] != "" {
			w = "warm-up: "
		}
		return fmt.Sprintf("%s%s requests offered, %s recorded: every offered request must leave one record", w, n(m[2]), n(m[3]))
	}
	if m := checkSum.FindStringSubmatch(s); m != nil {
		return fmt.Sprintf("%s requests %s in all, but %s counted over the %s", n(m[2]), m[1], n(m[3]), m[4])
	}
	return s
}

// stallText words a stalled round's slowdown, with the steal or CPU behind it.
func stallText(st *verdict.Stall) string {
	if st == nil {
		return "it stalled"
	}
	var why []string
	if f := st.Steal; f != nil && f.Round-f.Others >= verdict.StallStealJump {
		why = append(why, fmt.Sprintf("steal %s against %s", Percent(f.Round), Percent(f.Others)))
	}
	if f := st.StackCPU; f != nil && st.Backed && (st.Steal == nil || st.Steal.Round-st.Steal.Others < verdict.StallStealJump) {
		why = append(why, fmt.Sprintf("its services' CPU %s of a core against %s", Percent(f.Round/100), Percent(f.Others/100)))
	}
	extra := ""
	if len(why) > 0 {
		extra = "; " + strings.Join(why, ", ")
	}
	return fmt.Sprintf("%s's stack %s slower on every workload at once (%d workloads, against the other %d rounds' median%s)",
		st.Side, factorText(st.Factor), st.Cells, st.Others, extra)
}

// factorText is a slowdown to a tenth, rounded down: "4.1×".
func factorText(f float64) string {
	return strconv.FormatFloat(math.Floor(f*10)/10, 'f', 1, 64) + "×"
}

// turnText is the instances' turn: "instance 1, 2, 3, 1".
func turnText(n int) string {
	s := "instance 1"
	for k := 2; k <= n; k++ {
		s += fmt.Sprintf(", %d", k)
	}
	return s + ", 1"
}

// windowsText words a windows gate's plan: how the judged phase was cut.
func windowsText(w *verdict.WindowPlan) string {
	if w == nil {
		return "rounds are judged windows of the judged phase"
	}
	warm := "no warm-up run"
	if w.WarmupS > 0 {
		warm = "a " + seconds(w.WarmupS) + " warm-up run (in no number)"
	}
	s := fmt.Sprintf("judged windows: %s %s cut into %s windows (%d in the phase), %d per stack instance after %s; %d instance(s) a side",
		w.Phase, seconds(w.PhaseS), seconds(w.WindowS), w.InPhase, w.PerInstance, warm, w.Instances)
	if w.Instances > 1 {
		s += fmt.Sprintf(", all up from the start, the rounds taken in turn (%s, …)", turnText(w.Instances))
	}
	if w.FirstLook > 0 {
		s += fmt.Sprintf("; first look after %d rounds", w.FirstLook)
	}
	return s
}
