package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/githubfake"
)

// Another head than the fixture's pull request #2's (headSHA), and this run (GITHUB_RUN_ID in newRunner).
const (
	otherHead = "1111111111111111111111111111111111111111"
	runID     = 4242
)

// runBegan is when run 4242 began; its first attempt ended 10 minutes later (firstEnded).
var (
	runBegan   = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	firstEnded = runBegan.Add(10 * time.Minute)
)

// acceptWorld is #2 judged at headSHA by attempt 2 of run 4242, begun at runBegan, its
// first attempt ended at firstEnded, and labelled loadgate:accept 20 minutes after the
// run began by "maintainer" (write access).
func acceptWorld(t *testing.T) *fakeGitHub {
	t.Helper()
	f := newFake(t)
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, Labels: []string{"bug", verdict.AcceptLabel}})
	f.SetRun(runID, githubfake.Run{HeadSHA: headSHA, Event: "pull_request", CreatedAt: runBegan})
	f.SetAttempt(runID, 1, githubfake.Attempt{HeadSHA: headSHA, UpdatedAt: firstEnded})
	f.SetPermission("maintainer", "write")
	f.SetPermission("reader", "read")
	f.SetPermission("owner", "admin")
	f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: "bug", Actor: githubfake.User{Login: "reader", Type: "User"}, CreatedAt: runBegan.Add(-time.Hour)})
	f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "maintainer", Type: "User"}, CreatedAt: runBegan.Add(20 * time.Minute)})
	return f
}

func checkAccept(t *testing.T, f *fakeGitHub, head string) (*verdict.Acceptance, string, error) {
	t.Helper()
	return checkAcceptAttempt(t, f, head, 2)
}

