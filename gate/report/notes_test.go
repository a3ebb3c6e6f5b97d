package report_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/mdtext"
)

// noteWords is every note code with the words a reader of the report sees.
var noteWords = []struct {
	n        verdict.Note
	unusable bool // the note says why a verdict is unusable
	want     string
}{
	{verdict.Note{Code: verdict.NoteNoResult, Side: "head"}, true, "head: no result"},
	{verdict.Note{Code: verdict.NoteMarkedUnusable, Side: "base", Round: 2}, true, "base round 2: the result is marked unusable"},
	{verdict.Note{Code: verdict.NoteResult, Side: "base", Round: 2, Detail: "stack exited"}, true, "base round 2: stack exited"},
	{verdict.Note{Code: verdict.NoteLatencyCount, Phase: "sustain", Workload: "api", Samples: 1200, Successes: 1201}, true,
		"sustain/api: latency summary counts 1\u2009200 samples for 1\u2009201 successes"},
	{verdict.Note{Code: verdict.NoteNoJudgedPhase, Side: "head", Merged: true}, true, "head (rounds merged): no judged phase in the result"},
	{verdict.Note{Code: verdict.NoteInterrupted}, false, "the run was interrupted before its schedule ended: the phases it did not reach are not measured"},
	{verdict.Note{Code: verdict.NoteAbandoned, Phase: "sustain", Workload: "ingest", Abandoned: 7}, false, "sustain/ingest: 7 request(s) abandoned at the end, excluded from error_rate"},
	{verdict.Note{Code: verdict.NoteNoWorkload, Phase: "sustain"}, false, "phase sustain: no workload ran and none has thresholds"},
	{verdict.Note{Code: verdict.NoteNotRecovered, Phase: "fault", Action: "kill", Service: "db", Workload: "api", WithinS: 15}, false,
		"fault: kill db: api did not recover unattended within the declared recovery.within (15 s)"},
	{verdict.Note{Code: verdict.NoteRecoveryNotMeasured, Phase: "fault", Action: "pause", Service: "db", Workload: "api"}, false,
		"fault: pause db: api: no request in the recovery window, recovery not measured"},
	{verdict.Note{Code: verdict.NoteRecoveryNotMeasured, Phase: "fault", Action: "pause", Service: "db", Workload: "api", NotObservedS: 1, WindowS: 3}, false,
		"fault: pause db: api: 1 of the recovery window's 3 seconds lay past the run's end (the fault ended late) and were not observed, recovery not measured"},
	{verdict.Note{Code: verdict.NoteUnpairedRounds, BaseRounds: 3, HeadRounds: 2}, true, "base has 3 round(s), head 2: rounds are paired, nothing is compared with half a result"},
	{verdict.Note{Code: verdict.NotePhasesDiffer, Side: "head", Round: 2, Phases: []string{"sustain"}, RefPhases: []string{"sustain", "recover"}}, true,
		`head round 2: judged phases ["sustain"] differ from base round 1's ["sustain" "recover"]`},
	{verdict.Note{Code: verdict.NoteHistogram, Side: "base", Round: 1, Phase: "sustain", Workload: "api", Detail: "illegal base64 data"}, true,
		"base round 1: sustain/api: latency histogram: illegal base64 data"},
	{verdict.Note{Code: verdict.NoteHistogramCount, Side: "head", Round: 3, Phase: "sustain", Workload: "api", Samples: 100, Successes: 99}, true,
		"head round 3: sustain/api: the latency histogram holds 100 samples for 99 successes"},
	{verdict.Note{Code: verdict.NoteMerge, Side: "head", Round: 2, Detail: "phases differ"}, true, "head: round 2 cannot be merged with the earlier rounds: phases differ"},
	{verdict.Note{Code: verdict.NoteRoundInterrupted, Side: "base", Round: 2}, false, "base round 2 was interrupted before its schedule ended: what it did not reach is not measured"},
	{verdict.Note{Code: verdict.NoteFewRounds, Rounds: 1}, false, "1 round(s): at least 3 are needed to measure the noise between rounds"},
	{verdict.Note{Code: verdict.NoteDuetRoundLeftOut, Round: 3, Rounds: 9}, false, "duet round 3 left out: its generator fell behind its schedule on both sides at once (a stall of the machine); the comparisons use the other 9 rounds"},
	{verdict.Note{Code: verdict.NoteDuetRoundLeftOut, Round: 4, Side: "head", Rounds: 9}, false, "duet round 4 left out: the load generator fell behind its schedule on the head side for a cause both sides shared (the machine); the comparisons use the other 9 rounds"},
	{verdict.Note{Code: verdict.NoteDuetStackBusy, BusyPct: 61.4, StackCPUs: "0"}, false, "duet: the services kept the stack's cpus (0) 61.4% busy, so the stacks waited on each other and the rounds disagree more. Give the stack more cpus (--stack-cpus) or lower the rate"},
	{verdict.Note{Code: verdict.NoteNoWorkloadEitherSide, Phase: "recover"}, false, "phase recover: no workload ran on either side"},
	{verdict.Note{Code: verdict.NoteLatenessNoted, Side: "head", Round: 2, Behind: &verdict.UntrustedRound{Side: "head", Round: 2, Rounds: []int{2},
		Generator: result.Generator{BehindSchedule: true, Late: 22, Offered: 1000, LateShare: 0.022, LatenessP99MS: 1.75},
		Lateness:  &verdict.LatenessCheck{Phase: "sustain", Workload: "api", Metric: "p95", BaseMS: 8.1, HeadMS: 97.2, Side: "head", LatenessMS: 1.75, LatenessAt: "p99", BarMS: 22.3}}}, false,
		"head round 2 fell behind its schedule (2.2% of requests late); its lateness at p99 (1.75 ms) cannot explain the change at p95 (sustain/api p95 8.10 → 97.2 ms): judged"},
	{verdict.Note{Code: verdict.NoteGateInterrupted}, true, "the gate was interrupted before its rounds ended"},
	{verdict.Note{Code: verdict.NoteRoundsIncomplete}, true, "the rounds did not complete on both sides"},
	{verdict.Note{Code: verdict.NoteWorkflowChanged, Paths: []string{".github/workflows/a.yml", "action.yml"}, Was: verdict.Pass}, true,
		"head changes this gate's workflow (.github/workflows/a.yml, action.yml) and may loosen its inputs; the verdict would have been pass"},
	{verdict.Note{Code: verdict.NoteWorkflowChanged, Paths: []string{".github/workflows/a.yml"}}, true,
		"head changes this gate's workflow (.github/workflows/a.yml) and may loosen its inputs, so no round was run"},
	{verdict.Note{Code: verdict.NoteError, Detail: "compose up: no engine"}, true, "compose up: no engine"},
}

