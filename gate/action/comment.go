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

// Marker is the hidden first line of the scenario's pull request comment:
// `<!-- loadgate:comment scenario=NAME -->`, NAME percent-encoded outside
// letters, digits and . _ - (so no name can close the HTML comment).
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

// NewClient returns a go-github client for env's API (GITHUB_API_URL, so
// GitHub Enterprise Server works too) authenticated with token (none when
// empty). hc nil is a client with a 30 s timeout.
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

// GitHubActionsBot is the account every comment made with a workflow's
// GITHUB_TOKEN is by.
const GitHubActionsBot = "github-actions[bot]"

// Self is the account the token comments as: only its comments are ours.
type Self struct {
	Login string // as REST gives a comment's user.login: "loadgate-ci", "github-actions[bot]", "my-app[bot]"
	Bot   bool   // a bot account (user.type "Bot"): its comments must be by a Bot too
	// How says where Login came from: "GET /user", "GraphQL viewer", or
	// "assumed" (neither answered: the GITHUB_TOKEN's account is assumed,
	// and the author of a comment we create corrects it, see UpsertComment).
	How string
}

// Wrote reports whether u is this account: the same login (GitHub logins
// are case-insensitive) and, for a bot, a Bot account.
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

// WhoAmI finds the account the token comments as, without ever reading it
// from a comment (anyone can write any body):
//
//  1. GET /user: personal access tokens and OAuth tokens.
//  2. When that is refused (403 or 404, "Resource not accessible by
//     integration": GITHUB_TOKEN and every GitHub App installation token),
//     GraphQL's viewer { login } at graphqlURL, which installation tokens
//     may read: "github-actions[bot]" for GITHUB_TOKEN, "<app-slug>[bot]"
//     for an app's token. A login ending in [bot] must be a Bot's.
//  3. When both are refused, GitHubActionsBot is assumed (the action's
//     default token is GITHUB_TOKEN), marked How "assumed": UpsertComment
//     then learns the true account from the comment it creates (the API's
//     answer names its author) and removes that account's older copies.
//
// Any other failure of GET /user (a 5xx, the network) is an error: guessing
// then could duplicate a personal token's comment.
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

// CommentBody is the scenario's comment: the marker line, the Markdown
// report, and footer (may be empty), within CommentLimit. When cut, a note
// says so and where the full report is (footer is kept). Any loadgate
// marker inside the report is defused, so the body holds only its own.
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

// isMarked reports whether c's exact first line is marker (a comment that
// quotes the marker further down is not marked).
func isMarked(c *github.IssueComment, marker string) bool {
	first, _, _ := strings.Cut(c.GetBody(), "\n")
	return strings.TrimRight(first, "\r") == marker
}

// FindComments pages through all of the pull request's comments (100 a
// page) for the scenario's comments by me, oldest first: the marker as the
// exact first line and me as the author (Self.Wrote). A comment with the
// marker by anyone else (an impostor, another app) is never returned.
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

// sameBody compares comment bodies as GitHub stores them (line ends may
// come back as CRLF; surrounding space is not kept).
func sameBody(a, b string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(a) == norm(b)
}

// UpsertComment keeps exactly one comment of the scenario by me on the
// pull request: it edits the oldest of mine (FindComments) when its body
// differs (Edited), leaves it alone when the same (Unchanged: no PATCH), or
// creates one (Created); any further copies of mine are deleted. body
// should come from CommentBody; a body that does not start with the marker
// line gets it, and one over the limit is cut.
//
// When me was not verified (How "assumed") and the comment it creates turns
// out to be by another account, that account is who we are: its older
// copies are deleted, so that there is still one comment (Author says who).
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

// removeCopies deletes comments of ours (found by FindComments: marker and
// author) beside the one kept.
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

// StatusOf returns the HTTP status of a go-github error, 0 when it has none
// (a network error).
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