func checkAcceptAttempt(t *testing.T, f *fakeGitHub, head string, attempt int) (*verdict.Acceptance, string, error) {
	t.Helper()
	c, err := action.NewClient(&action.Env{APIURL: f.URL()}, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return action.CheckAccept(context.Background(), c, action.AcceptQuery{Owner: owner, Repo: repo, PR: prNum, HeadSHA: head, RunID: runID, Attempt: attempt})
}

// A person with write access who labels the pull request after the judged
// run's failing attempt ended accepts that run's head on its re-run; the acceptance names them, the head and when.
func TestAcceptByAWriterAfterTheRunBegan(t *testing.T) {
	f := acceptWorld(t)
	acc, why, err := checkAccept(t, f, headSHA)
	if err != nil || why != "" || acc == nil {
		t.Fatalf("CheckAccept: %+v, %q, %v; want an acceptance", acc, why, err)
	}
	want := verdict.Acceptance{By: "maintainer", Permission: "write", Label: verdict.AcceptLabel, HeadSHA: headSHA,
		LabeledAt: runBegan.Add(20 * time.Minute), VerdictExitCode: 1}
	if *acc != want {
		t.Errorf("acceptance %+v, want %+v", *acc, want)
	}
	for _, r := range []string{"/collaborators/maintainer/permission", "/actions/runs/4242", "/actions/runs/4242/attempts/1", "/issues/2/timeline"} {
		if !strings.Contains(strings.Join(f.Requests(), "\n"), r) {
			t.Errorf("no request for %s: %v", r, f.Requests())
		}
	}
}

// Nothing but that accepts: each case says why, and no acceptance is made.
func TestAcceptRefusesWhatIsNotAWritersLabelOnTheJudgedHead(t *testing.T) {
	later := runBegan.Add(30 * time.Minute)
	for _, tc := range []struct {
		name  string
		setup func(f *fakeGitHub)
		head  string
		why   string
	}{
		{"a reader labels it", func(f *fakeGitHub) {
			f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "reader", Type: "User"}, CreatedAt: later})
		}, headSHA, "@reader has read access: an accept needs write access"},
		{"someone with no access labels it", func(f *fakeGitHub) {
			f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "stranger", Type: "User"}, CreatedAt: later})
		}, headSHA, "@stranger has no access"},
		{"the pull request's own workflow labels it (GITHUB_TOKEN)", func(f *fakeGitHub) {
			f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "github-actions[bot]", Type: "Bot"}, CreatedAt: later})
		}, headSHA, "added by github-actions[bot], a bot"},
		{"an app labels it on a writer's behalf", func(f *fakeGitHub) {
			f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "owner", Type: "User"}, CreatedAt: later, ViaApp: "labeler"})
		}, headSHA, "through the app labeler"},
		{"the label is of an earlier head (a new push since)", func(f *fakeGitHub) {
			f.SetRun(runID, githubfake.Run{HeadSHA: headSHA, Event: "pull_request", CreatedAt: runBegan.Add(time.Hour)})
			f.SetAttempt(runID, 1, githubfake.Attempt{HeadSHA: headSHA, UpdatedAt: runBegan.Add(70 * time.Minute)})
		}, headSHA, "before attempt 1 of this run ended"},
		{"the previous attempt is of another head", func(f *fakeGitHub) {
			f.SetAttempt(runID, 1, githubfake.Attempt{HeadSHA: otherHead, UpdatedAt: firstEnded})
		}, headSHA, "attempt 1 of run 4242 is of head 111111111111"},
		{"the previous attempt has not ended", func(f *fakeGitHub) {
			f.SetAttempt(runID, 1, githubfake.Attempt{HeadSHA: headSHA, Status: "in_progress", UpdatedAt: firstEnded})
		}, headSHA, "attempt 1 of run 4242 has not ended (in_progress)"},
		{"the pull request's head moved on", func(f *fakeGitHub) {
			f.SetPull(prNum, githubfake.Pull{HeadSHA: otherHead, Labels: []string{verdict.AcceptLabel}})
		}, headSHA, "#2's head is now 111111111111, this run judges ec26c3e57ca3"},
		{"the run judges another head than the event's", func(f *fakeGitHub) {
			f.SetRun(runID, githubfake.Run{HeadSHA: otherHead, Event: "pull_request", CreatedAt: runBegan})
		}, headSHA, "run 4242 is of head 111111111111"},
		{"the head was force-pushed away and back before the label", func(f *fakeGitHub) {
			f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, Labels: []string{verdict.AcceptLabel}})
			f.AddTimeline(prNum,
				githubfake.TimelineEvent{Event: "head_ref_force_pushed", CommitID: otherHead, Actor: githubfake.User{Login: "author", Type: "User"}, CreatedAt: runBegan.Add(25 * time.Minute)},
				githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "maintainer", Type: "User"}, CreatedAt: later})
		}, headSHA, "force-pushed"},
		{"no labeled event in the timeline", func(f *fakeGitHub) {
			f.SetPull(prNum+1, githubfake.Pull{HeadSHA: headSHA, Labels: []string{verdict.AcceptLabel}})
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := acceptWorld(t)
			tc.setup(f)
			head := tc.head
			if head == "" { // the last case: #3, whose timeline is empty
				c, _ := action.NewClient(&action.Env{APIURL: f.URL()}, token, nil)
				f.SetRun(runID, githubfake.Run{HeadSHA: headSHA, CreatedAt: runBegan})
				acc, why, err := action.CheckAccept(context.Background(), c, action.AcceptQuery{Owner: owner, Repo: repo, PR: prNum + 1, HeadSHA: headSHA, RunID: runID, Attempt: 2})
				if acc != nil || err != nil || !strings.Contains(why, "no event of #3's timeline adds the label") {
					t.Errorf("CheckAccept: %+v, %q, %v; want no acceptance, why", acc, why, err)
				}
				return
			}
			acc, why, err := checkAccept(t, f, head)
			if acc != nil || err != nil || !strings.Contains(why, tc.why) {
				t.Errorf("CheckAccept: %+v, why %q, err %v; want no acceptance, why containing %q", acc, why, err, tc.why)
			}
		})
	}
}

// No label: no acceptance, no reason, and no further request than the pull request.
func TestAcceptWithoutTheLabelAsksNothingMore(t *testing.T) {
	f := acceptWorld(t)
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, Labels: []string{"bug"}})
	acc, why, err := checkAccept(t, f, headSHA)
	if acc != nil || why != "" || err != nil {
		t.Errorf("CheckAccept: %+v, %q, %v; want nothing", acc, why, err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (the pull request): %v", n, f.Requests())
	}
}

