package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Event is what loadgate needs of the webhook payload that started the
// workflow (the file at GITHUB_EVENT_PATH).
type Event struct {
	Name   string // GITHUB_EVENT_NAME: pull_request, workflow_dispatch, workflow_run, …
	Action string // the payload's action: opened, synchronize, completed, …

	// PR is the pull request number, 0 when there is none: the payload's for
	// pull_request; for workflow_run, the listed pull request whose head is
	// the run's head, else the first listed (GitHub leaves that list empty
	// when the pull request comes from a fork: the number then comes from
	// the artifact, see PublishFromDir).
	PR int

	// BaseSHA and HeadSHA are the pull request's base and head commits
	// (pull_request), or for workflow_run the triggering run's head commit
	// and, when it lists a pull request, that pull request's base commit.
	BaseSHA, HeadSHA string
	BaseRef, HeadRef string // branch names

	// Fork is true when the head repository is not the base repository (or
	// is gone): its GITHUB_TOKEN is read-only and secrets are withheld.
	Fork bool

	// Inputs are workflow_dispatch's inputs, as strings.
	Inputs map[string]string

	// Of the triggering run, for workflow_run.
	RunID         int64
	RunEvent      string // the triggering run's event, e.g. pull_request
	RunConclusion string // success, failure, …
}

// ReadEvent reads and parses the payload at env.EventPath. Without an event
// path (outside Actions) it returns an Event with only Name set.
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

type repoJSON struct {
	FullName string `json:"full_name"`
	ID       int64  `json:"id"`
}

type refJSON struct {
	Ref  string    `json:"ref"`
	SHA  string    `json:"sha"`
	Repo *repoJSON `json:"repo"`
}

type prJSON struct {
	Number int     `json:"number"`
	Head   refJSON `json:"head"`
	Base   refJSON `json:"base"`
}

type payloadJSON struct {
	Action      string          `json:"action"`
	Number      int             `json:"number"`
	PullRequest *prJSON         `json:"pull_request"`
	Repository  *repoJSON       `json:"repository"`
	Inputs      map[string]any  `json:"inputs"`
	WorkflowRun *workflowRunDoc `json:"workflow_run"`
}

type workflowRunDoc struct {
	ID             int64     `json:"id"`
	Event          string    `json:"event"`
	Conclusion     string    `json:"conclusion"`
	HeadSHA        string    `json:"head_sha"`
	HeadBranch     string    `json:"head_branch"`
	PullRequests   []prJSON  `json:"pull_requests"`
	HeadRepository *repoJSON `json:"head_repository"`
	Repository     *repoJSON `json:"repository"`
}

// ParseEvent parses a webhook payload of the event named name.
func ParseEvent(name string, data []byte) (Event, error) {
	var p payloadJSON
	if err := json.Unmarshal(data, &p); err != nil {
		return Event{}, fmt.Errorf("event payload (%s): %w", orNone(name), err)
	}
	ev := Event{Name: name, Action: p.Action}
	switch name {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		pr := p.PullRequest
		if pr == nil {
			return Event{}, errors.New("event payload (" + name + "): no pull_request")
		}
		ev.PR = pr.Number
		if ev.PR == 0 {
			ev.PR = p.Number
		}
		ev.BaseSHA, ev.BaseRef = pr.Base.SHA, pr.Base.Ref
		ev.HeadSHA, ev.HeadRef = pr.Head.SHA, pr.Head.Ref
		ev.Fork = isFork(pr.Head.Repo, pr.Base.Repo)
	case "workflow_run":
		wr := p.WorkflowRun
		if wr == nil {
			return Event{}, errors.New("event payload (workflow_run): no workflow_run")
		}
		ev.RunID, ev.RunEvent, ev.RunConclusion = wr.ID, wr.Event, wr.Conclusion
		ev.HeadSHA, ev.HeadRef = wr.HeadSHA, wr.HeadBranch
		ev.Fork = isFork(wr.HeadRepository, wr.Repository)
		// The list holds the open pull requests of the run's head branch,
		// with their current heads: the one whose head is the run's head is
		// preferred, else the first. Whoever comments checks that the pull
		// request's head is still the run's (PublishFromDir does).
		for i, pr := range wr.PullRequests {
			if i == 0 || pr.Head.SHA == wr.HeadSHA {
				ev.PR, ev.BaseSHA, ev.BaseRef = pr.Number, pr.Base.SHA, pr.Base.Ref
			}
			if pr.Head.SHA == wr.HeadSHA {
				break
			}
		}
	case "workflow_dispatch":
		ev.Inputs = map[string]string{}
		keys := make([]string, 0, len(p.Inputs))
		for k := range p.Inputs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch v := p.Inputs[k].(type) {
			case string:
				ev.Inputs[k] = v
			case nil:
				ev.Inputs[k] = ""
			default:
				b, _ := json.Marshal(v)
				ev.Inputs[k] = string(b)
			}
		}
	}
	return ev, nil
}

// isFork says whether head is another repository than base; a missing head
// repository (a deleted fork) counts as a fork.
func isFork(head, base *repoJSON) bool {
	if head == nil || base == nil {
		return head == nil && base != nil
	}
	if head.FullName != "" && base.FullName != "" {
		return !strings.EqualFold(head.FullName, base.FullName)
	}
	return head.ID != base.ID
}

func orNone(s string) string {
	if s == "" {
		return "no event name"
	}
	return s
}
