package action

import (
	"fmt"
	"strings"

	"github.com/sethvargo/go-githubactions"
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

// defaultGraphQL is go-githubactions' GraphqlURL when GITHUB_GRAPHQL_URL is
// unset: Env keeps it empty instead, so that GraphQL derives the endpoint
// from GITHUB_API_URL (GitHub Enterprise Server).
const defaultGraphQL = "https://api.github.com/graphql"

// FromEnv reads the runner's variables through getenv (os.Getenv, or a map
// in tests), with go-githubactions' Action.Context (values trimmed of
// spaces). It fails only on malformed values: a GITHUB_REPOSITORY that is
// not owner/name, a GITHUB_RUN_ID (or another of the runner's numbers and
// booleans) that does not parse. The event payload is not read here:
// ReadEvent reads GITHUB_EVENT_PATH with go-github's types.
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
	e.RunID = c.RunID
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
// GitHub credential: the runner's tokens (runnerSecrets), every ACTIONS_*
// variable (the runner's service URLs and tokens) and the action's token
// input, INPUT_GITHUB-TOKEN (any INPUT_* whose name holds TOKEN).
func IsRunnerSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range runnerSecrets {
		if up == s {
			return true
		}
	}
	return strings.HasPrefix(up, "ACTIONS_") || strings.HasPrefix(up, "INPUT_") && strings.Contains(up, "TOKEN")
}

// EnvWithoutRunnerSecrets is environ (os.Environ's form, NAME=value) without
// the variables IsRunnerSecret names: the environment of stack.prepare.
func EnvWithoutRunnerSecrets(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !IsRunnerSecret(name) {
			out = append(out, kv)
		}
	}
	return out
}

// UnsetRunnerSecrets unsets (through unset, os.Unsetenv) every variable of
// environ that IsRunnerSecret names, and returns their names: a gate does
// so once its inputs are read (the token kept in Inputs), before any stack
// comes up, so that compose's interpolation (${GITHUB_TOKEN}, an
// environment: entry passed through) gives the services no credential.
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
