package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"

	"github.com/loadgate/loadgate/gate/report"
)

const markerPrefix = "<!-- loadgate:comment scenario="

// Marker is the scenario comment's hidden first line, `<!-- loadgate:comment
// scenario=NAME -->`, NAME percent-encoded so it cannot close the HTML comment.
func Marker(scenario string) string {
	var b strings.Builder
	for i := 0; i < len(scenario); i++ {
		c := scenario[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return markerPrefix + b.String() + " -->"
}

// NewClient is a client for env's GITHUB_API_URL with token (none if empty); nil hc: a 30 s timeout.
func NewClient(env *Env, token string, hc *http.Client) (*github.Client, error) {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c := github.NewClient(hc)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	api := "https://api.github.com"
	if env != nil && env.APIURL != "" {
		api = env.APIURL
	}
	u, err := url.Parse(strings.TrimRight(api, "/") + "/")
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q: not a URL", api)
	}
	c.BaseURL = u
	return c, nil
}

// GitHubActionsBot is the author of comments made with GITHUB_TOKEN.
const GitHubActionsBot = "github-actions[bot]"

// Self is the account the token comments as: only its comments are ours.
type Self struct {
	Login string // as REST gives a comment's user.login: "loadgate-ci", "github-actions[bot]", "my-app[bot]"
	Bot   bool   // a bot account (user.type "Bot"): its comments must be by a Bot too

	How string // "GET /user", "GraphQL viewer" or "assumed" (see WhoAmI)
}

// Wrote reports whether u is this account (login case-insensitive, a bot a Bot).
func (s Self) Wrote(u *github.User) bool {
	if s.Login == "" || u == nil || !strings.EqualFold(u.GetLogin(), s.Login) {
		return false
	}
	return !s.Bot || u.GetType() == "Bot"
}

func (s Self) String() string {
	if s.Login == "" {
		return "nobody"
	}
	return s.Login + " (" + s.How + ")"
}

func selfOf(u *github.User, how string) Self {
	login := u.GetLogin()
	return Self{Login: login, Bot: u.GetType() == "Bot" || strings.HasSuffix(strings.ToLower(login), "[bot]"), How: how}
}

// WhoAmI is GET /user; when refused (403/404: installation tokens) GraphQL's viewer, else an
// assumed GitHubActionsBot; never from a comment. Any other GET /user failure is an error:
// a guess could duplicate a comment.
func WhoAmI(ctx context.Context, c *github.Client, graphqlURL string) (Self, error) {
	u, _, err := c.Users.Get(ctx, "")
	if err == nil && u.GetLogin() != "" {
		return selfOf(u, "GET /user"), nil
	}
	if st := StatusOf(err); err != nil && st != http.StatusForbidden && st != http.StatusNotFound {
		return Self{}, fmt.Errorf("GET /user: %w", err)
	}
	if login := viewer(ctx, c, graphqlURL); login != "" {
		return Self{Login: login, Bot: strings.HasSuffix(strings.ToLower(login), "[bot]"), How: "GraphQL viewer"}, nil
	}
	return Self{Login: GitHubActionsBot, Bot: true, How: "assumed"}, nil
}

// viewer asks GraphQL for the token's login; "" when refused or unclear.
func viewer(ctx context.Context, c *github.Client, graphqlURL string) string {
	if graphqlURL == "" {
		return ""
	}
	req, err := c.NewRequest(http.MethodPost, graphqlURL, map[string]string{"query": "query { viewer { login } }"})
	if err != nil {
		return ""
	}
	var out struct {
		Data struct {
			Viewer struct {
				Login string `json:"login"`
			} `json:"viewer"`
		} `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if _, err := c.Do(ctx, req, &out); err != nil || len(out.Errors) > 0 {
		return ""
	}
	login := out.Data.Viewer.Login
	if !validLogin(login) {
		return ""
	}
	return login
}

// validLogin: a GitHub login, optionally with the [bot] suffix.
func validLogin(s string) bool {
	s = strings.TrimSuffix(s, "[bot]")
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// CommentBody is the marker line, markdown (markers defused) and footer within CommentLimit.
func CommentBody(scenario, markdown, footer string) (body string, cut bool) {
	marker := Marker(scenario)
	md := strings.ReplaceAll(strings.TrimSpace(markdown), "<!-- loadgate:", "&lt;!-- loadgate:")
	footer = strings.TrimSpace(footer)
	room := CommentLimit - len(marker) - 1
	if footer != "" {
		room -= len(footer) + 2
	}
	note := fmt.Sprintf("> ✂️ **Cut:** GitHub limits a comment to %s characters; part of the report is left out here (%s bytes in all). The full report is in the job summary and the results artifact.",
		report.Count(CommentLimit), report.Count(int64(len(md))))
	md, ok := Cut(md, note, room)
	body = marker + "\n" + md
	if footer != "" {
		body += "\n\n" + footer
	}
	return body, !ok
}

// isMarked: c's exact first line is marker (quoting it further down is not).
func isMarked(c *github.IssueComment, marker string) bool {
	first, _, _ := strings.Cut(c.GetBody(), "\n")
	return strings.TrimRight(first, "\r") == marker
}

// FindComments returns the scenario's comments by me (nobody else) on the pull request, oldest first.
func FindComments(ctx context.Context, c *github.Client, owner, repo string, pr int, scenario string, me Self) ([]*github.IssueComment, error) {
	marker := Marker(scenario)
	var mine []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for pages := 0; pages < 1000; pages++ {
		cs, resp, err := c.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the comments of #%d: %w", pr, err)
		}
		for _, cm := range cs {
			if isMarked(cm, marker) && me.Wrote(cm.GetUser()) {
				mine = append(mine, cm)
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return mine, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, fmt.Errorf("listing the comments of #%d: more than 1000 pages", pr)
}

// Comment actions, as Upserted.Action and the log line say.
const (
	Created   = "created"
	Edited    = "edited"
	Unchanged = "unchanged"
)

// Upserted is what UpsertComment did.
type Upserted struct {
	ID      int64
	Action  string  // Created, Edited or Unchanged
	Author  Self    // the account the comment is by (learned from the API when created)
	Removed []int64 // our own older copies of the scenario's comment, deleted
}

// sameBody compares bodies as GitHub stores them (CRLF, trimmed).
func sameBody(a, b string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(a) == norm(b)
}

// UpsertComment keeps exactly one comment of the scenario by me: it edits the oldest or creates
// one, and deletes further copies. A created comment's author corrects an assumed me.
func UpsertComment(ctx context.Context, c *github.Client, owner, repo string, pr int, scenario, body string, me Self) (Upserted, error) {
	if pr <= 0 {
		return Upserted{}, fmt.Errorf("no pull request number")
	}
	marker := Marker(scenario)
	if first, _, _ := strings.Cut(body, "\n"); first != marker {
		body, _ = CommentBody(scenario, body, "")
	} else if len(body) > CommentLimit {
		md := strings.TrimPrefix(body, marker+"\n")
		body, _ = CommentBody(scenario, md, "")
	}
	mine, err := FindComments(ctx, c, owner, repo, pr, scenario, me)
	if err != nil {
		return Upserted{}, err
	}
	if len(mine) > 0 {
		old := mine[0]
		up := Upserted{ID: old.GetID(), Action: Unchanged, Author: me}
		if !sameBody(old.GetBody(), body) {
			if _, _, err := c.Issues.EditComment(ctx, owner, repo, old.GetID(), &github.IssueComment{Body: github.String(body)}); err != nil {
				return up, fmt.Errorf("editing comment %d on #%d: %w", old.GetID(), pr, err)
			}
			up.Action = Edited
		}
		up.Removed, err = removeCopies(ctx, c, owner, repo, mine[1:])
		return up, err
	}
	cm, _, err := c.Issues.CreateComment(ctx, owner, repo, pr, &github.IssueComment{Body: github.String(body)})
	if err != nil {
		return Upserted{}, fmt.Errorf("commenting on #%d: %w", pr, err)
	}
	up := Upserted{ID: cm.GetID(), Action: Created, Author: me}
	if u := cm.GetUser(); u.GetLogin() != "" && !me.Wrote(u) {
		// The API says who we are: that account's older copies go.
		up.Author = selfOf(u, "the created comment's author")
		others, err := FindComments(ctx, c, owner, repo, pr, scenario, up.Author)
		if err != nil {
			return up, err
		}
		var older []*github.IssueComment
		for _, o := range others {
			if o.GetID() != up.ID {
				older = append(older, o)
			}
		}
		up.Removed, err = removeCopies(ctx, c, owner, repo, older)
		return up, err
	}
	return up, nil
}

func removeCopies(ctx context.Context, c *github.Client, owner, repo string, cs []*github.IssueComment) ([]int64, error) {
	var ids []int64
	for _, cm := range cs {
		if _, err := c.Issues.DeleteComment(ctx, owner, repo, cm.GetID()); err != nil {
			return ids, fmt.Errorf("deleting our duplicate comment %d: %w", cm.GetID(), err)
		}
		ids = append(ids, cm.GetID())
	}
	return ids, nil
}

// StatusOf is a go-github error's HTTP status, 0 when none (network error).
func StatusOf(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) && rl.Response != nil {
		return rl.Response.StatusCode
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) && ab.Response != nil {
		return ab.Response.StatusCode
	}
	return 0
}
