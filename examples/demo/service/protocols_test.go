package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/scenario"
)

// validator checks every request to the api's routes, and its response,
// against the demo's OpenAPI document (kin-openapi's openapi3filter): a
// request the document does not allow is answered 400 before the api
// sees it, so the load reports it as a failure; a response the document
// does not describe is counted in badResponses.
type validator struct {
	router       routers.Router
	next         http.Handler
	requests     atomic.Int64 // validated requests
	badResponses atomic.Int64
	mu           sync.Mutex
	firstBad     string
}

func newValidator(t *testing.T, next http.Handler) *validator {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	doc.Servers = openapi3.Servers{{URL: "/"}} // match any host: the test's loopback address
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &validator{router: router, next: next}
}

func (v *validator) bad(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.firstBad == "" {
		v.firstBad = s
	}
}

func (v *validator) first() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.firstBad
}

func (v *validator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		v.bad(r.Method + " " + r.URL.String() + ": " + err.Error())
		http.Error(w, "not in the document: "+err.Error(), http.StatusBadRequest)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		v.bad(r.Method + " " + r.URL.String() + ": " + err.Error())
		http.Error(w, "invalid request: "+err.Error(), http.StatusBadRequest)
		return
	}
	v.requests.Add(1)
	rec := httptest.NewRecorder()
	v.next.ServeHTTP(rec, r)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(rec.Body.Bytes())
	if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
		v.badResponses.Add(1)
		v.bad("response to " + r.Method + " " + r.URL.String() + ": " + err.Error())
	}
	for k, vals := range rec.Header() {
		w.Header()[k] = vals
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// startEdge serves what the edge role serves (api routes behind the
// validator, the WebSocket endpoints, the gRPC service) on a loopback
// port; the api's backend is an in-process backend role.
func startEdge(t *testing.T) (*validator, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	backend := httptest.NewServer(backendHandler(time.Millisecond))
	gs, err := newGRPCServer(10)
	if err != nil {
		t.Fatal(err)
	}
	v := newValidator(t, apiHandler(backend.URL, 10))
	mux := http.NewServeMux()
	mux.Handle("/", v)
	registerWS(ctx, mux, wsConfig{chatMessages: 3, chatGap: time.Millisecond, liveEvery: 50 * time.Millisecond, liveMax: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serveSplitOn(ctx, ln, mux, gs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveSplitOn: %v", err)
		}
		backend.Close()
	})
	return v, "http://" + ln.Addr().String()
}

// TestProtocolsScenarioAgainstEdge runs the demo's protocols.yaml (scaled
// down) through the engine against the edge's endpoints on loopback: every
// workload kind succeeds, every HTTP request the openapi and http
// workloads sent is valid for openapi.yaml, and every answer is one the
// document describes.
func TestProtocolsScenarioAgainstEdge(t *testing.T) {
	v, base := startEdge(t)
	data, err := os.ReadFile("../protocols.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse(data, "../protocols.yaml", scenario.Options{Scale: 0.05, ScaleSet: true})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	tg, err := load.Target{URL: u}.CheckLoopback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), load.Config{Scenario: sc, Target: tg})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Offered == 0 || res.Offered != res.Recorded || !res.Usable {
		t.Fatalf("offered %d recorded %d usable %v %v", res.Offered, res.Recorded, res.Usable, res.Unusable)
	}
	kinds := map[string]string{}
	for _, w := range sc.Workloads {
		kinds[w.Name] = w.Kind()
	}
	var httpSent int64
	for _, p := range res.Phases {
		for _, w := range p.Workloads {
			if w.Offered == 0 || w.Failed != 0 || w.Abandoned != 0 || w.Succeeded != w.Offered {
				t.Errorf("%s/%s (%s): offered %d succeeded %d failed %d %v abandoned %d", p.Name, w.Name, kinds[w.Name],
					w.Offered, w.Succeeded, w.Failed, w.Failures, w.Abandoned)
			}
			switch kinds[w.Name] {
			case "http", "openapi":
				httpSent += w.Offered
			case "ws":
				if w.FirstMessageMS == nil || w.FirstMessageMS.Count != w.Succeeded || w.MessagesReceived < w.Succeeded {
					t.Errorf("%s/%s: first message %+v, messages %d for %d sessions", p.Name, w.Name, w.FirstMessageMS, w.MessagesReceived, w.Succeeded)
				}
			}
		}
	}
	if res.Warmup.Failed != 0 {
		t.Errorf("warm-up failures %v", res.Warmup.Failures)
	}
	// Warm-up requests are validated too; the phases' HTTP requests are a
	// lower bound of what the validator saw.
	t.Logf("validator: %d valid requests (the phases sent %d HTTP requests), %d bad responses", v.requests.Load(), httpSent, v.badResponses.Load())
	if n := v.requests.Load(); n < httpSent || httpSent == 0 {
		t.Errorf("validator saw %d valid requests, the phases sent %d HTTP requests", n, httpSent)
	}
	if n := v.badResponses.Load(); n != 0 || v.first() != "" {
		t.Errorf("%d responses outside the document; first problem: %s", n, v.first())
	}
}

// TestOpenAPIDocumentNamesEveryRoute: each operation of openapi.yaml is
// answered by the api with a status the document lists (no route is
// described that the api does not serve), checked through the validator.
func TestOpenAPIDocumentNamesEveryRoute(t *testing.T) {
	v, base := startEdge(t)
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/healthz", "", 200},
		{"GET", "/items?page=2", "", 200},
		{"GET", "/items", "", 200},
		{"GET", "/items/42", "", 200},
		{"GET", "/items/100000", "", 200},
		{"GET", "/items/0", "", 200}, // a load's first {n}
		{"GET", "/search?q=alpha", "", 200},
		{"POST", "/documents", `{"title":"t"}`, 202},
		{"GET", "/profile/7", "", 200},
		{"GET", "/items?page=-1", "", 400},   // refused by the document (minimum 0)
		{"GET", "/nowhere", "", 400},         // not in the document
		{"GET", "/items/100001", "", 400},    // above the document's maximum
		{"POST", "/documents", `{}`, 400},    // title is required
		{"GET", "/search", "", 400},          // q is required
		{"DELETE", "/items/1", "", 400},      // no such operation
		{"GET", "/profile/x", "", 400},       // not an integer
		{"GET", "/items/1?extra=1", "", 200}, // unknown query parameters are allowed
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
	if n := v.badResponses.Load(); n != 0 {
		t.Errorf("%d responses outside the document; first problem: %s", n, v.first())
	}
}
