package action

import (
	"fmt"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Env is the runner's environment; every field may be empty outside Actions.
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
	RunAttempt  int    // GITHUB_RUN_ATTEMPT: 1, 2 on the first re-run, …
	Workspace   string // GITHUB_WORKSPACE
}

// defaultGraphQL is go-githubactions' default, left out of Env so GraphQL derives GHES's.
const defaultGraphQL = "https://api.github.com/graphql"

// FromEnv reads the runner's variables through getenv; it fails only on a malformed value.
func FromEnv(getenv func(string) string) (*Env, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	a := githubactions.New(githubactions.WithGetenv(func(k string) string {
		if k == "GITHUB_EVENT_PATH" {
			return "" // Context would decode it into a map; ReadEvent decodes it
		}
		return get(k)
	}))
	c, err := a.Context()
	if err != nil {
		// go-githubactions' errors name the value, not the variable.
		return nil, fmt.Errorf("runner environment: a boolean or number (GITHUB_ACTIONS, GITHUB_REF_PROTECTED, "+
			"GITHUB_RETENTION_DAYS, GITHUB_RUN_ATTEMPT, GITHUB_RUN_ID, GITHUB_RUN_NUMBER) does not parse: %w", err)
	}
	e := &Env{
		Actions:     c.Actions,
		EventName:   c.EventName,
		EventPath:   get("GITHUB_EVENT_PATH"),
		Repository:  c.Repository,
		APIURL:      strings.TrimRight(c.APIURL, "/"),
		ServerURL:   strings.TrimRight(c.ServerURL, "/"),
		StepSummary: c.StepSummary,
		Output:      get("GITHUB_OUTPUT"), // not in Context: go-githubactions writes it itself
		SHA:         c.SHA,
		Workspace:   c.Workspace,
	}
	if g := strings.TrimRight(c.GraphqlURL, "/"); g != defaultGraphQL {
		e.GraphQLURL = g
	}
	if e.Repository != "" {
		o, r := c.Repo()
		if o == "" || r == "" || strings.Contains(r, "/") {
			return nil, fmt.Errorf("GITHUB_REPOSITORY %q: want owner/name", e.Repository)
		}
		e.Owner, e.Repo = o, r
	}
	if c.RunID < 0 {
		return nil, fmt.Errorf("GITHUB_RUN_ID %d: not a run id", c.RunID)
	}
	if c.RunAttempt < 0 || c.RunAttempt > 1<<20 {
		return nil, fmt.Errorf("GITHUB_RUN_ATTEMPT %d: not a run attempt", c.RunAttempt)
	}
	e.RunID, e.RunAttempt = c.RunID, int(c.RunAttempt)
	return e, nil
}

// GraphQL is GITHUB_GRAPHQL_URL, else derived from the REST API's URL.
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

// runnerSecrets carry a credential, never given to a scenario, stack.prepare or a service.
var runnerSecrets = []string{
	"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN",
	"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
	"ACTIONS_RUNTIME_URL", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL",
}

// IsRunnerSecret reports whether name carries a credential: a runner token, ACTIONS_*, INPUT_*TOKEN*.
func IsRunnerSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range runnerSecrets {
		if up == s {
			return true
		}
	}
	return strings.HasPrefix(up, "ACTIONS_") || strings.HasPrefix(up, "INPUT_") && strings.Contains(up, "TOKEN")
}

// EnvWithoutRunnerSecrets is environ without the runner's secrets: stack.prepare's.
func EnvWithoutRunnerSecrets(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !IsRunnerSecret(name) {
			out = append(out, kv)
		}
	}
	return out
}

// UnsetRunnerSecrets unsets environ's runner secrets and returns their names; call it before
// any stack is up, so compose interpolation gives services no credential.
func UnsetRunnerSecrets(environ []string, unset func(string) error) []string {
	var names []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); IsRunnerSecret(name) {
			if unset(name) == nil {
				names = append(names, name)
			}
		}
	}
	return names
}

// WithoutRunnerSecrets makes lookup see the runner's secrets as unset.
func WithoutRunnerSecrets(lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if IsRunnerSecret(name) {
			return "", false
		}
		return lookup(name)
	}
}
