package action

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-github/v62/github"
)

// Event is what loadgate needs of the payload at GITHUB_EVENT_PATH.
type Event struct {
	Name   string // GITHUB_EVENT_NAME: pull_request, workflow_dispatch, workflow_run, …
	Action string // the payload's action: opened, synchronize, completed, …

	// PR is the pull request number, 0 when none. For workflow_run it is the
	// listed one whose head is the run's (else the first); a fork's list is
	// empty, so its number comes from the artifact.
	PR int

	// BaseSHA and HeadSHA are the pull request's commits (for workflow_run, the
	// run's head and the listed pull request's base). For push, BaseSHA is empty.
	BaseSHA, HeadSHA string
	BaseRef, HeadRef string // branch names

	// DefaultBranch is the repository's default branch (workflow_dispatch,
	// push): a run outside a pull request compares against its tip.
	DefaultBranch string

	// Fork: the head repository is not the base one (or is gone), so the token
	// is read-only and secrets are withheld.
	Fork bool

	// Inputs are workflow_dispatch's inputs, as strings.
	Inputs map[string]string

	// Of the triggering run, for workflow_run.
	RunID         int64
	RunEvent      string // the triggering run's event, e.g. pull_request
	RunConclusion string // success, failure, …
	HeadRepo      string // the head repository's owner/name
}

// ReadEvent parses the payload at env.EventPath; without one (outside
// Actions) only Name is set.
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

// ParseEvent parses a payload of event name (GITHUB_EVENT_NAME). Of an event
// go-github does not know only the action is read. Non-JSON, or a
// pull_request or workflow_run payload without its object, is an error.
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
	case *github.WorkflowDispatchEvent:
		ev.Inputs, err = dispatchInputs(p.Inputs)
		ev.DefaultBranch = p.GetRepo().GetDefaultBranch()
		ev.HeadRef = strings.TrimPrefix(p.GetRef(), "refs/heads/")
	case *github.PushEvent:
		ev.Action = p.GetAction()
		ev.HeadSHA = p.GetAfter()
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

// pullRequest fills ev from pr; number is the payload's, used when pr has
// none.
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

// workflowRun fills ev from a workflow_run event's run.
func (ev *Event) workflowRun(wr *github.WorkflowRun) error {
	if wr == nil {
		return errors.New("no workflow_run")
	}
	ev.RunID, ev.RunEvent, ev.RunConclusion = wr.GetID(), wr.GetEvent(), wr.GetConclusion()
	ev.HeadSHA, ev.HeadRef = wr.GetHeadSHA(), wr.GetHeadBranch()
	ev.HeadRepo = wr.GetHeadRepository().GetFullName()
	ev.Fork = isFork(wr.GetHeadRepository(), wr.GetRepository())
	// Prefer the pull request whose head is the run's; PublishFromDir checks
	// it is still so.
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

// dispatchInputs turns workflow_dispatch's inputs into strings: null as "",
// booleans and numbers as JSON.
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

// HistoryWritable refuses to write the history (gate/history's data
// branch) for any event but a push, a manual or a scheduled run, or none
// (outside Actions): a change under review must not write the history it
// is judged against.
func HistoryWritable(event string) error {
	switch event {
	case "", "push", "workflow_dispatch", "schedule":
		return nil
	}
	return fmt.Errorf("the history is written on a push to a protected branch, never on a %s event; record it in the push workflow", event)
}