// A token that may not read the run (no actions: read) is an error the step
// shows as a warning: nothing is accepted.
func TestAcceptRunNotReadableIsAnError(t *testing.T) {
	f := acceptWorld(t)
	f.SetRun(runID+1, githubfake.Run{})
	c, _ := action.NewClient(&action.Env{APIURL: f.URL()}, token, nil)
	acc, _, err := action.CheckAccept(context.Background(), c, action.AcceptQuery{Owner: owner, Repo: repo, PR: prNum, HeadSHA: headSHA, RunID: 999, Attempt: 2})
	if acc != nil || err == nil || !strings.Contains(err.Error(), "actions: read") {
		t.Errorf("CheckAccept: %+v, %v; want an error naming actions: read", acc, err)
	}
}

// The last label counts: a writer's, removed, then added again by a reader, does not accept.
func TestAcceptTheLastLabelerCounts(t *testing.T) {
	f := acceptWorld(t)
	f.AddTimeline(prNum,
		githubfake.TimelineEvent{Event: "unlabeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "reader", Type: "User"}, CreatedAt: runBegan.Add(21 * time.Minute)},
		githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "reader", Type: "User"}, CreatedAt: runBegan.Add(22 * time.Minute)})
	acc, why, err := checkAccept(t, f, headSHA)
	if acc != nil || err != nil || !strings.Contains(why, "@reader has read access") {
		t.Errorf("CheckAccept: %+v, %q, %v; want the reader's label refused", acc, why, err)
	}
}

// The accept step (loadgate accept --github) on the fixture's pull_request
// event: its output is the acceptance the gate step reads; on a refusal, a
// warning saying why and no output.
func TestAcceptStepOutput(t *testing.T) {
	f := acceptWorld(t)
	r := newRunner(t, f, "pull_request", "pull_request-opened.json")
	r.env[action.InputEnv(action.InToken)] = token
	r.env["GITHUB_RUN_ATTEMPT"] = "2"
	if err := action.AcceptStep(context.Background(), &r.stdout, r.getenv, nil); err != nil {
		t.Fatal(err)
	}
	var acc verdict.Acceptance
	if err := json.Unmarshal([]byte(r.outputs(t)[action.OutAccepted]), &acc); err != nil || acc.By != "maintainer" || acc.HeadSHA != headSHA {
		t.Fatalf("output accepted %q (%v); want maintainer's acceptance of %s", r.outputs(t)[action.OutAccepted], err, headSHA)
	}

	f.SetPermission("maintainer", "triage")
	r = newRunner(t, f, "pull_request", "pull_request-opened.json")
	r.env[action.InputEnv(action.InToken)] = token
	r.env["GITHUB_RUN_ATTEMPT"] = "2"
	if err := action.AcceptStep(context.Background(), &r.stdout, r.getenv, nil); err != nil {
		t.Fatal(err)
	}
	if out := r.outputs(t)[action.OutAccepted]; out != "" {
		t.Errorf("a triager's label: output %q, want none", out)
	}
	if !strings.Contains(r.stdout.String(), "::warning::loadgate: the loadgate:accept label does not accept this run: @maintainer has read access") {
		t.Errorf("no warning saying why:\n%s", r.stdout.String())
	}
}

// The gate step with the accept step's output: a failing verdict exits 0, the
// summary, the comment (title and line) and verdict.json's accepted field
// say who accepted it, and the verdict and regressions output are unchanged.
func TestStepAcceptedRegressionExitsZeroAndSaysWho(t *testing.T) {
	f := newFake(t)
	results := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &fakeGate{out: results, gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: regressed(), Head: rounds.SideResults{Commit: headSHA}}}
	s := newStep(t, f, "", g)
	acc := verdict.Acceptance{By: "maintainer", Permission: "write", Label: verdict.AcceptLabel, HeadSHA: headSHA, LabeledAt: runBegan.Add(20 * time.Minute)}
	b, _ := json.Marshal(acc)
	s.r.env[action.AcceptedEnv] = string(b)
	res := s.run(t)
	if res.ExitCode != 0 || res.Verdict.Value != verdict.Fail {
		t.Fatalf("exit %d, verdict %s; want 0, fail (as measured)", res.ExitCode, res.Verdict.Value)
	}
	if len(s.rendered) != 1 || s.rendered[0].Accepted == nil || s.rendered[0].Accepted.VerdictExitCode != 1 {
		t.Fatalf("rendered %+v; want the acceptance, of a verdict exiting 1", s.rendered)
	}
	var vj bytes.Buffer
	if err := report.CompareJSON(&vj, s.rendered[0]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(vj.String(), `"accepted": {`) || !strings.Contains(vj.String(), `"by": "maintainer"`) || !strings.Contains(vj.String(), `"exit_code": 1,`) {
		t.Errorf("verdict.json lacks the accepted field or changed the verdict's exit code:\n%s", vj.String())
	}
	const line = "Accepted by @maintainer (write access) with the label"
	if sum := s.r.read(t, s.r.summary); !strings.Contains(unescape(sum), line) {
		t.Errorf("the summary does not say who accepted it:\n%s", sum)
	}
	if out := s.r.outputs(t); out[action.OutVerdict] != "fail" || out[action.OutRegressions] == "[]" {
		t.Errorf("outputs %v; want the verdict and regressions unchanged", out)
	}
	cs := f.ours(prNum, "demo-api")
	if len(cs) != 1 || !strings.Contains(cs[0].Body, "— FAIL, ACCEPTED\n") || !strings.Contains(unescape(cs[0].Body), line) {
		t.Errorf("the comment does not say the regression is accepted and by whom: %v", cs)
	}
	if strings.Contains(s.stdout.String(), "::error title=loadgate demo-api") {
		t.Errorf("an accepted regression still annotates as an error:\n%s", s.stdout.String())
	}
}

