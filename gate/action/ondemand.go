package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// SlashCommand is the pull request comment that runs the gate on demand.
const SlashCommand = "/loadgate"

// The on-demand step's outputs (ondemand/action.yml).
const (
	OutRun     = "run"      // "true" when the gate is to run
	OutPR      = "pr"       // the pull request's number
	OutHeadSHA = "head-sha" // the head commit, pinned: check it out by SHA
	OutBaseSHA = "base-sha" // the base commit: the gate's base input
	OutBaseRef = "base-ref" // the base branch
)

// OnDemand is a /loadgate comment's request, checked: the pull request and its commits.
type OnDemand struct {
	PR               int
	HeadSHA, BaseSHA string
	BaseRef          string
	By               string // the commenter
}

// collaborator is an author_association that may run the gate.
func collaborator(assoc string) bool {
	switch assoc {
	case "OWNER", "MEMBER", "COLLABORATOR":
		return true
	}
	return false
}

// parseOnDemand reads a comment's first line: "/loadgate" or "/loadgate COMMIT";
// ok false when it is not the command, why when it is, malformed.
func parseOnDemand(body string) (commit string, ok bool, why string) {
	first, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	f := strings.Fields(first)
	if len(f) == 0 || f[0] != SlashCommand {
		return "", false, ""
	}
	switch {
	case len(f) == 1:
		return "", true, ""
	case len(f) == 2 && shaRE.MatchString(f[1]) && len(f[1]) <= 40:
		return strings.ToLower(f[1]), true, ""
	}
	return "", true, fmt.Sprintf("%q: write %s, or %s COMMIT (the head commit you read, 7 to 40 hex digits)", clipName(first), SlashCommand, SlashCommand)
}

// CheckOnDemand decides whether ev, an issue_comment event, asks for a gate and may
// have one: a new /loadgate comment on an open pull request, by a person whose
// author_association is OWNER, MEMBER or COLLABORATOR and whose permission (read
// through the API) is write or more. The head is pinned at the pull request's head
// now, which a COMMIT argument must match; a bare /loadgate is refused when the
// timeline shows a push after the comment (headMovedSince). nil and "" when the
// comment is no command.
func CheckOnDemand(ctx context.Context, c *github.Client, owner, repo string, ev Event) (*OnDemand, string, error) {
	if ev.Name != "issue_comment" || ev.Comment == nil {
		return nil, fmt.Sprintf("%s is not an issue_comment event", orNone(ev.Name)), nil
	}
	commit, ok, why := parseOnDemand(ev.Comment.Body)
	switch {
	case !ok:
		return nil, "", nil
	case why != "":
		return nil, why, nil
	case ev.Action != "created":
		return nil, fmt.Sprintf("the comment was %s, not created: only a new comment runs the gate", orNone(ev.Action)), nil
	case ev.PR == 0:
		return nil, "the comment is on an issue, not a pull request", nil
	case !collaborator(ev.Comment.Association):
		return nil, fmt.Sprintf("@%s's author association is %s: only an owner, member or collaborator runs the gate", ev.Comment.Login, orWord(ev.Comment.Association, "none")), nil
	case ev.Comment.UserType != "User" || !loginRE.MatchString(ev.Comment.Login):
		return nil, fmt.Sprintf("the comment is by %s, a %s: only a person runs the gate", ev.Comment.Login, strings.ToLower(orWord(ev.Comment.UserType, "non-user"))), nil
	}
	perm, _, err := c.Repositories.GetPermissionLevel(ctx, owner, repo, ev.Comment.Login)
	if err != nil {
		if StatusOf(err) == http.StatusNotFound {
			return nil, fmt.Sprintf("@%s is not a collaborator", ev.Comment.Login), nil
		}
		return nil, "", fmt.Errorf("reading @%s's permission: %w", ev.Comment.Login, err)
	}
	switch perm.GetPermission() {
	case "admin", "maintain", "write":
	default:
		return nil, fmt.Sprintf("@%s has %s access: running the gate on demand needs write access", ev.Comment.Login, accessWord(perm.GetPermission())), nil
	}
	pr, _, err := c.PullRequests.Get(ctx, owner, repo, ev.PR)
	if err != nil {
		return nil, "", fmt.Errorf("reading #%d: %w", ev.PR, err)
	}
	head, base := strings.ToLower(pr.GetHead().GetSHA()), strings.ToLower(pr.GetBase().GetSHA())
	switch {
	case pr.GetState() != "open":
		return nil, fmt.Sprintf("#%d is %s", ev.PR, orWord(pr.GetState(), "not open")), nil
	case !shaRE.MatchString(head) || !shaRE.MatchString(base):
		return nil, "", fmt.Errorf("#%d: no head or base commit in the API's answer", ev.PR)
	case commit != "" && !strings.HasPrefix(head, commit):
		return nil, fmt.Sprintf("#%d's head is %s, not %s: a new push since? Comment again with the head you read", ev.PR, result.ShortHash(head), commit), nil
	}
	if commit == "" {
		moved, err := headMovedSince(ctx, c, owner, repo, ev.PR, ev.Comment.CreatedAt)
		switch {
		case errors.Is(err, errTimelineTooLong):
			return nil, fmt.Sprintf("#%d's %v: write %s COMMIT with the head you read", ev.PR, errTimelineTooLong, SlashCommand), nil
		case err != nil:
			return nil, "", err
		case moved != "":
			return nil, fmt.Sprintf("#%d's head changed after the comment (%s): comment again, or write %s COMMIT with the head you read", ev.PR, moved, SlashCommand), nil
		}
	}
	return &OnDemand{PR: ev.PR, HeadSHA: head, BaseSHA: base, BaseRef: pr.GetBase().GetRef(), By: ev.Comment.Login}, "", nil
}