// gateNoteWords is every note of a gate's set-up and plan (package rounds,
// rounds.Outcome.Notes) and of its publishing step, with its whole words: the
// sentences rounds and action wrote before report worded them.
var gateNoteWords = []struct {
	n    verdict.Note
	want string
}{
	{verdict.Note{Code: verdict.NoteDuetNoiseUnused, Path: "baselines/demo-api/noise.json"},
		"the noise calibration baselines/demo-api/noise.json is of rounds that ran one side at a time: not used by a duet gate"},
	{verdict.Note{Code: verdict.NoteScenarioFromHead},
		"WARNING: the scenario is head's (--scenario-from head): the change being judged sets its own thresholds, ceilings and load; unsafe for a required check"},
	{verdict.Note{Code: verdict.NotePolicyApplied, Detail: "head adds workload x"}, "head adds workload x: applied (--scenario-from head)"},
	{verdict.Note{Code: verdict.NotePolicyNotApplied, Detail: "head adds workload x"},
		"head adds workload x: not applied (the scenario is base's; --scenario-from head applies head's, unsafe for a required check)"},
	{verdict.Note{Code: verdict.NoteScenarioNewInHead, Commit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", Path: "load/scenario.yaml"},
		"the scenario is new in head (base 0a1b2c3d4e5f has no load/scenario.yaml): judged by head's file"},
	{verdict.Note{Code: verdict.NoteScenarioRemovedInHead, Path: "load/scenario.yaml"}, "head removes load/scenario.yaml: base's scenario applied"},
	{verdict.Note{Code: verdict.NoteScenarioUnreadInHead, Path: "load/scenario.yaml", Detail: "line 3: unknown field"},
		"head's load/scenario.yaml does not load (line 3: unknown field): base's scenario applied"},
	{verdict.Note{Code: verdict.NoteHeadDirty}, "head is the working tree with uncommitted changes"},
	{verdict.Note{Code: verdict.NoteTeardown, Side: "base", Detail: "compose down: timeout"}, "base stack was not torn down cleanly: compose down: timeout"},
	{verdict.Note{Code: verdict.NoteBaselineFromHead, Name: "main"},
		"baseline main is read from head's checkout (no --base): on a pull request pass the base commit, so that the change judged cannot replace its own baseline"},
	{verdict.Note{Code: verdict.NoteBaselineOfBase, Name: "main", Path: "baselines/demo-api/main.json", Commit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"},
		"baseline main is base's: baselines/demo-api/main.json at 0a1b2c3d4e5f"},
	{verdict.Note{Code: verdict.NoteBaselineRemovedInHead, Name: "main", Path: "baselines/demo-api/main.json"},
		"head removes baseline main (baselines/demo-api/main.json): not applied"},
	{verdict.Note{Code: verdict.NoteBaselineUnreadInHead, Name: "main", Path: "baselines/demo-api/main.json", Detail: "unexpected EOF"},
		"head's baseline main (baselines/demo-api/main.json) does not read (unexpected EOF): not applied"},
	{verdict.Note{Code: verdict.NoteBaselineChangedInHead, Name: "main", Path: "baselines/demo-api/main.json"},
		"head changes baseline main (baselines/demo-api/main.json): not applied (the baseline is base's)"},
	{verdict.Note{Code: verdict.NoteBaselineFixed},
		"a stored baseline is a fixed reference: the interval reflects head's round-to-round noise only, not base's"},
	{verdict.Note{Code: verdict.NoteBaselineMachine, BaseMachine: &result.Machine{Host: "ci-1", CPUs: 2, Kernel: "6.8"}, HeadMachine: &result.Machine{Host: "laptop", CPUs: 8, Kernel: "6.9"}},
		"WARNING: the baseline was measured on another machine (ci-1, 2 cpus, kernel 6.8) than head (laptop, 8 cpus, kernel 6.9)"},
	{verdict.Note{Code: verdict.NoteBaselineMachine, BaseMachine: &result.Machine{Host: "vm", CPUModel: "Intel(R) Xeon(R) Processor", CPUs: 2, Kernel: "6.18"}, HeadMachine: &result.Machine{Host: "vm", CPUModel: "AMD EPYC", CPUs: 2, Kernel: "6.18"}},
		"WARNING: the baseline was measured on another machine (vm, Intel(R) Xeon(R) Processor, 2 cpus, kernel 6.18) than head (vm, AMD EPYC, 2 cpus, kernel 6.18)"},
	{verdict.Note{Code: verdict.NoteBaselineTopology, BaseTopology: &result.Topology{StackCPUs: "0", LoadCPUs: "1", Pinned: true}, HeadTopology: &result.Topology{StackCPUs: "0-3", LoadCPUs: "4-7", LoadScheduling: "SCHED_RR 1"}},
		`WARNING: the baseline's topology differs (stack cpus "0", load cpus "1", pinned true, generator SCHED_OTHER) from head's ("0-3", "4-7", false, SCHED_RR 1)`},
	{verdict.Note{Code: verdict.NoteBaselineRerun, Name: "release", Commit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"},
		"baseline release is re-measured: its commit 0a1b2c3d4e5f ran here as the base side, beside head in paired rounds"},
	{verdict.Note{Code: verdict.NoteBaselineStoredOnly, Name: "release", Commit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", Unrun: verdict.BaselineNotInClone},
		"WARNING: baseline release's commit could not be run here (commit 0a1b2c3d4e5f is not in this clone; a shallow checkout lacks it: fetch-depth: 0): head is judged against its stored numbers from another run, with the noise bound below"},
	{verdict.Note{Code: verdict.NoteBaselineStoredOnly, Name: "release", Commit: "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567+dirty", Unrun: verdict.BaselineDirty},
		"WARNING: baseline release's commit could not be run here (it was measured on 0a1b2c3d4e5f, a working tree with uncommitted changes): head is judged against its stored numbers from another run, with the noise bound below"},
	{verdict.Note{Code: verdict.NoteBaselineStoredOnly, Name: "release", Unrun: verdict.BaselineNoCommit},
		"WARNING: baseline release's commit could not be run here (it records no commit): head is judged against its stored numbers from another run, with the noise bound below"},
	{verdict.Note{Code: verdict.NoteBaselineFirst, Name: "release"},
		"no baseline `release` yet: this run's results are stored as it (head alone, judged on its thresholds)"},
	{verdict.Note{Code: verdict.NoteBaselineFirstFailed, Name: "release"},
		"no baseline `release` yet: this run did not pass its thresholds, so its results are not stored as it"},
	{verdict.Note{Code: verdict.NoteWorkflowChange, Path: ".github/workflows/load-gate.yml", Detail: "changes"},
		"WARNING: head changes .github/workflows/load-gate.yml: the inputs of this run come from the pull request's own workflow and may loosen it"},
	{verdict.Note{Code: verdict.NoteGateAdopted, Paths: []string{".github/workflows/load-gate.yml"}},
		"not enforced yet: this pull request adds the gate (.github/workflows/load-gate.yml); base runs none, so its own workflow's verdict stands"},
	{verdict.Note{Code: verdict.NoteWorkflowAllowed},
		"the workflow changes are allowed by the operator's opt-in (--allow-workflow-changes): the verdict stands"},
	{verdict.Note{Code: verdict.NoteSequentialPlan, Rounds: 8, MaxRounds: 8, Budget: 10 * time.Minute, Fit: 12, RoundTime: 50 * time.Second},
		"sequential rounds (--rounds auto): at most 8 paired rounds (--max-rounds 8), budget 10m0s"},
	{verdict.Note{Code: verdict.NoteSequentialPlan, Rounds: 4, MaxRounds: 10, Budget: 10 * time.Minute, Fit: 4, RoundTime: 122400 * time.Millisecond},
		"sequential rounds (--rounds auto): at most 4 paired rounds (the budget 10m0s allows 4 at ≈2m2s a round as scheduled; --max-rounds 10), budget 10m0s"},
	{verdict.Note{Code: verdict.NoteSequentialPlan, Rounds: 6, MaxRounds: 10, Budget: 10 * time.Minute, Fit: 7, RoundTime: 80040 * time.Millisecond, Measured: true},
		"sequential rounds (--rounds auto): at most 6 paired rounds (the budget 10m0s allows 7 at 1m20s a round as measured in round 1; --max-rounds 10), budget 10m0s"},
	{verdict.Note{Code: verdict.NoteSequentialPlan, Rounds: 10, MaxRounds: 10, Budget: 10 * time.Minute, Fit: 285, RoundTime: 2 * time.Second, Measured: true},
		"sequential rounds (--rounds auto): at most 10 paired rounds (--max-rounds 10; the budget 10m0s allows 285 at 2s a round as measured in round 1), budget 10m0s"},
	{verdict.Note{Code: verdict.NoteFailOn, FailOn: "never", ExitCode: 0, VerdictExitCode: 1}, "fail-on never: this step exits 0, not the verdict's 1"},
	{verdict.Note{Code: verdict.NoteRoundWindows, Windows: &verdict.WindowPlan{Phase: "sustain", PhaseS: 60, WindowS: 15, InPhase: 4, PerInstance: 7, Instances: 3, WarmupS: 40, FirstLook: 6}},
		"judged windows: sustain 60 s cut into 15 s windows (4 in the phase), 7 per stack instance after a 40 s warm-up run (in no number); 3 instance(s) a side, all up from the start, the rounds taken in turn (instance 1, 2, 3, 1, …); first look after 6 rounds"},
	{verdict.Note{Code: verdict.NoteRoundWindows, Windows: &verdict.WindowPlan{Phase: "sustain", PhaseS: 60, WindowS: 20, InPhase: 3, PerInstance: 12, Instances: 1, WarmupS: 40, FirstLook: 4}},
		"judged windows: sustain 60 s cut into 20 s windows (3 in the phase), 12 per stack instance after a 40 s warm-up run (in no number); 1 instance(s) a side; first look after 4 rounds"},
	{verdict.Note{Code: verdict.NoteFailOn, FailOn: "inconclusive", ExitCode: 1, VerdictExitCode: 0},
		"fail-on inconclusive: this check must decide and the gate did not, so it exits 1 (the verdict alone exits 0); what would decide it is beside each undecided comparison"},
	{verdict.Note{Code: verdict.NoteContinued, Rounds: 6, HeadRounds: 6, Attempts: 2, Replayed: true},
		"re-run: this gate continued the 6 paired round(s) of 2 earlier attempt(s) (same base, head, scenario and policy) as one sequential test, and its look after 6 of them decides it: no new round ran"},
	{verdict.Note{Code: verdict.NoteNotContinued, Detail: "scenario hash 0123456789ab, this gate's is ba9876543210"},
		"an earlier attempt's rounds were found and not continued (scenario hash 0123456789ab, this gate's is ba9876543210): a fresh sequential test"},
	{verdict.Note{Code: verdict.NoteOperatorLooser, Policy: &verdict.PolicyChange{Kind: verdict.PolicyTolerance,
		Base: verdict.PolicyValue{Fraction: 0.05}, Head: verdict.PolicyValue{Fraction: 0.2}}},
		"the operator's tolerance 20% is looser than base's scenario's 5%: not applied (a flag or input can only tighten it)"},
	{verdict.Note{Code: verdict.NoteOperatorLooser, Policy: &verdict.PolicyChange{Kind: verdict.PolicyToleranceFloor,
		Base: verdict.PolicyValue{Duration: 50 * time.Microsecond}, Head: verdict.PolicyValue{Duration: time.Millisecond}}},
		"the operator's tolerance floor 1ms is looser than base's scenario's 50µs: not applied (a flag or input can only tighten it)"},
	{verdict.Note{Code: verdict.NoteStallRerun, Round: 4, Side: "head", Path: "round-4.replaced-1",
		Stall: &verdict.Stall{Round: 4, Side: "head", Factor: 4.1799, Cells: 5, Others: 9}},
		"round 4 re-run: head's stack 4.1× slower on every workload at once (5 workloads, against the other 9 rounds' median); the stalled round is kept as round-4.replaced-1"},
	{verdict.Note{Code: verdict.NoteStallRerun, Round: 2, Side: "base", Path: "round-2.replaced-2",
		Stall: &verdict.Stall{Round: 2, Side: "base", Factor: 1.62, Cells: 3, Others: 7, Backed: true,
			Steal: &verdict.StallFigure{Round: 0.21, Others: 0.001}, StackCPU: &verdict.StallFigure{Round: 40, Others: 41}}},
		"round 2 re-run: base's stack 1.6× slower on every workload at once (3 workloads, against the other 7 rounds' median; steal 21% against 0.1%); the stalled round is kept as round-2.replaced-2"},
	{verdict.Note{Code: verdict.NoteStallRerun, Round: 5, Side: "head", Path: "round-5.replaced-1",
		Stall: &verdict.Stall{Round: 5, Side: "head", Factor: 1.7, Cells: 2, Others: 5, Backed: true, StackCPU: &verdict.StallFigure{Round: 15, Others: 40}}},
		"round 5 re-run: head's stack 1.7× slower on every workload at once (2 workloads, against the other 5 rounds' median; its services' CPU 15% of a core against 40%); the stalled round is kept as round-5.replaced-1"},
	{verdict.Note{Code: verdict.NoteStallCapped, Round: 9, Side: "head", Rounds: 2, Stall: &verdict.Stall{Round: 9, Side: "head", Factor: 3.9, Cells: 5, Others: 13}},
		"round 9 is judged although head's stack 3.9× slower on every workload at once (5 workloads, against the other 13 rounds' median): the gate re-runs at most 2 stalled round(s), so that a change slower everywhere is still judged"},
	{verdict.Note{Code: verdict.NoteStallNoBudget, Round: 9, Side: "base", Stall: &verdict.Stall{Round: 9, Side: "base", Factor: 2.5, Cells: 2, Others: 8}},
		"round 9 is judged although base's stack 2.5× slower on every workload at once (2 workloads, against the other 8 rounds' median): no further round fits the budget to re-run it"},
}

// A gate's own notes reach the reader of its markdown report, and its
// verdict.json's notes, in report.NoteText's words.
func TestGateNoteWordsInTheReports(t *testing.T) {
	for _, c := range gateNoteWords {
		t.Run(string(c.n.Code), func(t *testing.T) {
			if got := report.NoteText(c.n); got != c.want {
				t.Fatalf("NoteText\n got %q\nwant %q", got, c.want)
			}
			gr := rounds.Outcome{Rounds: 3, Scenario: result.Scenario{Name: "demo-api"}, Notes: []verdict.Note{c.n},
				Verdict: verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{}}}
			var md, js bytes.Buffer
			if err := report.CompareMarkdown(&md, gr); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), "- "+mdtext.Escape(c.want)+"\n") {
				t.Errorf("the markdown report's notes lack %q:\n%s", mdtext.Escape(c.want), md.String())
			}
			if err := report.CompareJSON(&js, gr); err != nil {
				t.Fatal(err)
			}
			f, err := report.DecodeGateVerdict(&js)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(f.Notes, c.want) {
				t.Errorf("verdict.json notes %q lack %q", f.Notes, c.want)
			}
		})
	}
}

// Every note a verdict returns reaches the reader of the markdown report
// in the words of report.NoteText: under the unusable banner when it says
// why, else among the notes.
func TestNoteWordsInTheMarkdownReport(t *testing.T) {
	for _, c := range noteWords {
		t.Run(string(c.n.Code), func(t *testing.T) {
			got := report.NoteText(c.n)
			if !strings.HasPrefix(got, c.want) {
				t.Fatalf("NoteText = %q, want it to start %q", got, c.want)
			}
			v := verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{}, Notes: []verdict.Note{c.n}}
			if c.unusable {
				v.Value = verdict.Unusable
			}
			gr := rounds.Outcome{Rounds: 3, Scenario: result.Scenario{Name: "demo-api"}, Verdict: v}
			var b bytes.Buffer
			if err := report.CompareMarkdown(&b, gr); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			if !strings.Contains(md, mdtext.Escape(c.want)) {
				t.Errorf("the markdown report lacks %q:\n%s", mdtext.Escape(c.want), md)
			}
			if banner := strings.Contains(bannerLine(md), "UNUSABLE GATE"); banner != c.unusable {
				t.Errorf("unusable banner %v, want %v", banner, c.unusable)
			}
		})
	}
}

