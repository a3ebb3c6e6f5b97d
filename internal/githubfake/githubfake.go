// Package githubfake is a GitHub server for tests, on loopback: the REST API
// (under "" or GHES's "/api/v3") and downloads that loadgate's action and
// workflows use, storing what they write for the test to read back: GET /user,
// GraphQL's viewer, issue comments (list, create, edit, delete), a pull
// request (its labels and base), an issue's timeline, a collaborator's
// permission, a workflow run and its attempts, commit statuses, releases, tags, a run's
// artifacts, release downloads.
//
// Where it differs from GitHub:
//
//   - one token, "Bearer" or "token", else 401 on API paths (releases and tags
//     too); downloads need none. No scopes, but ReadOnly (a fork's token)
//     refuses every write.
//   - comments, pull requests and artifacts exist only in Owner/Repo; releases
//     and tags in any repository (an empty list, not 404).
//   - a comment's user is Author(); ids count from 1001; author_association is
//     OWNER; no reactions. Every issue exists; a pull request is SetPull's.
//   - validation: 400 bad JSON, 422 a missing body or one over 65536 bytes; no
//     rate limits, ETags or conditional requests. GraphQL answers only the viewer.
//   - per_page defaults to 30, at most 100; Link URLs name this server.
//   - objects carry only the fields loadgate reads.
//   - a timeline holds only AddTimeline's events; a permission is
//     SetPermission's, "none" for any other user and 404 for a "[bot]" login
//     (GitHub: "not a user"); a run is SetRun's, an attempt SetAttempt's, else 404.
//   - a "committed" timeline event has GitHub's shape: sha, and author and
//     committer dated CreatedAt (a git date, set by the pusher), no created_at
//     or actor.
//   - an artifact's zip is at /_artifacts/{id}, tokenless (no signed blob URL).
//   - only AddRelease and AddArtifact add releases, tags and artifacts.
//
// Every method is safe for concurrent use. Set the exported fields, or read a
// stored *Comment, with no request in flight or under Lock.
package githubfake

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// User is a comment's author as GitHub's JSON gives it.
type User struct {
	Login string `json:"login"`
	Type  string `json:"type"` // "User" or "Bot"
}