// The gate step refuses an acceptance of another head, and never accepts an
// unusable gate: exit 1 and 3 as without it.
func TestStepAcceptOnlyAFailingVerdictOfTheJudgedHead(t *testing.T) {
	mk := func(head string) string {
		b, _ := json.Marshal(verdict.Acceptance{By: "maintainer", Permission: "write", Label: verdict.AcceptLabel, HeadSHA: head, LabeledAt: runBegan})
		return string(b)
	}
	g := &fakeGate{gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: regressed()}}
	s := newStep(t, nil, "", g)
	g.out = s.r.env[action.InputEnv(action.InResultsDir)]
	if err := os.MkdirAll(g.out, 0o755); err != nil {
		t.Fatal(err)
	}
	s.r.env[action.AcceptedEnv] = mk(otherHead)
	if res := s.run(t); res.ExitCode != 1 {
		t.Errorf("an accept of another head: exit %d, want 1", res.ExitCode)
	}
	if !strings.Contains(s.stdout.String(), "the accept is of head 111111111111, this run judges ec26c3e57ca3: not accepted") {
		t.Errorf("no warning for another head's accept:\n%s", s.stdout.String())
	}
	s = newStep(t, nil, "", &fakeGate{err: rounds.Unusablef("gate: head side is unusable: compose up: no Docker engine")})
	s.r.env[action.AcceptedEnv] = mk(headSHA)
	if res := s.run(t); res.ExitCode != 3 {
		t.Errorf("an accepted unusable gate: exit %d, want 3", res.ExitCode)
	}
}