// A run's notes reach its markdown report and its verdict.json (reasons,
// in words) the same.
func TestRunNotesInReportAndVerdictFile(t *testing.T) {
	n := verdict.Note{Code: verdict.NoteAbandoned, Phase: "sustain", Workload: "ingest", Abandoned: 1200}
	want := "sustain/ingest: 1\u2009200 request(s) abandoned at the end, excluded from error_rate"
	v := verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{}, Notes: []verdict.Note{n, n}}
	var j bytes.Buffer
	if err := report.JSON(&j, v); err != nil {
		t.Fatal(err)
	}
	f, err := report.DecodeVerdict(&j)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Reasons) != 1 || f.Reasons[0] != want {
		t.Errorf("verdict.json reasons %q, want [%q] (once)", f.Reasons, want)
	}
}

// Every note code the verdict package declares has words of its own (a
// code without a case in NoteText would print as the bare code).
func TestEveryNoteCodeHasWords(t *testing.T) {
	codes := declaredNoteCodes(t)
	if len(codes) < 10 {
		t.Fatalf("found %d note codes in gate/verdict/notes.go", len(codes))
	}
	tested := map[verdict.NoteCode]bool{}
	for _, c := range noteWords {
		tested[c.n.Code] = true
	}
	for _, c := range gateNoteWords {
		tested[c.n.Code] = true
	}
	for _, code := range codes {
		n := verdict.Note{Code: code, Detail: "d"}
		if got := report.NoteText(n); got == string(code)+": d" {
			t.Errorf("code %q is worded %q: it has no words", code, got)
		}
		if !tested[code] {
			t.Errorf("code %q is not in noteWords: its words are not checked in the report", code)
		}
	}
}

// declaredNoteCodes reads the NoteCode constants of gate/verdict.
func declaredNoteCodes(t *testing.T) []verdict.NoteCode {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../verdict/notes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []verdict.NoteCode
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "NoteCode" {
				continue
			}
			for _, val := range vs.Values {
				if lit, ok := val.(*ast.BasicLit); ok {
					codes = append(codes, verdict.NoteCode(strings.Trim(lit.Value, `"`)))
				}
			}
		}
	}
	return codes
}

func ExampleNoteText() {
	for _, n := range []verdict.Note{
		{Code: verdict.NoteAbandoned, Phase: "sustain", Workload: "ingest", Abandoned: 7},
		{Code: verdict.NoteResult, Side: "base", Round: 2, Detail: "stack exited"},
		{Code: verdict.NoteHistogramCount, Side: "head", Merged: true, Phase: "sustain", Workload: "api", Samples: 100, Successes: 99},
	} {
		fmt.Println(report.NoteText(n))
	}
	// Output:
	// sustain/ingest: 7 request(s) abandoned at the end, excluded from error_rate
	// base round 2: stack exited
	// head (rounds merged): sustain/api: the latency histogram holds 100 samples for 99 successes
}
