package actrunner

import (
	"strings"

	"github.com/loadgate/loadgate/internal/githubfake"
)

// Token is the GITHUB_TOKEN the runs get, and the one API accepts.
const Token = "e2e-token"

// API is the GitHub the runs see: githubfake under GHES's /api/v3, its token an installation's
// (GET /user 403, viewer github-actions[bot]). Safe for concurrent use.
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
