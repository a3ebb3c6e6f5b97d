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
	GraphQLURL  string // GITHUB_GRAPHQL_URL (default derived from APIURL, see GraphQL)
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
	"GITHUB_API_URL", "GITHUB_GRAPHQL_URL", "GITHUB_SERVER_URL", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT",
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
		GraphQLURL:  strings.TrimRight(get("GITHUB_GRAPHQL_URL"), "/"),
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

// GraphQL is the GraphQL endpoint: GITHUB_GRAPHQL_URL, else derived from
// the REST API's URL (https://HOST/api/v3 → https://HOST/api/graphql on
// GitHub Enterprise Server, else API/graphql).
func (e *Env) GraphQL() string {
	if e == nil {
		return "https://api.github.com/graphql"
	}
	if e.GraphQLURL != "" {
		return e.GraphQLURL
	}
	api := e.APIURL
	if api == "" {
		api = "https://api.github.com"
	}
	if base, ok := strings.CutSuffix(api, "/api/v3"); ok {
		return base + "/api/graphql"
	}
	return api + "/graphql"
}

// RunURL is the link to this workflow run, or "" when unknown.
func (e *Env) RunURL() string {
	if e == nil || e.Repository == "" || e.RunID == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", e.ServerURL, e.Repository, e.RunID)
}

// runnerSecrets are the variables a runner or the action sets that carry a
// credential: never for a scenario's ${ENV} references (a pull request's
// scenario could send them to its own stack), nor for stack.prepare or the
// services.
var runnerSecrets = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
	"ACTIONS_RUNTIME_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL",
}

// IsRunnerSecret reports whether the environment variable name carries a
// GitHub credential: the runner's tokens (runnerSecrets) and the action's
// token input, INPUT_GITHUB-TOKEN (any INPUT_* whose name holds TOKEN).
func IsRunnerSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range runnerSecrets {
		if up == s {
			return true
		}
	}
	return strings.HasPrefix(up, "INPUT_") && strings.Contains(up, "TOKEN")
}

// WithoutRunnerSecrets wraps lookup (os.LookupEnv) so that the variables
// IsRunnerSecret names read as unset: for scenario.ResolveEnv, so that a
// scenario's ${GITHUB_TOKEN} is refused as not set instead of resolved.
func WithoutRunnerSecrets(lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if IsRunnerSecret(name) {
			return "", false
		}
		return lookup(name)
	}
}
