package action_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sethvargo/go-githubactions"

	"github.com/loadgate/loadgate/gate/action"
	"github.com/loadgate/loadgate/gate/verdict"
)

const (
	owner   = "Codertocat"
	repo    = "Hello-World"
	prNum   = 2 // the fixtures' pull request
	token   = "ghs_test-token-123"
	botName = "github-actions[bot]"
)

type fakeUser struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type fakeComment struct {
	ID   int64    `json:"id"`
	Body string   `json:"body"`
	User fakeUser `json:"user"`
}

// fakeGitHub is the part of the REST API loadgate uses: comments with Link
// pagination, editing, GET /user, GET a pull request.
type fakeGitHub struct {
	t  *testing.T
	mu sync.Mutex

	login string // the token's user; "" → GET /user is 403 (an installation token)
	// viewer is GraphQL's viewer { login }: for an installation token,
	// "github-actions[bot]" or "<app>[bot]"; "" → GraphQL refuses (403).
	viewer string
	// as, when set, is whom the token's comments are by (else author()).
	as       *fakeUser
	comments map[int][]*fakeComment
	nextID   int64
	prHead   map[int]string
	prRepo   string // the pull requests' head repository; default forker/Hello-World
	prRef    string // their head branch; default master

	createStatus int // non-zero: POST comments answers this status
	userStatus   int // non-zero: GET /user answers this status
	listStatus   int

	requests []string // "METHOD path?query"
	edited   []int64
	deleted  []int64
	srv      *httptest.Server
}

func newFake(t *testing.T) *fakeGitHub {
	f := &fakeGitHub{t: t, comments: map[int][]*fakeComment{}, nextID: 1000, prHead: map[int]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /user", f.user)
	mux.HandleFunc("GET /repos/{o}/{r}/issues/{n}/comments", f.list)
	mux.HandleFunc("POST /repos/{o}/{r}/issues/{n}/comments", f.create)
	mux.HandleFunc("PATCH /repos/{o}/{r}/issues/comments/{id}", f.edit)
	mux.HandleFunc("DELETE /repos/{o}/{r}/issues/comments/{id}", f.del)
	mux.HandleFunc("GET /repos/{o}/{r}/pulls/{n}", f.pull)
	mux.HandleFunc("POST /graphql", f.graphql)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
		f.mu.Unlock()
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			f.fail(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest"}`, msg)
}

func (f *fakeGitHub) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		f.t.Error(err)
	}
}

func (f *fakeGitHub) repoOK(w http.ResponseWriter, r *http.Request) bool {
	if r.PathValue("o") != owner || r.PathValue("r") != repo {
		f.fail(w, http.StatusNotFound, "Not Found")
		return false
	}
	return true
}

func (f *fakeGitHub) author() fakeUser {
	if f.as != nil {
		return *f.as
	}
	if f.login != "" {
		return fakeUser{Login: f.login, Type: "User"}
	}
	return fakeUser{Login: botName, Type: "Bot"}
}