// headMovedSince says how pr's head changed after t, as far as the timeline tells: a
// force-push (its time is GitHub's) or a commit dated after t (a git date, which the
// pusher sets: so a /loadgate COMMIT pins exactly, a bare /loadgate only this far); ""
// when neither, or t is unknown.
func headMovedSince(ctx context.Context, c *github.Client, owner, repo string, pr int, t time.Time) (string, error) {
	if t.IsZero() {
		return "", nil
	}
	moved := ""
	err := readTimeline(ctx, c, owner, repo, pr, func(e *github.Timeline) {
		switch e.GetEvent() {
		case "head_ref_force_pushed":
			if at := e.GetCreatedAt().Time; at.After(t) {
				moved = fmt.Sprintf("force-pushed %s", stamp(at))
			}
		case "committed":
			if at := e.GetCommitter().GetDate().Time; at.After(t) {
				moved = fmt.Sprintf("commit %s dated %s", result.ShortHash(e.GetSHA()), stamp(at))
			}
		}
	})
	return moved, err
}

// OnDemandStep is `loadgate ondemand --github`, the first step of the on-demand
// workflow (ondemand/action.yml), with the github-token input: CheckOnDemand, then
// the outputs the workflow checks out and gates with, its API work bounded by
// apiTimeout. It fails on a bad environment, or unusable (exit 3) on an API that
// did not answer; a refused comment sets run=false and says why.
func OnDemandStep(ctx context.Context, w io.Writer, getenv func(string) string, hc *http.Client) error {
	a := githubactions.New(githubactions.WithWriter(w), githubactions.WithGetenv(getenv))
	token := a.GetInput(InToken)
	MaskSecrets(a, token)
	env, ev, err := envAndEvent(getenv)
	if err != nil {
		return err
	}
	if token == "" || env.Owner == "" {
		return fmt.Errorf("no github-token or GITHUB_REPOSITORY: the commenter cannot be checked")
	}
	c, err := NewClient(env, token, hc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	od, why, err := CheckOnDemand(ctx, c, env.Owner, env.Repo, ev)
	if err != nil {
		return rounds.Unusable(fmt.Errorf("GitHub API: %w", err))
	}
	if od == nil {
		if why != "" {
			a.Noticef("loadgate: %s: the gate does not run", why)
		} else {
			a.Infof("loadgate: the comment is not %s: the gate does not run", SlashCommand)
		}
		return setOutputs(a, &Outcome{}, [][2]string{{OutRun, "false"}})
	}
	a.Noticef("loadgate: %s by @%s on #%d: gating head %s (pinned: #%d's head now) against base %s (%s)", SlashCommand, od.By, od.PR, od.HeadSHA, od.PR, od.BaseSHA, od.BaseRef)
	return setOutputs(a, &Outcome{}, [][2]string{{OutRun, "true"}, {OutPR, strconv.Itoa(od.PR)},
		{OutHeadSHA, od.HeadSHA}, {OutBaseSHA, od.BaseSHA}, {OutBaseRef, od.BaseRef}})
}

// accessWord is a permission as a sentence says it: "read", "no".
func accessWord(p string) string {
	if p == "" || p == "none" {
		return "no"
	}
	return p
}

// onDemandHead is, on an issue_comment event, the head its workflow checked out
// by SHA into dir (the commit the gate measures): the event names no commit.
func onDemandHead(ctx context.Context, dir string, ev *Event) {
	if ev.Name != "issue_comment" || ev.PR == 0 || ev.HeadSHA != "" {
		return
	}
	if c, err := rounds.Git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}"); err == nil && shaRE.MatchString(c) {
		ev.HeadSHA = strings.ToLower(c)
	}
}

