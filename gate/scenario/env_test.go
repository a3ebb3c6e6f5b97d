package scenario_test

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

const envSrc = `name: api
phases: [{name: sustain, rate: 12, duration: 1m}]
workloads:
  - name: read
    http:
      path: /t/${TENANT}/items
      headers:
        Authorization: Bearer ${API_TOKEN}
        X-Both: ${TENANT}-${API_TOKEN}
  - name: write
    http:
      method: POST
      path: /items
      body: '{"key":"${WRITE_KEY}","n":{n}}'
`

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := env[name]; return v, ok }
}

func TestResolveEnv(t *testing.T) {
	s := mustParse(t, envSrc, scenario.Options{})
	hash := s.Hash
	all := map[string]string{"TENANT": "acme", "API_TOKEN": "s3cret-token", "WRITE_KEY": "k", "UNUSED": "x"}
	env, err := s.ResolveEnv(lookupIn(all))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"TENANT": "acme", "API_TOKEN": "s3cret-token", "WRITE_KEY": "k"}
	if !maps.Equal(env, want) {
		t.Errorf("env = %v, want %v", env, want)
	}
	if h := s.Workloads[0].HTTP.Headers["Authorization"]; h != "Bearer ${API_TOKEN}" || s.Hash != hash || s.ComputeHash() != hash {
		t.Errorf("ResolveEnv changed the scenario: %q", h)
	}
	if got := s.Secrets(env); !slices.Equal(got, []string{"s3cret-token", "acme", "k"}) {
		t.Errorf("Secrets = %q, want longest first", got)
	}
	if got := scenario.ExpandEnv(s.Workloads[0].HTTP.Headers["X-Both"], env); got != "acme-s3cret-token" {
		t.Errorf("ExpandEnv = %q", got)
	}
	if got := scenario.ExpandEnv(s.Workloads[1].HTTP.Body, env); got != `{"key":"k","n":{n}}` {
		t.Errorf("ExpandEnv body = %q", got)
	}
}

func TestResolveEnvMissing(t *testing.T) {
	s := mustParse(t, envSrc, scenario.Options{})
	_, err := s.ResolveEnv(lookupIn(map[string]string{"TENANT": ""}))
	want := "scenario.yaml:8: workloads[0].http.headers.Authorization: environment variable API_TOKEN is not set\n" +
		"scenario.yaml:14: workloads[1].http.body: environment variable WRITE_KEY is not set"
	if err == nil || err.Error() != want {
		t.Fatalf("err =\n%v\nwant\n%s", err, want)
	}
	var se *scenario.Error
	if !errors.As(err, &se) || se.Line != 8 || se.Field != "workloads[0].http.headers.Authorization" {
		t.Errorf("errors.As: %+v", se)
	}
}