// Comment is an issue comment in GitHub's JSON shape.
type Comment struct {
	ID                int64     `json:"id"`
	NodeID            string    `json:"node_id"`
	URL               string    `json:"url"`
	HTMLURL           string    `json:"html_url"`
	IssueURL          string    `json:"issue_url"`
	Body              string    `json:"body"`
	User              User      `json:"user"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	AuthorAssociation string    `json:"author_association"`

	Issue int `json:"-"` // the issue or pull request it is on
}

// Pull is what GET /repos/{o}/{r}/pulls/{n} tells of a pull request.
type Pull struct {
	HeadSHA  string
	HeadRef  string // default "master"
	HeadRepo string // "owner/name" of the head; default "forker/<Repo>"
	BaseSHA  string
	BaseRef  string   // default "main"
	Labels   []string // the labels' names
	State    string   // default "open"
}

// TimelineEvent is one event of an issue's timeline (GET …/issues/{n}/timeline).
type TimelineEvent struct {
	Event     string    // "labeled", "unlabeled", "head_ref_force_pushed", …
	Actor     User      // who did it
	Label     string    // labeled, unlabeled: the label's name
	CommitID  string    // head_ref_force_pushed: the new head; committed: the commit
	CreatedAt time.Time // when; committed: the commit's author and committer date
	ViaApp    string    // performed_via_github_app's slug, "" when none
}

// Run is a workflow run as GET …/actions/runs/{id} tells it.
type Run struct {
	HeadSHA   string
	Event     string
	CreatedAt time.Time // the run's first attempt
}

// Attempt is one attempt of a workflow run as GET …/actions/runs/{id}/attempts/{n} tells it.
type Attempt struct {
	HeadSHA   string
	Status    string    // default "completed"
	UpdatedAt time.Time // when it last changed: for a completed attempt, its end
}

// Status is a commit status as POSTed.
type Status struct {
	State       string `json:"state"`
	Context     string `json:"context"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// Release is a release: its tag, flags and assets (name → content).
type Release struct {
	Tag        string
	Draft      bool
	Prerelease bool
	Assets     map[string][]byte
}

// Artifact is a workflow run's artifact: its zip archive.
type Artifact struct {
	ID    int64
	RunID int64
	Name  string
	Zip   []byte
}

// Server is the fake GitHub. New starts it; it stops with Close.
type Server struct {
	Owner, Repo string // the repository with comments, pull requests and artifacts

	Token string // the one accepted credential

	Login string // GET /user's login; "" → 403, as for an installation token

	Viewer string // GraphQL's viewer login; "" → 403

	As *User // when set, whom the token's comments are by

	ReadOnly bool // a fork's pull request's token: every write is 403

	// Non-zero: POST comments, GET /user and GET comments answer that status.
	CreateStatus, UserStatus, ListStatus int

	apiPrefix string
	srv       *httptest.Server
	mu        sync.Mutex
	comments  map[int][]*Comment
	nextID    int64
	pulls     map[int]Pull
	releases  map[string][]Release // "owner/name" → newest first
	tags      map[string][]map[string]any
	artifacts []Artifact
	timeline  map[int][]TimelineEvent
	perms     map[string]string
	runs      map[int64]Run
	attempts  map[int64]map[int]Attempt
	statuses  map[string][]Status
	requests  []string
	edited    []int64
	deleted   []int64
	now       func() time.Time
}

// New starts a server for owner/repo accepting token, its API under apiPrefix ("" or "/api/v3").
func New(owner, repo, token, apiPrefix string) *Server {
	s := &Server{Owner: owner, Repo: repo, Token: token, apiPrefix: strings.TrimRight(apiPrefix, "/"),
		comments: map[int][]*Comment{}, nextID: 1000, pulls: map[int]Pull{},
		releases: map[string][]Release{}, tags: map[string][]map[string]any{}, now: time.Now,
		timeline: map[int][]TimelineEvent{}, perms: map[string]string{}, runs: map[int64]Run{}, attempts: map[int64]map[int]Attempt{}, statuses: map[string][]Status{}}
	api := http.NewServeMux()
	api.HandleFunc("GET /user", s.user)
	api.HandleFunc("POST /graphql", s.graphql)
	api.HandleFunc("GET /repos/{o}/{r}/issues/{n}/comments", s.list)
	api.HandleFunc("POST /repos/{o}/{r}/issues/{n}/comments", s.create)
	api.HandleFunc("PATCH /repos/{o}/{r}/issues/comments/{id}", s.edit)
	api.HandleFunc("DELETE /repos/{o}/{r}/issues/comments/{id}", s.del)
	api.HandleFunc("GET /repos/{o}/{r}/pulls/{n}", s.pull)
	api.HandleFunc("GET /repos/{o}/{r}/issues/{n}/timeline", s.timelineList)
	api.HandleFunc("GET /repos/{o}/{r}/collaborators/{u}/permission", s.permission)
	api.HandleFunc("GET /repos/{o}/{r}/actions/runs/{id}", s.run)
	api.HandleFunc("GET /repos/{o}/{r}/actions/runs/{id}/attempts/{n}", s.attempt)
	api.HandleFunc("POST /repos/{o}/{r}/statuses/{sha}", s.createStatus)
	api.HandleFunc("GET /repos/{o}/{r}/releases", s.releaseList)
	api.HandleFunc("GET /repos/{o}/{r}/tags", s.tagList)
	api.HandleFunc("GET /repos/{o}/{r}/actions/runs/{id}/artifacts", s.artifactList)
	api.HandleFunc("GET /repos/{o}/{r}/actions/artifacts/{id}/zip", s.artifactZip)
	web := http.NewServeMux()
	web.HandleFunc("GET /{o}/{r}/releases/download/{tag}/{asset}", s.download)
	web.HandleFunc("GET /_artifacts/{id}", s.artifactBlob)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
		if !s.authorized(r) {
			fail(w, http.StatusUnauthorized, "Bad credentials")
			return
		}
		if s.ReadOnly && r.Method != http.MethodGet && !strings.HasSuffix(r.URL.Path, "/graphql") {
			fail(w, http.StatusForbidden, "Resource not accessible by integration")
			return
		}
		p := r.URL.Path
		switch {
		case s.apiPrefix == "/api/v3" && p == "/api/graphql":
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/graphql"
			api.ServeHTTP(w, r2)
		case s.apiPrefix == "" || p == s.apiPrefix || strings.HasPrefix(p, s.apiPrefix+"/"):
			if s.apiPrefix != "" {
				r2 := r.Clone(r.Context())
				r2.URL.Path = strings.TrimPrefix(p, s.apiPrefix)
				r2.URL.RawPath = ""
				r = r2
			}
			if _, pat := api.Handler(r); pat != "" {
				api.ServeHTTP(w, r) // (Handler does not set the path values)
				return
			}
			if s.apiPrefix == "" {
				web.ServeHTTP(w, r)
				return
			}
			fail(w, http.StatusNotFound, "Not Found")
		default:
			web.ServeHTTP(w, r)
		}
	}))
	return s
}

