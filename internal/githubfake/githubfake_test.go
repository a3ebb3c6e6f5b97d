package githubfake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/internal/githubfake"
)

func do(t *testing.T, s *githubfake.Server, method, url, auth, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// Under GHES's /api/v3 prefix: comments are stored in GitHub's shape,
// listed a page at a time with a Link header that keeps the prefix, edited
// and deleted; a wrong token is 401.
func TestCommentsUnderThePrefix(t *testing.T) {
	s := githubfake.New("o", "r", "tok", "/api/v3")
	defer s.Close()
	api := s.APIURL() + "/repos/o/r"
	if r, _ := do(t, s, "GET", api+"/issues/1/comments", "Bearer nope", ""); r.StatusCode != 401 {
		t.Fatalf("wrong token: %d", r.StatusCode)
	}
	var first githubfake.Comment
	for i := range 3 {
		r, b := do(t, s, "POST", api+"/issues/1/comments", "token tok", `{"body":"c`+string(rune('0'+i))+`"}`)
		if r.StatusCode != 201 {
			t.Fatalf("create: %d %s", r.StatusCode, b)
		}
		if i == 0 {
			if err := json.Unmarshal(b, &first); err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			_ = json.Unmarshal(b, &raw)
			for _, k := range []string{"id", "node_id", "url", "html_url", "issue_url", "body", "user", "created_at", "updated_at", "author_association"} {
				if _, ok := raw[k]; !ok {
					t.Errorf("a comment lacks %s: %s", k, b)
				}
			}
		}
	}
	if first.User.Login != "github-actions[bot]" || first.User.Type != "Bot" {
		t.Errorf("author %+v, want github-actions[bot] (no Login)", first.User)
	}
	r, b := do(t, s, "GET", api+"/issues/1/comments?per_page=2", "Bearer tok", "")
	var page []githubfake.Comment
	if err := json.Unmarshal(b, &page); err != nil || len(page) != 2 {
		t.Fatalf("page 1: %v %s", err, b)
	}
	next := s.URL() + "/api/v3/repos/o/r/issues/1/comments?page=2&per_page=2"
	if l := r.Header.Get("Link"); !strings.Contains(l, "<"+next+`>; rel="next"`) {
		t.Errorf("Link %q, want next %s", l, next)
	}
	if _, b = do(t, s, "GET", next, "Bearer tok", ""); !bytes.Contains(b, []byte(`"c2"`)) {
		t.Errorf("page 2: %s", b)
	}
	if r, _ := do(t, s, "PATCH", api+"/issues/comments/"+jsonID(first.ID), "Bearer tok", `{"body":"edited"}`); r.StatusCode != 200 {
		t.Errorf("edit: %d", r.StatusCode)
	}
	if r, _ := do(t, s, "DELETE", api+"/issues/comments/"+jsonID(first.ID+1), "Bearer tok", ""); r.StatusCode != 204 {
		t.Errorf("delete: %d", r.StatusCode)
	}
	cs := s.Comments(1)
	if len(cs) != 2 || cs[0].Body != "edited" || cs[1].Body != "c2" {
		t.Errorf("stored %v", cs)
	}
	if e, d := s.Edited(), s.Deleted(); len(e) != 1 || len(d) != 1 {
		t.Errorf("edited %v, deleted %v", e, d)
	}
	if r, _ := do(t, s, "GET", s.APIURL()+"/repos/x/r/issues/1/comments", "Bearer tok", ""); r.StatusCode != 404 {
		t.Errorf("another repository's comments: %d, want 404", r.StatusCode)
	}
	if r, _ := do(t, s, "POST", s.URL()+"/api/graphql", "Bearer tok", `{"query":"query { viewer { login } }"}`); r.StatusCode != 403 {
		t.Errorf("GraphQL without Viewer: %d, want 403", r.StatusCode)
	}
}

func jsonID(id int64) string { b, _ := json.Marshal(id); return string(b) }

// Releases, their downloads without a token, and a run's artifact through
// the API's 302.
func TestReleasesAndArtifacts(t *testing.T) {
	s := githubfake.New("o", "r", "tok", "")
	defer s.Close()
	s.AddRelease("a/act", "abc", githubfake.Release{Tag: "v1.0.0", Assets: map[string][]byte{"SHA256SUMS": []byte("sums\n")}})
	_, b := do(t, s, "GET", s.APIURL()+"/repos/a/act/releases?per_page=100&page=1", "Bearer tok", "")
	if !bytes.Contains(b, []byte(`"tag_name":"v1.0.0"`)) {
		t.Errorf("releases: %s", b)
	}
	if _, b = do(t, s, "GET", s.APIURL()+"/repos/other/x/releases", "Bearer tok", ""); string(bytes.TrimSpace(b)) != "[]" {
		t.Errorf("no release: %s", b)
	}
	if r, b := do(t, s, "GET", s.URL()+"/a/act/releases/download/v1.0.0/SHA256SUMS", "", ""); r.StatusCode != 200 || string(b) != "sums\n" {
		t.Errorf("download: %d %q", r.StatusCode, b)
	}
	id := s.AddArtifact(77, "results", []byte("PK zip"))
	_, b = do(t, s, "GET", s.APIURL()+"/repos/o/r/actions/runs/77/artifacts?name=results", "Bearer tok", "")
	var list struct {
		TotalCount int `json:"total_count"`
		Artifacts  []struct {
			ID   int64
			Name string
		}
	}
	if err := json.Unmarshal(b, &list); err != nil || list.TotalCount != 1 || list.Artifacts[0].ID != id {
		t.Fatalf("artifacts: %v %s", err, b)
	}
	r, _ := do(t, s, "GET", s.APIURL()+"/repos/o/r/actions/artifacts/"+jsonID(id)+"/zip", "Bearer tok", "")
	if r.StatusCode != 302 {
		t.Fatalf("zip: %d", r.StatusCode)
	}
	if _, b = do(t, s, "GET", r.Header.Get("Location"), "", ""); string(b) != "PK zip" {
		t.Errorf("archive %q", b)
	}
}

// A run's attempt answers in GitHub's shape (head_sha, status, updated_at, the end of a
// completed attempt); an attempt not set is 404. A committed timeline event carries its
// commit's git dates, not created_at.
func TestRunAttemptsAndCommittedEvents(t *testing.T) {
	s := githubfake.New("o", "r", "tok", "")
	defer s.Close()
	ended := time.Date(2026, 12, 7, 10, 5, 0, 0, time.UTC)
	s.SetAttempt(7, 1, githubfake.Attempt{HeadSHA: "abc", UpdatedAt: ended})
	r, b := do(t, s, "GET", s.APIURL()+"/repos/o/r/actions/runs/7/attempts/1", "Bearer tok", "")
	var a struct {
		HeadSHA   string    `json:"head_sha"`
		Status    string    `json:"status"`
		Attempt   int       `json:"run_attempt"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	if err := json.Unmarshal(b, &a); err != nil || r.StatusCode != 200 || a.HeadSHA != "abc" || a.Status != "completed" || a.Attempt != 1 || !a.UpdatedAt.Equal(ended) {
		t.Errorf("attempt 1: %d %s (%v)", r.StatusCode, b, err)
	}
	if r, _ := do(t, s, "GET", s.APIURL()+"/repos/o/r/actions/runs/7/attempts/2", "Bearer tok", ""); r.StatusCode != 404 {
		t.Errorf("attempt 2, not set: %d, want 404", r.StatusCode)
	}
	s.AddTimeline(3, githubfake.TimelineEvent{Event: "committed", CommitID: "def", Actor: githubfake.User{Login: "dev"}, CreatedAt: ended})
	_, b = do(t, s, "GET", s.APIURL()+"/repos/o/r/issues/3/timeline", "Bearer tok", "")
	if !strings.Contains(string(b), `"sha":"def"`) || !strings.Contains(string(b), `"date":"2026-12-07T10:05:00Z"`) || strings.Contains(string(b), "created_at") {
		t.Errorf("committed event: %s", b)
	}
}
