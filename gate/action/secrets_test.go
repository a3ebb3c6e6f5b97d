package action_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

// runnerEnv is a runner step's environment: credentials and not.
var runnerEnv = []string{
	"GITHUB_TOKEN=ghs_1", "INPUT_GITHUB-TOKEN=ghs_2", "ACTIONS_RUNTIME_TOKEN=eyJ3",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN=eyJ4", "ACTIONS_ID_TOKEN_REQUEST_URL=https://x", "ACTIONS_RESULTS_URL=https://r",
	"ACTIONS_CACHE_SERVICE_V2=True", "GH_TOKEN=gho_5",
	"PATH=/usr/bin", "HOME=/home/runner", "API_TOKEN=scenario-own", "INPUT_SCENARIO=s.yaml", "GITHUB_SHA=abc", "GITHUB_ACTIONS=true",
}

var hidden = []string{"GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RESULTS_URL", "ACTIONS_CACHE_SERVICE_V2", "GH_TOKEN"}

// Issue 10: stack.prepare ran with the whole environment, the action's
// INPUT_GITHUB-TOKEN included. Neither a scenario's ${ENV}, nor prepare,
// nor the services (compose's interpolation reads the process's
// environment, which the gate scrubs) see a runner credential.
func TestRegression_PrepareAndServicesGetNoToken(t *testing.T) {
	for _, name := range hidden {
		if !action.IsRunnerSecret(name) {
			t.Errorf("%s is not a runner secret", name)
		}
	}
	look := action.WithoutRunnerSecrets(func(k string) (string, bool) {
		for _, kv := range runnerEnv {
			if n, v, _ := strings.Cut(kv, "="); n == k {
				return v, true
			}
		}
		return "", false
	})
	for _, name := range hidden {
		if v, ok := look(name); ok || v != "" {
			t.Errorf("${%s} resolves to %q", name, v)
		}
	}
	env := action.EnvWithoutRunnerSecrets(runnerEnv)
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); slices.Contains(hidden, n) {
			t.Errorf("prepare's environment holds %s", kv)
		}
	}
	for _, keep := range []string{"PATH=/usr/bin", "API_TOKEN=scenario-own", "GITHUB_SHA=abc"} {
		if !slices.Contains(env, keep) {
			t.Errorf("prepare's environment lacks %s", keep)
		}
	}
	var unset []string
	names := action.UnsetRunnerSecrets(runnerEnv, func(n string) error { unset = append(unset, n); return nil })
	slices.Sort(names)
	want := slices.Clone(hidden)
	slices.Sort(want)
	if !slices.Equal(names, want) || len(unset) != len(hidden) {
		t.Errorf("unset %v, want %v", names, want)
	}
}
