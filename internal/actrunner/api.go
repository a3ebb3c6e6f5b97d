package actrunner

import (
	"strings"

	"github.com/loadgate/loadgate/internal/githubfake"
)

// Token is the GITHUB_TOKEN the runs get, and the one API accepts.
const Token = "e2e-token"

// API is the GitHub the runs see, on loopback: internal/githubfake (its
// doc comment lists where it differs from GitHub) under GHES's /api/v3
// prefix, for the repository the workflow runs in. It stores the comments
// the workflows post, so that a test reads them back (Comments); answers
// the release and tag lists the action's binary step reads, and serves the
// releases' downloads (AddRelease; none by default: the step builds); the
// pull requests the fork commenter checks (SetPull) and the artifacts its
// download-artifact fetches (AddArtifact); and records every request
// (Requests). Its token's account is an installation's, as GITHUB_TOKEN's:
// GET /user is 403, GraphQL's viewer is github-actions[bot]; ReadOnly
// stands for a fork's pull request's token.
//
// Not Gitea, which issue 32 proposed: `go install code.gitea.io/gitea@v1.27.3`
// is refused ("The go.mod file for the module providing named packages
// contains one or more replace directives"), and the module proxy is the
// only source of code here. githubfake speaks GitHub's own paths,
// pagination and shapes, so no adapter sits between it and the runs.
//
// Safe for concurrent use (githubfake's contract).
type API struct {
	*githubfake.Server
}

// NewAPI starts an API for repository full ("owner/name"); Close stops it.
func NewAPI(full string) *API {
	owner, name, _ := strings.Cut(full, "/")
	s := githubfake.New(owner, name, Token, "/api/v3")
	s.Viewer = "github-actions[bot]"
	return &API{s}
}

// GraphQLURL is GITHUB_GRAPHQL_URL, as GHES has it.
func (a *API) GraphQLURL() string { return a.URL() + "/api/graphql" }
