package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/verdict"
	"github.com/loadgate/loadgate/internal/strictjson"
)

// OutAccepted is the accept step's output (and the gate step's LOADGATE_ACCEPTED): the
// checked verdict.Acceptance as JSON, "" when none.
const OutAccepted = "accepted"

// AcceptedEnv carries the accept step's output into the gate step.
const AcceptedEnv = "LOADGATE_ACCEPTED"

// AcceptQuery is the pull request, the head commit judged and the run judging it.
type AcceptQuery struct {
	Owner, Repo string
	PR          int
	HeadSHA     string // the event's head: what the gate judges
	RunID       int64  // this workflow run
	Attempt     int    // its attempt (GITHUB_RUN_ATTEMPT): only a re-run is accepted
}

// maxTimelinePages bounds the timeline read (100 events a page).
const maxTimelinePages = 30

// errTimelineTooLong: the timeline has more pages than maxTimelinePages; what was not
// read was not checked, so nothing is accepted or pinned on it.
var errTimelineTooLong = fmt.Errorf("timeline too long: not checked (over %d events)", maxTimelinePages*100)

// CheckAccept reports whether q's pull request carries verdict.AcceptLabel, added by a
// person with write access after the previous attempt of run q.RunID ended, on a re-run
// (q.Attempt > 1) of the same head q.HeadSHA, with no force-push since the run began: the
// label accepts the verdict its author saw. why says why a label present does not accept
// ("" when there is no label, or it accepts); err is for an API that did not answer.
func CheckAccept(ctx context.Context, c *github.Client, q AcceptQuery) (acc *verdict.Acceptance, why string, err error) {
	pr, _, err := c.PullRequests.Get(ctx, q.Owner, q.Repo, q.PR)
	if err != nil {
		return nil, "", fmt.Errorf("reading #%d: %w", q.PR, err)
	}
	labelled := false
	for _, l := range pr.Labels {
		labelled = labelled || strings.EqualFold(l.GetName(), verdict.AcceptLabel)
	}
	if !labelled {
		return nil, "", nil
	}
	if h := pr.GetHead().GetSHA(); !strings.EqualFold(h, q.HeadSHA) {
		return nil, fmt.Sprintf("#%d's head is now %s, this run judges %s: a label accepts only the head it was added on", q.PR, result.ShortHash(h), result.ShortHash(q.HeadSHA)), nil
	}
	if q.Attempt < 2 {
		return nil, fmt.Sprintf("this is attempt %d of run %d: the label accepts only a re-run, once added after the failing attempt ended", max(q.Attempt, 1), q.RunID), nil
	}
	run, _, err := c.Actions.GetWorkflowRunByID(ctx, q.Owner, q.Repo, q.RunID)
	if err != nil {
		return nil, "", fmt.Errorf("reading run %d (the token needs actions: read): %w", q.RunID, err)
	}
	if !strings.EqualFold(run.GetHeadSHA(), q.HeadSHA) {
		return nil, fmt.Sprintf("run %d is of head %s, not %s", q.RunID, result.ShortHash(run.GetHeadSHA()), result.ShortHash(q.HeadSHA)), nil
	}
	began := run.GetCreatedAt().Time
	if began.IsZero() {
		return nil, fmt.Sprintf("run %d has no start time", q.RunID), nil
	}
	prev, _, err := c.Actions.GetWorkflowRunAttempt(ctx, q.Owner, q.Repo, q.RunID, q.Attempt-1, nil)
	if err != nil {
		return nil, "", fmt.Errorf("reading attempt %d of run %d (the token needs actions: read): %w", q.Attempt-1, q.RunID, err)
	}
	ended := prev.GetUpdatedAt().Time
	switch {
	case !strings.EqualFold(prev.GetHeadSHA(), q.HeadSHA):
		return nil, fmt.Sprintf("attempt %d of run %d is of head %s, not %s", q.Attempt-1, q.RunID, result.ShortHash(prev.GetHeadSHA()), result.ShortHash(q.HeadSHA)), nil
	case prev.GetStatus() != "completed" || ended.IsZero():
		return nil, fmt.Sprintf("attempt %d of run %d has not ended (%s)", q.Attempt-1, q.RunID, orWord(prev.GetStatus(), "no status")), nil
	}
	label, pushed, err := lastLabel(ctx, c, q, began)
	if err != nil {
		return nil, "", err
	}
	at := label.GetCreatedAt().Time
	who := label.GetActor()
	switch {
	case label == nil:
		return nil, fmt.Sprintf("no event of #%d's timeline adds the label", q.PR), nil
	case pushed != nil:
		return nil, fmt.Sprintf("the head was force-pushed (%s, to %s) after this run began", stamp(pushed.GetCreatedAt().Time), result.ShortHash(pushed.GetCommitID())), nil
	case !at.After(ended):
		return nil, fmt.Sprintf("the label was added %s, before attempt %d of this run ended (%s): remove it, add it again and re-run to accept head %s", stamp(at), q.Attempt-1, stamp(ended), result.ShortHash(q.HeadSHA)), nil
	case who == nil || !loginRE.MatchString(who.GetLogin()):
		return nil, "the label's event names no user", nil
	case who.GetType() != "User":
		return nil, fmt.Sprintf("the label was added by %s, a %s: only a person with write access accepts", who.GetLogin(), strings.ToLower(orWord(who.GetType(), "non-user"))), nil
	case label.PerformedViaGithubApp != nil:
		return nil, fmt.Sprintf("the label was added through the app %s: only a person with write access accepts, by hand", label.PerformedViaGithubApp.GetSlug()), nil
	}
	perm, _, err := c.Repositories.GetPermissionLevel(ctx, q.Owner, q.Repo, who.GetLogin())
	if err != nil {
		if StatusOf(err) == http.StatusNotFound {
			return nil, fmt.Sprintf("@%s is not a collaborator: an accept needs write access", who.GetLogin()), nil
		}
		return nil, "", fmt.Errorf("reading @%s's permission: %w", who.GetLogin(), err)
	}
	switch p := perm.GetPermission(); p {
	case "admin", "maintain", "write":
		return &verdict.Acceptance{By: who.GetLogin(), Permission: p, Label: verdict.AcceptLabel,
			HeadSHA: strings.ToLower(q.HeadSHA), LabeledAt: at.UTC(), VerdictExitCode: 1}, "", nil
	default:
		if p == "none" {
			p = ""
		}
		return nil, fmt.Sprintf("@%s has %s access: an accept needs write access", who.GetLogin(), orWord(p, "no")), nil
	}
}