// URL is the server's address (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// APIURL is GITHUB_API_URL: URL and the API prefix.
func (s *Server) APIURL() string { return s.srv.URL + s.apiPrefix }

// ServerURL is GITHUB_SERVER_URL as github.localhost, loopback that GitHub's
// JavaScript actions do not take for GHES (which artifact actions refuse).
func (s *Server) ServerURL() string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.srv.URL, "http://"))
	return "http://github.localhost:" + port
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Lock and Unlock guard configuration changed while requests may be in flight.
func (s *Server) Lock()   { s.mu.Lock() }
func (s *Server) Unlock() { s.mu.Unlock() }

// Requests is every request so far, as "METHOD /path?query".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Count counts the REST requests of method (GraphQL's are not counted).
func (s *Server) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		if strings.HasPrefix(r, method+" ") && !strings.HasSuffix(strings.SplitN(r, "?", 2)[0], "/graphql") {
			n++
		}
	}
	return n
}

// Edited is the ids of the comments PATCHed, in order.
func (s *Server) Edited() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.edited...)
}

// Deleted is the ids of the comments deleted, in order.
func (s *Server) Deleted() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.deleted...)
}

// Comments is issue n's comments, oldest first (the stored ones).
func (s *Server) Comments(n int) []*Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Comment(nil), s.comments[n]...)
}

// Seed adds a comment on issue n by login (of type typ) and returns it.
func (s *Server) Seed(n int, login, typ, body string) *Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.add(n, User{Login: login, Type: typ}, body)
}

// SetPull makes pull request n's head.
func (s *Server) SetPull(n int, p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pulls[n] = p
}

// DeletePull forgets pull request n (GET answers 404).
func (s *Server) DeletePull(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pulls, n)
}

// AddTimeline appends events to issue n's timeline (keep them in time order).
func (s *Server) AddTimeline(n int, evs ...TimelineEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timeline[n] = append(s.timeline[n], evs...)
}

// SetPermission gives login the permission ("admin", "write", "read", "none";
// "maintain" and "triage" answer as write and read, with role_name kept).
func (s *Server) SetPermission(login, perm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[login] = perm
}

// SetRun makes workflow run id.
func (s *Server) SetRun(id int64, r Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[id] = r
}

// SetAttempt makes attempt n of workflow run id.
func (s *Server) SetAttempt(id int64, n int, a Attempt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attempts[id] == nil {
		s.attempts[id] = map[int]Attempt{}
	}
	s.attempts[id][n] = a
}

// Statuses is the commit statuses POSTed on sha, in order.
func (s *Server) Statuses(sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses[sha]...)
}

// AddRelease adds a release of full ("owner/name") and its tag on commit, as the newest.
func (s *Server) AddRelease(full, commit string, rel Release) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releases[full] = append([]Release{rel}, s.releases[full]...)
	tag := map[string]any{"name": rel.Tag, "commit": map[string]any{"sha": commit}}
	s.tags[full] = append([]map[string]any{tag}, s.tags[full]...)
}

