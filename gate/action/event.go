package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// Event is what loadgate needs of the payload at GITHUB_EVENT_PATH.
type Event struct {
	Name   string // GITHUB_EVENT_NAME: pull_request, workflow_dispatch, workflow_run, …
	Action string // the payload's action: opened, synchronize, completed, …

	// PR is 0 when none; for workflow_run, the listed one whose head is the run's, else the
	// first (a fork's list is empty: its number comes from the artifact).
	PR int

	BaseSHA, HeadSHA string // the pull request's (workflow_run: the run's head); push has no BaseSHA
	BaseRef, HeadRef string // branch names

	DefaultBranch string // workflow_dispatch, push: outside a pull request, base is its tip
	Before        string // push: the branch's tip before it ("" when the push created the branch)

	Fork bool // the head repository is another (or gone): read-only token, no secrets

	Inputs map[string]string // workflow_dispatch's inputs

	// Of the triggering run, for workflow_run.
	RunID         int64
	RunAttempt    int    // the triggering run's attempt
	RunEvent      string // the triggering run's event, e.g. pull_request
	RunConclusion string // success, failure, …
	HeadRepo      string // the head repository's owner/name

	Comment *IssueComment // issue_comment: the comment; PR is its pull request's number, 0 on an issue
}

// IssueComment is an issue_comment event's comment, as GitHub wrote it.
type IssueComment struct {
	ID          int64
	Body        string
	Login       string // its author
	UserType    string // "User", "Bot"
	Association string // author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …
	CreatedAt   time.Time
}

// ReadEvent parses the payload at env.EventPath; without one only Name is set.
func ReadEvent(env *Env) (Event, error) {
	if env == nil || env.EventPath == "" {
		ev := Event{}
		if env != nil {
			ev.Name = env.EventName
		}
		return ev, nil
	}
	data, err := os.ReadFile(env.EventPath)
	if err != nil {
		return Event{}, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
	}
	return ParseEvent(env.EventName, data)
}

// ParseEvent parses a payload of event name (of an unknown event, only the action).
func ParseEvent(name string, data []byte) (Event, error) {
	ev := Event{Name: name}
	if github.EventForType(name) == nil {
		var p struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return Event{}, fmt.Errorf("event payload (%s): %w", orNone(name), err)
		}
		ev.Action = p.Action
		return ev, nil
	}
	payload, err := github.ParseWebHook(name, data)
	if err != nil {
		return Event{}, fmt.Errorf("event payload (%s): %w", name, err)
	}
	switch p := payload.(type) {
	case *github.PullRequestEvent:
		ev.Action = p.GetAction()
		err = ev.pullRequest(p.PullRequest, p.GetNumber())
	case *github.PullRequestTargetEvent:
		ev.Action = p.GetAction()
		err = ev.pullRequest(p.PullRequest, p.GetNumber())
	case *github.PullRequestReviewEvent:
		ev.Action = p.GetAction()
		err = ev.pullRequest(p.PullRequest, 0)
	case *github.PullRequestReviewCommentEvent:
		ev.Action = p.GetAction()
		err = ev.pullRequest(p.PullRequest, 0)
	case *github.WorkflowRunEvent:
		ev.Action = p.GetAction()
		err = ev.workflowRun(p.WorkflowRun)
	case *github.IssueCommentEvent:
		ev.Action = p.GetAction()
		if is := p.GetIssue(); is != nil && is.IsPullRequest() { // (a value receiver)
			ev.PR = is.GetNumber()
		}
		c := p.GetComment()
		ev.Comment = &IssueComment{ID: c.GetID(), Body: c.GetBody(), Login: c.GetUser().GetLogin(),
			UserType: c.GetUser().GetType(), Association: c.GetAuthorAssociation(), CreatedAt: c.GetCreatedAt().Time}
	case *github.WorkflowDispatchEvent:
		ev.Inputs, err = dispatchInputs(p.Inputs)
		ev.DefaultBranch = p.GetRepo().GetDefaultBranch()
		ev.HeadRef = strings.TrimPrefix(p.GetRef(), "refs/heads/")
	case *github.PushEvent:
		ev.Action = p.GetAction()
		ev.HeadSHA = p.GetAfter()
		if b := p.GetBefore(); strings.Trim(b, "0") != "" {
			ev.Before = b
		}
		ev.HeadRef = strings.TrimPrefix(p.GetRef(), "refs/heads/")
		ev.DefaultBranch = p.GetRepo().GetDefaultBranch()
	default:
		// Another event: only its top-level action.
		var a struct {
			Action string `json:"action"`
		}
		_ = json.Unmarshal(data, &a) // valid JSON: ParseWebHook decoded it
		ev.Action = a.Action
	}
	if err != nil {
		return Event{}, fmt.Errorf("event payload (%s): %w", name, err)
	}
	return ev, nil
}

