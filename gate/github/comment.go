package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
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
func NewClient(env *Env, token string, hc *http.Client) (*gh.Client, error) {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c := gh.NewClient(hc)
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

// Identity returns the login of the token's user (GET /user), or "" when the
// API does not say (GITHUB_TOKEN and other installation tokens get 403).
func Identity(ctx context.Context, c *gh.Client) string {
	u, _, err := c.Users.Get(ctx, "")
	if err != nil {
		return ""
	}
	return u.GetLogin()
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
		"65 536", group(len(md)))
	md, ok := Cut(md, note, room)
	body = marker + "\n" + md
	if footer != "" {
		body += "\n\n" + footer
	}
	return body, !ok
}

// ours reports whether c is this scenario's comment made by us: the marker
// as its exact first line, and the author me when known, else a bot.
func ours(c *gh.IssueComment, marker, me string) bool {
	first, _, _ := strings.Cut(c.GetBody(), "\n")
	if strings.TrimRight(first, "\r") != marker {
		return false
	}
	if me != "" {
		return strings.EqualFold(c.GetUser().GetLogin(), me)
	}
	return c.GetUser().GetType() == "Bot"
}

// FindComment pages through all of the pull request's comments (100 a
// page) for the scenario's own comment; nil when there is none. me is the
// token's login, "" when unknown (see ours).
func FindComment(ctx context.Context, c *gh.Client, owner, repo string, pr int, scenario, me string) (*gh.IssueComment, error) {
	marker := Marker(scenario)
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for pages := 0; pages < 1000; pages++ {
		cs, resp, err := c.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the comments of #%d: %w", pr, err)
		}
		for _, cm := range cs {
			if ours(cm, marker, me) {
				return cm, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
	return nil, fmt.Errorf("listing the comments of #%d: more than 1000 pages", pr)
}

// UpsertComment creates the scenario's comment on the pull request, or
// edits it in place when it exists (found by FindComment, with the token's
// identity from Identity). body should come from CommentBody; a body that
// does not start with the marker line gets it, and one over the limit is
// cut. An unchanged comment is left alone (id returned, created false).
func UpsertComment(ctx context.Context, c *gh.Client, owner, repo string, pr int, scenario, body string) (id int64, created bool, err error) {
	if pr <= 0 {
		return 0, false, fmt.Errorf("no pull request number")
	}
	marker := Marker(scenario)
	if first, _, _ := strings.Cut(body, "\n"); first != marker {
		body, _ = CommentBody(scenario, body, "")
	} else if len(body) > CommentLimit {
		md := strings.TrimPrefix(body, marker+"\n")
		body, _ = CommentBody(scenario, md, "")
	}
	me := Identity(ctx, c)
	old, err := FindComment(ctx, c, owner, repo, pr, scenario, me)
	if err != nil {
		return 0, false, err
	}
	if old != nil {
		if old.GetBody() == body {
			return old.GetID(), false, nil
		}
		cm, _, err := c.Issues.EditComment(ctx, owner, repo, old.GetID(), &gh.IssueComment{Body: gh.String(body)})
		if err != nil {
			return old.GetID(), false, fmt.Errorf("editing comment %d on #%d: %w", old.GetID(), pr, err)
		}
		return cm.GetID(), false, nil
	}
	cm, _, err := c.Issues.CreateComment(ctx, owner, repo, pr, &gh.IssueComment{Body: gh.String(body)})
	if err != nil {
		return 0, false, fmt.Errorf("commenting on #%d: %w", pr, err)
	}
	return cm.GetID(), true, nil
}

// StatusOf returns the HTTP status of a go-github error, 0 when it has none
// (a network error).
func StatusOf(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) && rl.Response != nil {
		return rl.Response.StatusCode
	}
	var ab *gh.AbuseRateLimitError
	if errors.As(err, &ab) && ab.Response != nil {
		return ab.Response.StatusCode
	}
	return 0
}

// group writes n with thin-space thousands groups, as the reports do.
func group(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}
