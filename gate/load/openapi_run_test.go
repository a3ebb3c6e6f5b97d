package load_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/scenario"
)

// petstore is a loopback server that checks every request against the
// Petstore 3 document (the excerpt in gate/scenario/testdata, verbatim
// operations of swagger-api/swagger-petstore) with kin-openapi's
// openapi3filter, as a service's own request validation would, and
// answers 200 to a valid one, 400 to any other.
type petstore struct {
	valid, invalid atomic.Int64
	mu             sync.Mutex
	first          string // the first invalid request and why
}

func (p *petstore) firstInvalid() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

func newPetstore(t *testing.T, doc string) (*petstore, string) {
	t.Helper()
	d, err := openapi3.NewLoader().LoadFromFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	d.Servers = openapi3.Servers{{URL: "/v3"}}
	router, err := legacy.NewRouter(d)
	if err != nil {
		t.Fatal(err)
	}
	p := &petstore{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := router.FindRoute(r)
		if err == nil {
			err = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{
				Request: r, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}})
		}
		if err != nil {
			if p.invalid.Add(1) == 1 {
				p.mu.Lock()
				p.first = r.Method + " " + r.URL.String() + ": " + err.Error()
				p.mu.Unlock()
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.valid.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return p, srv.URL
}

// TestRunOpenAPIPetstoreRequestsAreValid sends Petstore operations resolved
// from the document through the engine: every request that reaches the
// server is valid for the document (path and query parameters, header
// parameters, request bodies and their Content-Type), one per offered
// request.
func TestRunOpenAPIPetstoreRequestsAreValid(t *testing.T) {
	doc, err := filepath.Abs("../scenario/testdata/openapi/petstore3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, base := newPetstore(t, doc)
	sc, err := scenario.Parse([]byte(`name: petstore
openapi: `+doc+`
timeout: 2s
phases: [{name: sustain, rate: 200, duration: 1s}]
workloads:
  - {name: get_pet, share: 4, openapi: {operation: getPetById, params: {petId: ["{n}"]}}}
  - {name: find, share: 2, openapi: {operation: findPetsByStatus, params: {status: [available, pending, sold]}}}
  - {name: add, share: 2, openapi: {operation: addPet, body: '{"name":"load-{n}","photoUrls":["p{n}"]}'}}
  - {name: order, share: 1, openapi: {operation: placeOrder, body: '{"petId":{n},"quantity":1,"status":"placed"}'}}
  - {name: delete, share: 1, openapi: {operation: deletePet, params: {petId: ["{n}"], api_key: ["${API_KEY}"]}}}
  - {name: login, share: 1, openapi: {operation: loginUser, params: {username: ["a b&c-{n}"], password: ["pw"]}}}
`), "petstore.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	tg, err := load.Target{URL: u}.CheckLoopback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: tg, Env: map[string]string{"API_KEY": "k3y"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Offered != 200 || res.Recorded != res.Offered || !res.Usable {
		t.Fatalf("offered %d recorded %d usable %v %v", res.Offered, res.Recorded, res.Usable, res.Unusable)
	}
	for _, w := range res.Phases[0].Workloads {
		if w.Succeeded != w.Offered || w.Offered == 0 {
			t.Errorf("%s: offered %d succeeded %d failures %v", w.Name, w.Offered, w.Succeeded, w.Failures)
		}
	}
	if p.invalid.Load() != 0 || p.valid.Load() != res.Offered {
		t.Errorf("%d valid, %d invalid requests for %d offered; first invalid: %s", p.valid.Load(), p.invalid.Load(), res.Offered, p.firstInvalid())
	}
}