func (f *fakeGitHub) user(w http.ResponseWriter, r *http.Request) {
	if f.userStatus != 0 {
		f.fail(w, f.userStatus, "user refused")
		return
	}
	if f.login == "" {
		f.fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	f.json(w, 200, fakeUser{Login: f.login, Type: "User"})
}

// graphql answers `query { viewer { login } }` only, as GitHub does for an
// installation token (which may not read GET /user).
func (f *fakeGitHub) graphql(w http.ResponseWriter, r *http.Request) {
	var in struct{ Query string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !strings.Contains(in.Query, "viewer") {
		f.fail(w, 400, "bad query")
		return
	}
	if f.viewer == "" {
		f.fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	f.json(w, 200, map[string]any{"data": map[string]any{"viewer": map[string]string{"login": f.viewer}}})
}

// del deletes a comment; only the token's own (GitHub lets a token with
// write access delete others' too: the test then sees it in deleted).
func (f *fakeGitHub) del(w http.ResponseWriter, r *http.Request) {
	if !f.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	for n, cs := range f.comments {
		for i, c := range cs {
			if c.ID == id {
				f.comments[n] = append(cs[:i:i], cs[i+1:]...)
				f.deleted = append(f.deleted, id)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	f.fail(w, 404, "Not Found")
}

func (f *fakeGitHub) list(w http.ResponseWriter, r *http.Request) {
	if !f.repoOK(w, r) {
		return
	}
	if f.listStatus != 0 {
		f.fail(w, f.listStatus, "listing refused")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 || per > 100 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	f.mu.Lock()
	all := f.comments[n]
	f.mu.Unlock()
	last := (len(all) + per - 1) / per
	if last == 0 {
		last = 1
	}
	lo, hi := (page-1)*per, page*per
	lo, hi = min(lo, len(all)), min(hi, len(all))
	var links []string
	link := func(p int, rel string) {
		links = append(links, fmt.Sprintf(`<%s/repos/%s/%s/issues/%d/comments?per_page=%d&page=%d>; rel="%s"`, f.srv.URL, owner, repo, n, per, p, rel))
	}
	if page < last {
		link(page+1, "next")
		link(last, "last")
	}
	if page > 1 {
		link(page-1, "prev")
		link(1, "first")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	f.json(w, 200, all[lo:hi])
}

func (f *fakeGitHub) create(w http.ResponseWriter, r *http.Request) {
	if !f.repoOK(w, r) {
		return
	}
	if f.createStatus != 0 {
		f.fail(w, f.createStatus, "Resource not accessible by integration")
		return
	}
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		f.fail(w, 400, err.Error())
		return
	}
	if len(in.Body) > 65536 {
		f.fail(w, 422, "Body is too long (maximum is 65536 characters)")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	f.mu.Lock()
	f.nextID++
	c := &fakeComment{ID: f.nextID, Body: in.Body, User: f.author()}
	f.comments[n] = append(f.comments[n], c)
	f.mu.Unlock()
	f.json(w, 201, c)
}

func (f *fakeGitHub) edit(w http.ResponseWriter, r *http.Request) {
	if !f.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		f.fail(w, 400, err.Error())
		return
	}
	if len(in.Body) > 65536 {
		f.fail(w, 422, "Body is too long (maximum is 65536 characters)")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cs := range f.comments {
		for _, c := range cs {
			if c.ID == id {
				c.Body = in.Body
				f.edited = append(f.edited, id)
				f.json(w, 200, c)
				return
			}
		}
	}
	f.fail(w, 404, "Not Found")
}

func (f *fakeGitHub) pull(w http.ResponseWriter, r *http.Request) {
	if !f.repoOK(w, r) {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	head, ok := f.prHead[n]
	if !ok {
		f.fail(w, 404, "Not Found")
		return
	}
	repo, ref := cmp.Or(f.prRepo, "forker/Hello-World"), cmp.Or(f.prRef, "master")
	f.json(w, 200, map[string]any{"number": n, "head": map[string]any{"sha": head, "ref": ref, "repo": map[string]any{"full_name": repo}}})
}

// seed adds a comment by someone else (or by us when user is ours).
func (f *fakeGitHub) seed(pr int, login, typ, body string) *fakeComment {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := &fakeComment{ID: f.nextID, Body: body, User: fakeUser{Login: login, Type: typ}}
	f.comments[pr] = append(f.comments[pr], c)
	return c
}

// count counts the REST requests of method (GraphQL's are not counted).
func (f *fakeGitHub) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if strings.HasPrefix(r, method+" ") && !strings.HasPrefix(r, method+" /graphql") {
			n++
		}
	}
	return n
}

// ours returns the comments that start with the scenario's marker and are
// by the author our token comments as.
func (f *fakeGitHub) ours(pr int, scenario string) []*fakeComment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fakeComment
	for _, c := range f.comments[pr] {
		if c.User == f.author() && strings.HasPrefix(c.Body, action.Marker(scenario)+"\n") {
			out = append(out, c)
		}
	}
	return out
}

// runner is a fake runner: environment, files, and the action's stdout.
type runner struct {
	dir     string
	env     map[string]string
	stdout  bytes.Buffer
	summary string
	output  string
}

func newRunner(t *testing.T, f *fakeGitHub, eventName, eventFile string) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{dir: dir, summary: filepath.Join(dir, "step_summary.md"), output: filepath.Join(dir, "output.txt")}
	for _, p := range []string{r.summary, r.output} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.env = map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_EVENT_NAME":   eventName,
		"GITHUB_REPOSITORY":   owner + "/" + repo,
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_STEP_SUMMARY": r.summary,
		"GITHUB_OUTPUT":       r.output,
		"GITHUB_RUN_ID":       "4242",
		"GITHUB_SHA":          "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
	}
	if f != nil {
		r.env["GITHUB_API_URL"] = f.srv.URL
	}
	if eventFile != "" {
		r.env["GITHUB_EVENT_PATH"] = filepath.Join("testdata", eventFile)
	}
	return r
}

func (r *runner) getenv(k string) string { return r.env[k] }

func (r *runner) action() *githubactions.Action {
	return githubactions.New(githubactions.WithWriter(&r.stdout), githubactions.WithGetenv(r.getenv))
}

func (r *runner) envAndEvent(t *testing.T) (*action.Env, action.Event) {
	t.Helper()
	env, err := action.FromEnv(r.getenv)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := action.ReadEvent(env)
	if err != nil {
		t.Fatal(err)
	}
	return env, ev
}

// outputs parses GITHUB_OUTPUT's multi-line syntax: name<<DELIM\nvalue\nDELIM.
func (r *runner) outputs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(r.output)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			continue
		}
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			t.Fatalf("GITHUB_OUTPUT line %d: %q is not name<<DELIM", i+1, lines[i])
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("GITHUB_OUTPUT: %s: no closing %s", name, delim)
		}
		if _, dup := out[name]; dup {
			t.Errorf("GITHUB_OUTPUT: %s set twice", name)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

func (r *runner) read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A verdict with one regressed workload and one failed one.
func regressed() verdict.Verdict {
	return verdict.Verdict{
		Value: verdict.Fail,
		Workloads: []verdict.WorkloadVerdict{
			{Phase: "sustain", Workload: "api_read", Value: verdict.Regression, Checks: []verdict.Check{
				{Phase: "sustain", Workload: "api_read", Metric: "p95", Limit: 50, Observed: 61.2, Count: 2811, Value: verdict.Regression},
			}},
			{Phase: "sustain", Workload: "item", Value: verdict.Pass, Checks: []verdict.Check{}},
			{Phase: "sustain", Workload: "ingest", Value: verdict.Fail, Checks: []verdict.Check{
				{Phase: "sustain", Workload: "ingest", Metric: "error_rate", Limit: 0.001, Observed: 0.02, Count: 900, Value: verdict.Fail},
			}},
			{Phase: "recover", Workload: "api_read", Value: verdict.Regression, Checks: []verdict.Check{
				{Phase: "recover", Workload: "api_read", Metric: "p99", Limit: 80, Observed: 95, Count: 700, Value: verdict.Regression},
			}},
		},
		Notes: []verdict.Note{},
	}
}

func passing() verdict.Verdict {
	return verdict.Verdict{Value: verdict.Pass, Workloads: []verdict.WorkloadVerdict{
		{Phase: "sustain", Workload: "api_read", Value: verdict.Pass, Checks: []verdict.Check{}},
	}, Notes: []verdict.Note{}}
}

func reportMD(verdictLine string) string {
	return "# loadgate: demo-api\n\n- **scenario** demo-api `sha256:abcd`\n\n## Sustain (judged)\n\n| workload | p95 |\n| --- | --: |\n| api_read | 61.2 |\n\n## Verdict\n\n" + verdictLine + "\n"
}