// AddArtifact stores a zip artifact of workflow run runID and returns its id.
func (s *Server) AddArtifact(runID int64, name string, zip []byte) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := int64(len(s.artifacts) + 1)
	s.artifacts = append(s.artifacts, Artifact{ID: id, RunID: runID, Name: name, Zip: zip})
	return id
}

// Author is whom the token's comments are by: As, else Login, else github-actions[bot].
func (s *Server) Author() User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.author()
}

func (s *Server) author() User {
	if s.As != nil {
		return *s.As
	}
	if s.Login != "" {
		return User{Login: s.Login, Type: "User"}
	}
	return User{Login: "github-actions[bot]", Type: "Bot"}
}

func (s *Server) authorized(r *http.Request) bool {
	p := r.URL.Path
	if strings.HasPrefix(p, "/_artifacts/") || (strings.Contains(p, "/releases/download/") && !strings.HasPrefix(p, "/repos/")) {
		return true // a signed blob URL, a public release's download: no token on GitHub either
	}
	h := r.Header.Get("Authorization")
	return h == "Bearer "+s.Token || h == "token "+s.Token
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest"}`, msg)
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) repoOK(w http.ResponseWriter, r *http.Request) bool {
	if r.PathValue("o") != s.Owner || r.PathValue("r") != s.Repo {
		fail(w, http.StatusNotFound, "Not Found")
		return false
	}
	return true
}

func (s *Server) add(n int, u User, body string) *Comment {
	s.nextID++
	now := s.now().UTC().Truncate(time.Second)
	api := fmt.Sprintf("%s/repos/%s/%s", s.APIURL(), s.Owner, s.Repo)
	c := &Comment{ID: s.nextID, NodeID: fmt.Sprintf("IC_fake%d", s.nextID),
		URL:      fmt.Sprintf("%s/issues/comments/%d", api, s.nextID),
		HTMLURL:  fmt.Sprintf("%s/%s/%s/pull/%d#issuecomment-%d", s.ServerURL(), s.Owner, s.Repo, n, s.nextID),
		IssueURL: fmt.Sprintf("%s/issues/%d", api, n),
		Body:     body, User: u, CreatedAt: now, UpdatedAt: now, AuthorAssociation: "OWNER", Issue: n}
	s.comments[n] = append(s.comments[n], c)
	return c
}