// StatusContext is the commit status an on-demand gate sets on the head commit,
// per base branch: a status of a gate against another base does not satisfy it.
func StatusContext(baseRef, scenario string) string { return "loadgate/" + baseRef + "/" + scenario }

// postStatus sets the on-demand gate's commit status on its head (an issue_comment
// run's check belongs to the default branch's commit, not the pull request's), so a
// ruleset can require it. What fails is a notice: the verdict still decides the step.
func postStatus(ctx context.Context, a *githubactions.Action, env *Env, token string, ev Event, m Manifest, hc *http.Client, out *Outcome) {
	if ev.Name != "issue_comment" || !shaRE.MatchString(m.HeadSHA) || token == "" || env == nil || env.Owner == "" {
		return
	}
	c, err := NewClient(env, token, hc)
	if err != nil {
		out.warning(a, "loadgate: no commit status: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	pr, _, err := c.PullRequests.Get(ctx, env.Owner, env.Repo, ev.PR)
	if err == nil && pr.GetBase().GetRef() == "" {
		err = errors.New("no base branch in the API's answer")
	}
	if err != nil {
		out.notice(a, "loadgate: no commit status on %s: reading #%d's base branch: %v", result.ShortHash(m.HeadSHA), ev.PR, err)
		return
	}
	sc := StatusContext(pr.GetBase().GetRef(), m.Scenario)
	state := "success"
	switch {
	case m.Verdict == verdict.Unusable:
		state = "error"
	case m.ExitCode != 0:
		state = "failure"
	}
	desc := fmt.Sprintf("%s (exit %d)", m.Verdict, m.ExitCode)
	if m.AcceptedBy != "" {
		desc = fmt.Sprintf("%s, accepted by @%s (exit %d)", m.Verdict, m.AcceptedBy, m.ExitCode)
	}
	desc = fmt.Sprintf("%s: head %s against %s", desc, result.ShortHash(m.HeadSHA), pr.GetBase().GetRef())
	st := &github.RepoStatus{State: github.String(state), Context: github.String(sc),
		Description: github.String(clipName(desc))}
	if u := linkURL(env.RunURL()); u != "" {
		st.TargetURL = github.String(u)
	}
	if _, _, err := c.Repositories.CreateStatus(ctx, env.Owner, env.Repo, m.HeadSHA, st); err != nil {
		out.notice(a, "loadgate: no commit status on %s (the token needs statuses: write): %v", result.ShortHash(m.HeadSHA), err)
		return
	}
	a.Infof("loadgate: commit status %s %s on %s", sc, state, result.ShortHash(m.HeadSHA))
}
