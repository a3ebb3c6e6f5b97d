package actrunner

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// API is the GitHub the runs see, on loopback: no GitHub server runs here,
// so it answers the two lists the action's binary step reads (releases and
// tags, from Releases) and 404 to everything else, and records every
// request so a test can tell what the workflow asked. The comment is not
// stored: a step that posts one gets 404 (a warning, by design).
// Safe for concurrent use.
type API struct {
	// Releases is the release list GET /repos/{owner}/{repo}/releases
	// answers (GitHub's JSON); empty, no release.
	Releases []map[string]any

	srv  *httptest.Server
	mu   sync.Mutex
	reqs []string
}

// NewAPI starts an API; Close stops it.
func NewAPI() *API {
	a := &API{}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	return a
}

// APIURL is GITHUB_API_URL.
func (a *API) APIURL() string { return a.srv.URL + "/api/v3" }

// ServerURL is GITHUB_SERVER_URL: the same server under a *.localhost
// name, which curl and Node resolve to loopback and which the artifact
// actions do not take for GitHub Enterprise Server (unsupported there).
func (a *API) ServerURL() string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(a.srv.URL, "http://"))
	return "http://github.localhost:" + port
}

// Requests is every request so far, as "GET /api/v3/repos/o/r/releases?…".
func (a *API) Requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.reqs...)
}

// Close stops the server.
func (a *API) Close() { a.srv.Close() }

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.reqs = append(a.reqs, r.Method+" "+r.URL.RequestURI())
	rel := a.Releases
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method == http.MethodGet && len(p) == 6 && p[0] == "api" && p[2] == "repos" {
		switch p[5] {
		case "releases":
			if rel == nil {
				rel = []map[string]any{}
			}
			_ = json.NewEncoder(w).Encode(rel)
			return
		case "tags":
			_, _ = w.Write([]byte("[]"))
			return
		}
	}
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`))
}
