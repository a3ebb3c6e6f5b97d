package actrunner

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
)

// The payloads are GitHub's own examples (testdata/README.md), edited.
//
//go:embed testdata/*.json
var payloads embed.FS

// PR is a pull request between two commits of one repository, or of a fork (HeadRepo).
type PR struct {
	Number           int
	Repo, HeadRepo   string // "owner/name"; HeadRepo empty, Repo
	BaseRef, HeadRef string
	BaseSHA, HeadSHA string
	Action           string // "opened" (default), "synchronize"
	DefaultBranch    string // default "main"
}

// PullRequestPayload is a pull_request event for pr.
func PullRequestPayload(pr PR) ([]byte, error) {
	m, err := template("pull_request-opened.json")
	if err != nil {
		return nil, err
	}
	head := pr.HeadRepo
	if head == "" {
		head = pr.Repo
	}
	if pr.Action == "" {
		pr.Action = "opened"
	}
	m["action"], m["number"] = pr.Action, pr.Number
	setRepo(m, "repository", pr.Repo, pr.DefaultBranch)
	p := m["pull_request"].(map[string]any)
	p["number"] = pr.Number
	base, hd := p["base"].(map[string]any), p["head"].(map[string]any)
	base["ref"], base["sha"] = pr.BaseRef, pr.BaseSHA
	hd["ref"], hd["sha"] = pr.HeadRef, pr.HeadSHA
	setRepo(base, "repo", pr.Repo, pr.DefaultBranch)
	setRepo(hd, "repo", head, pr.DefaultBranch)
	hd["repo"].(map[string]any)["fork"] = head != pr.Repo
	return json.Marshal(m)
}

// DispatchPayload is a workflow_dispatch event on ref with inputs (nil: the defaults).
func DispatchPayload(repo, ref string, inputs map[string]string) ([]byte, error) {
	m, err := template("workflow_dispatch.json")
	if err != nil {
		return nil, err
	}
	if inputs == nil {
		delete(m, "inputs")
	} else {
		m["inputs"] = inputs
	}
	m["ref"] = ref
	setRepo(m, "repository", repo, "main")
	return json.Marshal(m)
}

// PushPayload is a push of after (parent before) to ref.
func PushPayload(repo, ref, before, after string) ([]byte, error) {
	m, err := template("workflow_dispatch.json") // its repository and sender
	if err != nil {
		return nil, err
	}
	delete(m, "inputs")
	m["ref"], m["before"], m["after"] = ref, before, after
	m["created"], m["deleted"], m["forced"] = false, false, false
	m["head_commit"] = map[string]any{"id": after, "message": "e2e"}
	setRepo(m, "repository", repo, "main")
	return json.Marshal(m)
}

// Comment is a new comment on pull request PR of Repo.
type Comment struct {
	PR          int
	Repo        string // "owner/name"
	Body        string
	Login       string // its author, a User
	Association string // author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE
}

// IssueCommentPayload is an issue_comment event (created) for c.
func IssueCommentPayload(c Comment) ([]byte, error) {
	m, err := template("issue_comment-created.json")
	if err != nil {
		return nil, err
	}
	m["action"] = "created"
	setRepo(m, "repository", c.Repo, "main")
	is := m["issue"].(map[string]any)
	is["number"], is["state"] = c.PR, "open"
	is["pull_request"] = map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", c.Repo, c.PR)}
	cm := m["comment"].(map[string]any)
	cm["body"], cm["author_association"] = c.Body, c.Association
	cm["user"] = map[string]any{"login": c.Login, "type": "User"}
	return json.Marshal(m)
}

// Run is a completed workflow run, as a workflow_run event tells of it.
type Run struct {
	ID         int64
	Workflow   string // its workflow's name ("load-gate")
	Event      string // what triggered it ("pull_request")
	Conclusion string // "success", "failure", …
	Repo       string // the repository it ran in
	HeadRepo   string // its head's repository (a fork's, for a fork's pull request)
	HeadRef    string
	HeadSHA    string
}

// WorkflowRunPayload is a completed workflow_run event, its pull_requests empty as for a fork.
func WorkflowRunPayload(run Run) ([]byte, error) {
	m, err := template("workflow_run-completed.with-pull-requests.json")
	if err != nil {
		return nil, err
	}
	delete(m, "organization")
	m["action"] = "completed"
	setRepo(m, "repository", run.Repo, "main")
	wr := m["workflow_run"].(map[string]any)
	wr["id"], wr["name"], wr["event"], wr["conclusion"], wr["status"] = run.ID, run.Workflow, run.Event, run.Conclusion, "completed"
	wr["head_branch"], wr["head_sha"], wr["pull_requests"] = run.HeadRef, run.HeadSHA, []any{}
	setRepo(wr, "repository", run.Repo, "main")
	setRepo(wr, "head_repository", run.HeadRepo, "main")
	wr["head_repository"].(map[string]any)["fork"] = run.HeadRepo != run.Repo
	if hc, ok := wr["head_commit"].(map[string]any); ok {
		hc["id"], hc["tree_id"] = run.HeadSHA, run.HeadSHA
	}
	if w, ok := m["workflow"].(map[string]any); ok {
		w["name"] = run.Workflow
	}
	return json.Marshal(m)
}

func template(name string) (map[string]any, error) {
	b, err := payloads.ReadFile("testdata/" + name)
	if err != nil {
		return nil, fmt.Errorf("actrunner: payload %s: %w", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("actrunner: payload %s: %w", name, err)
	}
	return m, nil
}

// setRepo names the repository object m[key] full ("owner/name").
func setRepo(m map[string]any, key, full, defaultBranch string) {
	if defaultBranch == "" {
		defaultBranch = "main"
	}
	r, _ := m[key].(map[string]any)
	if r == nil {
		r = map[string]any{}
		m[key] = r
	}
	owner, name, _ := strings.Cut(full, "/")
	r["full_name"], r["name"], r["default_branch"] = full, name, defaultBranch
	r["html_url"] = "https://github.com/" + full
	o, _ := r["owner"].(map[string]any)
	if o == nil {
		o = map[string]any{}
		r["owner"] = o
	}
	o["login"] = owner
}