// lastLabel is the timeline's last event adding the label, and the last force-push after
// began (nil when none), whatever the label's time.
func lastLabel(ctx context.Context, c *github.Client, q AcceptQuery, began time.Time) (label, pushed *github.Timeline, err error) {
	err = readTimeline(ctx, c, q.Owner, q.Repo, q.PR, func(e *github.Timeline) {
		switch e.GetEvent() {
		case "labeled":
			if strings.EqualFold(e.GetLabel().GetName(), verdict.AcceptLabel) {
				label = e
			}
		case "head_ref_force_pushed":
			if e.GetCreatedAt().Time.After(began) {
				pushed = e
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return label, pushed, nil
}

// readTimeline calls fn on each event of pr's timeline, oldest first. A timeline of more
// than maxTimelinePages pages is errTimelineTooLong: fail closed.
func readTimeline(ctx context.Context, c *github.Client, owner, repo string, pr int, fn func(*github.Timeline)) error {
	opt := &github.ListOptions{PerPage: 100}
	for page := 0; page < maxTimelinePages; page++ {
		evs, resp, err := c.Issues.ListIssueTimeline(ctx, owner, repo, pr, opt)
		if err != nil {
			return fmt.Errorf("reading #%d's timeline: %w", pr, err)
		}
		for _, e := range evs {
			fn(e)
		}
		if resp == nil || resp.NextPage == 0 {
			return nil
		}
		opt.Page = resp.NextPage
	}
	return fmt.Errorf("reading #%d's timeline: %w", pr, errTimelineTooLong)
}

// loginRE is a GitHub login (a bot's with its "[bot]").
var loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// AcceptStep is `loadgate accept --github`, the Action's step before the gate: on a
// pull_request event it checks the label with the github-token input (CheckAccept) and
// sets OutAccepted. It never fails the step: what it could not do is a warning.
func AcceptStep(ctx context.Context, w io.Writer, getenv func(string) string, hc *http.Client) error {
	a := githubactions.New(githubactions.WithWriter(w), githubactions.WithGetenv(getenv))
	token := a.GetInput(InToken)
	MaskSecrets(a, token)
	env, ev, err := envAndEvent(getenv)
	if err != nil {
		return err
	}
	switch {
	case ev.Name != "pull_request" || ev.PR == 0:
		a.Infof("loadgate: %s is not a pull_request event: no %s label to check", orNone(ev.Name), verdict.AcceptLabel)
		return nil
	case token == "" || env.Owner == "":
		a.Infof("loadgate: no github-token or GITHUB_REPOSITORY: the %s label is not checked", verdict.AcceptLabel)
		return nil
	}
	c, err := NewClient(env, token, hc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	acc, why, err := CheckAccept(ctx, c, AcceptQuery{Owner: env.Owner, Repo: env.Repo, PR: ev.PR, HeadSHA: ev.HeadSHA, RunID: env.RunID, Attempt: env.RunAttempt})
	switch {
	case err != nil:
		a.Warningf("loadgate: the %s label is not checked: %v", verdict.AcceptLabel, err)
	case why != "":
		a.Warningf("loadgate: the %s label does not accept this run: %s", verdict.AcceptLabel, why)
	case acc != nil:
		b, _ := json.Marshal(acc)
		a.Infof("loadgate: %s by @%s (%s access) on head %s: a failing verdict of this run will be accepted", verdict.AcceptLabel, acc.By, acc.Permission, result.ShortHash(acc.HeadSHA))
		return setOutputs(a, &Outcome{}, [][2]string{{OutAccepted, string(b)}})
	default:
		a.Infof("loadgate: no %s label on #%d", verdict.AcceptLabel, ev.PR)
	}
	return nil
}

// acceptedFor reads the accept step's output (AcceptedEnv) for the gate step: the
// acceptance when it is of this pull_request event's head, else nil and why not.
func acceptedFor(getenv func(string) string, ev Event) (*verdict.Acceptance, string) {
	s := strings.TrimSpace(getenv(AcceptedEnv))
	if s == "" {
		return nil, ""
	}
	var acc verdict.Acceptance
	if err := strictjson.Decode(strings.NewReader(s), 1<<12, &acc); err != nil {
		return nil, fmt.Sprintf("%s does not read: %v", AcceptedEnv, err)
	}
	switch {
	case ev.Name != "pull_request":
		return nil, fmt.Sprintf("an accept applies to a pull_request event, not %s", orNone(ev.Name))
	case acc.Label != verdict.AcceptLabel || !loginRE.MatchString(acc.By) || strings.HasSuffix(acc.By, "[bot]"):
		return nil, fmt.Sprintf("%s names no person and label", AcceptedEnv)
	case !shaRE.MatchString(acc.HeadSHA) || !strings.EqualFold(acc.HeadSHA, ev.HeadSHA):
		return nil, fmt.Sprintf("the accept is of head %s, this run judges %s", result.ShortHash(acc.HeadSHA), result.ShortHash(ev.HeadSHA))
	}
	switch acc.Permission {
	case "admin", "maintain", "write":
	default:
		return nil, fmt.Sprintf("the accept's permission %q is not write access", clipName(acc.Permission))
	}
	return &acc, ""
}
