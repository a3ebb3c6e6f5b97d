package github

import (
	"fmt"
	"strconv"
	"strings"
)

// Env is what the runner tells the process through its environment.
// Every field may be empty outside GitHub Actions.
type Env struct {
	Actions     bool   // GITHUB_ACTIONS == "true"
	EventName   string // GITHUB_EVENT_NAME
	EventPath   string // GITHUB_EVENT_PATH
	Repository  string // GITHUB_REPOSITORY, "owner/name"
	Owner, Repo string // Repository split
	APIURL      string // GITHUB_API_URL (default https://api.github.com)
	ServerURL   string // GITHUB_SERVER_URL (default https://github.com)
	StepSummary string // GITHUB_STEP_SUMMARY: the step summary file
	Output      string // GITHUB_OUTPUT: the outputs file
	SHA         string // GITHUB_SHA
	RunID       int64  // GITHUB_RUN_ID
	Workspace   string // GITHUB_WORKSPACE
}

// EnvNames are the variables FromEnv reads.
var EnvNames = []string{
	"GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY",
	"GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT",
	"GITHUB_SHA", "GITHUB_RUN_ID", "GITHUB_WORKSPACE",
}

// FromEnv reads the runner's variables through getenv (os.Getenv, or a map
// in tests). It fails only on malformed values: a GITHUB_REPOSITORY that is
// not owner/name, a GITHUB_RUN_ID that is not a number.
func FromEnv(getenv func(string) string) (*Env, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	e := &Env{
		Actions:     get("GITHUB_ACTIONS") == "true",
		EventName:   get("GITHUB_EVENT_NAME"),
		EventPath:   get("GITHUB_EVENT_PATH"),
		Repository:  get("GITHUB_REPOSITORY"),
		APIURL:      strings.TrimRight(get("GITHUB_API_URL"), "/"),
		ServerURL:   strings.TrimRight(get("GITHUB_SERVER_URL"), "/"),
		StepSummary: get("GITHUB_STEP_SUMMARY"),
		Output:      get("GITHUB_OUTPUT"),
		SHA:         get("GITHUB_SHA"),
		Workspace:   get("GITHUB_WORKSPACE"),
	}
	if e.APIURL == "" {
		e.APIURL = "https://api.github.com"
	}
	if e.ServerURL == "" {
		e.ServerURL = "https://github.com"
	}
	if e.Repository != "" {
		o, r, ok := strings.Cut(e.Repository, "/")
		if !ok || o == "" || r == "" || strings.Contains(r, "/") {
			return nil, fmt.Errorf("GITHUB_REPOSITORY %q: want owner/name", e.Repository)
		}
		e.Owner, e.Repo = o, r
	}
	if s := get("GITHUB_RUN_ID"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 0 {
			return nil, fmt.Errorf("GITHUB_RUN_ID %q: not a run id", s)
		}
		e.RunID = id
	}
	return e, nil
}

// RunURL is the link to this workflow run, or "" when unknown.
func (e *Env) RunURL() string {
	if e == nil || e.Repository == "" || e.RunID == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", e.ServerURL, e.Repository, e.RunID)
}