// unescape undoes Markdown's backslash escapes, to read words as a reader sees them.
func unescape(s string) string { return strings.ReplaceAll(s, `\`, "") }

// A fork's artifact that claims an acceptance is not believed: the fork
// commenter shows it only when the API confirms it for the run it comments.
func TestForkCommentShowsOnlyAConfirmedAcceptance(t *testing.T) {
	f := newFake(t)
	a := newForkArtifact(t, f, regressed(), "# loadgate: demo-api\n", "success")
	a.editJSON(t, "verdict.json", func(m map[string]any) {
		m["accepted"] = map[string]any{"by": "owner", "permission": "admin", "label": verdict.AcceptLabel, "head_sha": headSHA,
			"labeled_at": "2026-12-07T10:20:00Z", "exit_code": 0, "verdict_exit_code": 1}
	})
	if _, err := a.comment(t); err != nil {
		t.Fatal(err)
	}
	body := f.ours(prNum, "demo-api")[0].Body
	if strings.Contains(unescape(body), "Accepted by") || strings.Contains(body, "ACCEPTED") {
		t.Errorf("a forged acceptance is shown:\n%s", body)
	}
	if !strings.Contains(a.wr.stdout.String(), `the artifact says accepted by "owner", which the API does not confirm`) {
		t.Errorf("no notice of the unconfirmed claim:\n%s", a.wr.stdout.String())
	}

	// Now the label is real: owner (admin) added it after the run's first attempt ended,
	// and the run's second attempt is the one commented.
	f.SetPull(prNum, githubfake.Pull{HeadSHA: headSHA, Labels: []string{verdict.AcceptLabel}})
	f.SetRun(a.ev.RunID, githubfake.Run{HeadSHA: headSHA, Event: "pull_request", CreatedAt: runBegan})
	f.SetAttempt(a.ev.RunID, 1, githubfake.Attempt{HeadSHA: headSHA, UpdatedAt: firstEnded})
	a.ev.RunAttempt = 2
	f.SetPermission("owner", "admin")
	f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "labeled", Label: verdict.AcceptLabel, Actor: githubfake.User{Login: "owner", Type: "User"}, CreatedAt: runBegan.Add(20 * time.Minute)})
	if _, err := a.comment(t); err != nil {
		t.Fatal(err)
	}
	body = f.ours(prNum, "demo-api")[0].Body
	if !strings.Contains(unescape(body), "Accepted by @owner (admin access)") || !strings.Contains(body, "— FAIL, ACCEPTED\n") {
		t.Errorf("a confirmed acceptance is not shown:\n%s", body)
	}
}

// A writer who read H1's failing comment labels while run 4242 on a new head is
// queued: the label was added before that run's verdict existed, so its first
// attempt is not accepted, nor is a re-run while the label predates the failing
// attempt's end. Before the fix, any label after the run's created_at accepted.
func TestRegression_LabelAcceptsAHeadNobodySaw(t *testing.T) {
	f := acceptWorld(t)
	acc, why, err := checkAcceptAttempt(t, f, headSHA, 1)
	if acc != nil || err != nil || !strings.Contains(why, "this is attempt 1 of run 4242: the label accepts only a re-run") {
		t.Errorf("first attempt: %+v, %q, %v; want refused, a re-run needed", acc, why, err)
	}
	acc, why, err = checkAcceptAttempt(t, f, headSHA, 0) // no GITHUB_RUN_ATTEMPT
	if acc != nil || err != nil || !strings.Contains(why, "this is attempt 1") {
		t.Errorf("no attempt: %+v, %q, %v; want refused", acc, why, err)
	}
	// The label was added during the first attempt (5 minutes in), before its verdict.
	f.SetAttempt(runID, 1, githubfake.Attempt{HeadSHA: headSHA, UpdatedAt: runBegan.Add(25 * time.Minute)})
	acc, why, err = checkAccept(t, f, headSHA)
	if acc != nil || err != nil || !strings.Contains(why, "the label was added 2026-12-07 10:20:00 UTC, before attempt 1 of this run ended (2026-12-07 10:25:00 UTC)") {
		t.Errorf("label before the failing attempt ended: %+v, %q, %v; want refused", acc, why, err)
	}
}

// A force-push after the run began refuses whatever the label's time: before
// the fix only one between the run's start and the label did.
func TestRegression_ForcePushAfterTheLabelWasIgnored(t *testing.T) {
	f := acceptWorld(t)
	f.AddTimeline(prNum, githubfake.TimelineEvent{Event: "head_ref_force_pushed", CommitID: headSHA, Actor: githubfake.User{Login: "author", Type: "User"}, CreatedAt: runBegan.Add(40 * time.Minute)})
	acc, why, err := checkAccept(t, f, headSHA)
	if acc != nil || err != nil || !strings.Contains(why, "the head was force-pushed (2026-12-07 10:40:00 UTC, to ec26c3e57ca3) after this run began") {
		t.Errorf("CheckAccept: %+v, %q, %v; want refused for the force-push", acc, why, err)
	}
}

// A timeline longer than the 30 pages read fails closed: before the fix the
// rest was silently not read (a later force-push or relabel unseen).
func TestRegression_TimelineCutOffAfter30Pages(t *testing.T) {
	f := acceptWorld(t)
	evs := make([]githubfake.TimelineEvent, 3000)
	for i := range evs {
		evs[i] = githubfake.TimelineEvent{Event: "commented", Actor: githubfake.User{Login: "reader", Type: "User"}, CreatedAt: runBegan.Add(21 * time.Minute)}
	}
	f.AddTimeline(prNum, evs...)
	acc, _, err := checkAccept(t, f, headSHA)
	if acc != nil || err == nil || !strings.Contains(err.Error(), "reading #2's timeline: timeline too long: not checked") {
		t.Errorf("CheckAccept: %+v, %v; want an error, timeline too long", acc, err)
	}
}

// acceptedStep is the gate step, failing, with a writer's acceptance of head
// (also the pull_request event's head) and the gate's measured head commit measured
// ("": none, the checkout's HEAD in dir counts).
func acceptedStep(t *testing.T, dir, head, measured string) *stepHarness {
	t.Helper()
	results := filepath.Join(t.TempDir(), "results")
	if err := os.MkdirAll(results, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &fakeGate{out: results, gr: rounds.Outcome{Scenario: result.Scenario{Name: "demo-api"}, Verdict: regressed(), Head: rounds.SideResults{Commit: measured}}}
	s := newStep(t, nil, dir, g)
	b, err := os.ReadFile("testdata/pull_request-opened.json")
	if err != nil {
		t.Fatal(err)
	}
	ev := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(ev, bytes.ReplaceAll(b, []byte(headSHA), []byte(head)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.r.env["GITHUB_EVENT_PATH"] = ev
	acc, _ := json.Marshal(verdict.Acceptance{By: "maintainer", Permission: "write", Label: verdict.AcceptLabel, HeadSHA: head, LabeledAt: runBegan})
	s.r.env[action.AcceptedEnv] = string(acc)
	return s
}

// The acceptance applies only to the commit the gate measured: the accepted
// head itself, or a merge commit whose second parent it is (checkout's
// refs/pull/N/merge). Before the fix any measured commit was accepted.
func TestRegression_AcceptAppliedToACommitNotMeasured(t *testing.T) {
	s := acceptedStep(t, "", headSHA, otherHead)
	if res := s.run(t); res.ExitCode != 1 {
		t.Errorf("another commit measured: exit %d, want 1", res.ExitCode)
	}
	if !strings.Contains(s.stdout.String(), "the commit measured, 111111111111, is not the accepted head ec26c3e57ca3 nor a merge of it: not accepted") {
		t.Errorf("no warning naming the measured commit:\n%s", s.stdout.String())
	}
	s = acceptedStep(t, "", headSHA, headSHA+"+dirty")
	if res := s.run(t); res.ExitCode != 1 || !strings.Contains(s.stdout.String(), "had uncommitted changes: not accepted") {
		t.Errorf("a dirty head: exit %d; want 1 and why:\n%s", res.ExitCode, s.stdout.String())
	}

	// A checkout of the merge commit (base, head): HEAD^2 is the accepted head.
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := rounds.Git(context.Background(), dir, append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if err != nil {
			t.Skip("git:", err)
		}
		return out
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "base")
	git("checkout", "-q", "-b", "feature")
	if err := os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte(demoScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-qm", "head")
	head := git("rev-parse", "HEAD")
	git("checkout", "-q", "main")
	git("merge", "-q", "--no-ff", "-m", "merge", "feature")
	merge := git("rev-parse", "HEAD")
	if s := acceptedStep(t, dir, head, ""); s.run(t).ExitCode != 0 {
		t.Errorf("a merge commit of the accepted head: not accepted:\n%s", s.stdout.String())
	}
	if s := acceptedStep(t, dir, merge, ""); s.run(t).ExitCode != 0 {
		t.Errorf("the accepted head itself checked out: not accepted:\n%s", s.stdout.String())
	}
	base := git("rev-parse", "HEAD^1")
	s = acceptedStep(t, dir, base, "")
	if res := s.run(t); res.ExitCode != 1 || !strings.Contains(s.stdout.String(), "merges "+result.ShortHash(head)+", not the accepted head "+result.ShortHash(base)) {
		t.Errorf("a merge of another head: exit %d; want 1 and why:\n%s", res.ExitCode, s.stdout.String())
	}

	// The shards' merge job has no checkout: the shards' measured commit is GITHUB_SHA,
	// GitHub's merge commit of the event's head; another is refused.
	s = acceptedStep(t, "", head, merge)
	s.r.env["GITHUB_SHA"] = merge
	if res := s.run(t); res.ExitCode != 0 {
		t.Errorf("GITHUB_SHA measured, no git: exit %d, want 0:\n%s", res.ExitCode, s.stdout.String())
	}
	s = acceptedStep(t, "", head, merge)
	if res := s.run(t); res.ExitCode != 1 {
		t.Errorf("a commit neither GITHUB_SHA nor in git: exit %d, want 1", res.ExitCode)
	}
}