func (s *Server) user(w http.ResponseWriter, r *http.Request) {
	if s.UserStatus != 0 {
		fail(w, s.UserStatus, "user refused")
		return
	}
	if s.Login == "" {
		fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	reply(w, 200, User{Login: s.Login, Type: "User"})
}

// graphql answers only `query { viewer { login } }`, as for an installation token.
func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	var in struct{ Query string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || !strings.Contains(in.Query, "viewer") {
		fail(w, 400, "bad query")
		return
	}
	if s.Viewer == "" {
		fail(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	reply(w, 200, map[string]any{"data": map[string]any{"viewer": map[string]string{"login": s.Viewer}}})
}

func (s *Server) del(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for n, cs := range s.comments {
		for i, c := range cs {
			if c.ID == id {
				s.comments[n] = append(cs[:i:i], cs[i+1:]...)
				s.deleted = append(s.deleted, id)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
	}
	fail(w, 404, "Not Found")
}

// page sets the Link header for a page of n items and returns its bounds.
func (s *Server) page(w http.ResponseWriter, r *http.Request, n int) (lo, hi int) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	last := max((n+per-1)/per, 1)
	var links []string
	link := func(p int, rel string) {
		q.Set("per_page", strconv.Itoa(per))
		q.Set("page", strconv.Itoa(p))
		links = append(links, fmt.Sprintf(`<%s%s%s?%s>; rel="%s"`, s.srv.URL, s.apiPrefix, r.URL.Path, q.Encode(), rel))
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
	return min((page-1)*per, n), min(page*per, n)
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	if s.ListStatus != 0 {
		fail(w, s.ListStatus, "listing refused")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	all := s.comments[n]
	lo, hi := s.page(w, r, len(all))
	out := all[lo:hi]
	if out == nil {
		out = []*Comment{}
	}
	reply(w, 200, out)
}

func readBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct{ Body *string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, 400, "Problems parsing JSON")
		return "", false
	}
	if in.Body == nil {
		fail(w, 422, "Invalid request.\n\n\"body\" wasn't supplied.")
		return "", false
	}
	if len(*in.Body) > 65536 {
		fail(w, 422, "Body is too long (maximum is 65536 characters)")
		return "", false
	}
	return *in.Body, true
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	if s.CreateStatus != 0 {
		fail(w, s.CreateStatus, "Resource not accessible by integration")
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	c := s.add(n, s.author(), body)
	w.Header().Set("Location", c.URL)
	reply(w, 201, c)
}

func (s *Server) edit(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	for _, cs := range s.comments {
		for _, c := range cs {
			if c.ID == id {
				c.Body, c.UpdatedAt = body, s.now().UTC().Truncate(time.Second)
				s.edited = append(s.edited, id)
				reply(w, 200, c)
				return
			}
		}
	}
	fail(w, 404, "Not Found")
}

func (s *Server) pull(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	p, ok := s.pulls[n]
	if !ok {
		fail(w, 404, "Not Found")
		return
	}
	repo := p.HeadRepo
	if repo == "" {
		repo = "forker/" + s.Repo
	}
	ref := p.HeadRef
	if ref == "" {
		ref = "master"
	}
	baseRef, state := p.BaseRef, p.State
	if baseRef == "" {
		baseRef = "main"
	}
	if state == "" {
		state = "open"
	}
	labels := []map[string]any{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"name": l})
	}
	reply(w, 200, map[string]any{"number": n, "state": state, "labels": labels,
		"head": map[string]any{"sha": p.HeadSHA, "ref": ref, "repo": map[string]any{"full_name": repo}},
		"base": map[string]any{"sha": p.BaseSHA, "ref": baseRef, "repo": map[string]any{"full_name": s.Owner + "/" + s.Repo}}})
}

func (s *Server) timelineList(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	all := s.timeline[n]
	lo, hi := s.page(w, r, len(all))
	out := []map[string]any{}
	for _, e := range all[lo:hi] {
		m := map[string]any{"event": e.Event, "created_at": e.CreatedAt.UTC().Format(time.RFC3339),
			"actor": e.Actor}
		if e.Event == "committed" {
			who := map[string]any{"name": e.Actor.Login, "email": e.Actor.Login + "@example.com", "date": e.CreatedAt.UTC().Format(time.RFC3339)}
			out = append(out, map[string]any{"event": e.Event, "sha": e.CommitID, "author": who, "committer": who})
			continue
		}
		if e.Label != "" {
			m["label"] = map[string]any{"name": e.Label}
		}
		if e.CommitID != "" {
			m["commit_id"] = e.CommitID
		}
		if e.ViaApp != "" {
			m["performed_via_github_app"] = map[string]any{"slug": e.ViaApp}
		}
		out = append(out, m)
	}
	reply(w, 200, out)
}

func (s *Server) permission(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	u := r.PathValue("u")
	if strings.HasSuffix(u, "[bot]") {
		fail(w, 404, u+" is not a user")
		return
	}
	role, ok := s.perms[u]
	if !ok {
		role = "none"
	}
	perm := role
	switch role {
	case "maintain":
		perm = "write"
	case "triage":
		perm = "read"
	}
	reply(w, 200, map[string]any{"permission": perm, "role_name": role, "user": User{Login: u, Type: "User"}})
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	run, ok := s.runs[id]
	if !ok {
		fail(w, 404, "Not Found")
		return
	}
	reply(w, 200, map[string]any{"id": id, "head_sha": run.HeadSHA, "event": run.Event,
		"created_at": run.CreatedAt.UTC().Format(time.RFC3339)})
}

func (s *Server) attempt(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	n, _ := strconv.Atoi(r.PathValue("n"))
	a, ok := s.attempts[id][n]
	if !ok {
		fail(w, 404, "Not Found")
		return
	}
	status := a.Status
	if status == "" {
		status = "completed"
	}
	reply(w, 200, map[string]any{"id": id, "run_attempt": n, "head_sha": a.HeadSHA, "status": status,
		"updated_at": a.UpdatedAt.UTC().Format(time.RFC3339)})
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	var st Status
	if err := json.NewDecoder(r.Body).Decode(&st); err != nil {
		fail(w, 400, "Problems parsing JSON")
		return
	}
	switch st.State {
	case "pending", "success", "failure", "error":
	default:
		fail(w, 422, "Validation Failed: state")
		return
	}
	if len(st.Description) > 140 {
		fail(w, 422, "Validation Failed: description is too long (maximum is 140 characters)")
		return
	}
	sha := r.PathValue("sha")
	s.statuses[sha] = append(s.statuses[sha], st)
	reply(w, 201, st)
}

func (s *Server) releaseList(w http.ResponseWriter, r *http.Request) {
	full := r.PathValue("o") + "/" + r.PathValue("r")
	rels := s.releases[full]
	lo, hi := s.page(w, r, len(rels))
	out := []map[string]any{}
	for _, rel := range rels[lo:hi] {
		var assets []map[string]any
		for name, b := range rel.Assets {
			assets = append(assets, map[string]any{"name": name, "size": len(b),
				"browser_download_url": fmt.Sprintf("%s/%s/releases/download/%s/%s", s.ServerURL(), full, rel.Tag, name)})
		}
		out = append(out, map[string]any{"tag_name": rel.Tag, "name": rel.Tag, "draft": rel.Draft,
			"prerelease": rel.Prerelease, "assets": assets})
	}
	reply(w, 200, out)
}

func (s *Server) tagList(w http.ResponseWriter, r *http.Request) {
	tags := s.tags[r.PathValue("o")+"/"+r.PathValue("r")]
	lo, hi := s.page(w, r, len(tags))
	out := tags[lo:hi]
	if out == nil {
		out = []map[string]any{}
	}
	reply(w, 200, out)
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	full := r.PathValue("o") + "/" + r.PathValue("r")
	for _, rel := range s.releases[full] {
		if rel.Tag != r.PathValue("tag") {
			continue
		}
		if b, ok := rel.Assets[r.PathValue("asset")]; ok {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(b)
			return
		}
	}
	http.NotFound(w, r)
}

func (s *Server) artifactJSON(a Artifact) map[string]any {
	sum := sha256.Sum256(a.Zip)
	return map[string]any{"id": a.ID, "node_id": fmt.Sprintf("MDg6QXJ0aWZhY3Q%d", a.ID), "name": a.Name,
		"size_in_bytes": len(a.Zip), "digest": "sha256:" + hex.EncodeToString(sum[:]),
		"url":                  fmt.Sprintf("%s/repos/%s/%s/actions/artifacts/%d", s.APIURL(), s.Owner, s.Repo, a.ID),
		"archive_download_url": fmt.Sprintf("%s/repos/%s/%s/actions/artifacts/%d/zip", s.APIURL(), s.Owner, s.Repo, a.ID),
		"expired":              false, "created_at": s.now().UTC().Format(time.RFC3339),
		"workflow_run": map[string]any{"id": a.RunID}}
}

func (s *Server) artifactList(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	run, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	name := r.URL.Query().Get("name")
	var match []Artifact
	for _, a := range s.artifacts {
		if a.RunID == run && (name == "" || a.Name == name) {
			match = append(match, a)
		}
	}
	lo, hi := s.page(w, r, len(match))
	out := []map[string]any{}
	for _, a := range match[lo:hi] {
		out = append(out, s.artifactJSON(a))
	}
	reply(w, 200, map[string]any{"total_count": len(match), "artifacts": out})
}

func (s *Server) artifactZip(w http.ResponseWriter, r *http.Request) {
	if !s.repoOK(w, r) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if id < 1 || id > int64(len(s.artifacts)) {
		fail(w, 404, "Not Found")
		return
	}
	w.Header().Set("Location", fmt.Sprintf("%s/_artifacts/%d", s.srv.URL, id))
	w.WriteHeader(http.StatusFound)
}

func (s *Server) artifactBlob(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if id < 1 || id > int64(len(s.artifacts)) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	_, _ = w.Write(s.artifacts[id-1].Zip)
}