// pullRequest fills ev from pr; number is the payload's, for a pr without one.
func (ev *Event) pullRequest(pr *github.PullRequest, number int) error {
	if pr == nil {
		return errors.New("no pull_request")
	}
	ev.PR = pr.GetNumber()
	if ev.PR == 0 {
		ev.PR = number
	}
	ev.BaseSHA, ev.BaseRef = pr.GetBase().GetSHA(), pr.GetBase().GetRef()
	ev.HeadSHA, ev.HeadRef = pr.GetHead().GetSHA(), pr.GetHead().GetRef()
	ev.Fork = isFork(pr.GetHead().GetRepo(), pr.GetBase().GetRepo())
	return nil
}

func (ev *Event) workflowRun(wr *github.WorkflowRun) error {
	if wr == nil {
		return errors.New("no workflow_run")
	}
	ev.RunID, ev.RunEvent, ev.RunConclusion = wr.GetID(), wr.GetEvent(), wr.GetConclusion()
	ev.RunAttempt = wr.GetRunAttempt()
	ev.HeadSHA, ev.HeadRef = wr.GetHeadSHA(), wr.GetHeadBranch()
	ev.HeadRepo = wr.GetHeadRepository().GetFullName()
	ev.Fork = isFork(wr.GetHeadRepository(), wr.GetRepository())
	// Prefer the pull request whose head is the run's (PublishFromDir rechecks).
	for i, pr := range wr.PullRequests {
		head := pr.GetHead().GetSHA()
		if i == 0 || head == wr.GetHeadSHA() {
			ev.PR, ev.BaseSHA, ev.BaseRef = pr.GetNumber(), pr.GetBase().GetSHA(), pr.GetBase().GetRef()
		}
		if head == wr.GetHeadSHA() {
			break
		}
	}
	return nil
}

// dispatchInputs turns workflow_dispatch's inputs into strings (null as "", others as JSON).
func dispatchInputs(raw json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	var in map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, fmt.Errorf("inputs: %w", err)
		}
	}
	for k, v := range in {
		switch v := v.(type) {
		case string:
			out[k] = v
		case nil:
			out[k] = ""
		default:
			b, _ := json.Marshal(v)
			out[k] = string(b)
		}
	}
	return out, nil
}

// isFork: head is another repository than base, or is gone.
func isFork(head, base *github.Repository) bool {
	if head == nil || base == nil {
		return head == nil && base != nil
	}
	if head.GetFullName() != "" && base.GetFullName() != "" {
		return !strings.EqualFold(head.GetFullName(), base.GetFullName())
	}
	return head.GetID() != base.GetID()
}

func orNone(s string) string {
	if s == "" {
		return "no event name"
	}
	return s
}

// HistoryWritable refuses the history on any event but push, workflow_dispatch, schedule
// or none: a change under review must not write the history it is judged against.
func HistoryWritable(event string) error {
	switch event {
	case "", "push", "workflow_dispatch", "schedule":
		return nil
	}
	return fmt.Errorf("the history is written on a push to a protected branch, never on a %s event; record it in the push workflow", event)
}
