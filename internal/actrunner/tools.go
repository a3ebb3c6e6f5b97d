// Package actrunner runs this repository's workflows and the documented
// example workflows offline with nektos/act in self-hosted mode, the actions'
// released code from the Go module proxy, and a GitHub API on loopback (API)
// that stores what the workflows write. Only the e2e tier (make e2e) uses it.
package actrunner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// ActVersion is the nektos/act release the harness builds from source.
const ActVersion = "v0.2.89"

// Action is a third-party action pinned by commit SHA and the module version that stands for it.
type Action struct {
	Uses    string // owner/repo@<sha>, as the workflows write it
	Module  string // its repository as a Go module path
	Version string // the module version fetched
	Note    string // why Version differs from the pinned release, when it does
}

// Actions are the third-party actions the workflows and action.yml use (a test checks it).
var Actions = []Action{
	{Uses: "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", Module: "github.com/actions/checkout", Version: "v4.2.2+incompatible"},
	{Uses: "actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02", Module: "github.com/actions/upload-artifact", Version: "v4.6.2+incompatible"},
	{Uses: "actions/setup-go@d35c59abb061a4a6fb18e82ac0862c26744d6ab5", Module: "github.com/actions/setup-go", Version: "v5.5.0+incompatible"},
	// action.yml's cache/restore and cache/save steps: the repository at that commit.
	{Uses: "actions/cache@5a3ec84eff668545956fd18022155c47e93e2684", Module: "github.com/actions/cache", Version: "v4.2.3+incompatible"},
	{Uses: "actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093", Module: "github.com/actions/download-artifact", Version: "v5.0.0+incompatible",
		Note: "the pinned v4.3.0 (and every v4.x tag) is not served by the module proxy; v5.0.0, the next release, has the same inputs"},
}

// Offline lists the pinned actions that cannot run here, and why; their workflows are not run.
var Offline = map[string]string{
	"actions/attest-build-provenance@e8998f949152b193b063cb0ec769d69d929409be": "needs GitHub's OIDC token and Sigstore",
}

// Tools is act and the actions' code, ready to run.
type Tools struct {
	Act   string            // the act binary
	Local map[string]string // Action.Uses → the directory of its code
}

// CacheDir keeps act and the actions between runs: $LOADGATE_E2E_CACHE, else the user's cache.
func CacheDir() (string, error) {
	if d := os.Getenv("LOADGATE_E2E_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("actrunner: cache directory: %w", err)
	}
	return filepath.Join(d, "loadgate-e2e"), nil
}

// Prepare builds act into cache unless there, and fetches every Action; the first build takes minutes.
func Prepare(ctx context.Context, cache string) (*Tools, error) {
	bin := filepath.Join(cache, "act-"+ActVersion, "act")
	if _, err := os.Stat(bin); err != nil {
		if err := goCmd(ctx, cache, nil, "install", "github.com/nektos/act@"+ActVersion); err != nil {
			return nil, fmt.Errorf("actrunner: build act %s: %w", ActVersion, err)
		}
	}
	t := &Tools{Act: bin, Local: map[string]string{}}
	for _, a := range Actions {
		var out bytes.Buffer
		if err := goCmd(ctx, cache, &out, "mod", "download", "-json", a.Module+"@"+a.Version); err != nil {
			return nil, fmt.Errorf("actrunner: fetch %s (%s@%s): %w", a.Uses, a.Module, a.Version, err)
		}
		var m struct{ Dir, Error string }
		if err := json.Unmarshal(out.Bytes(), &m); err != nil || m.Dir == "" {
			return nil, fmt.Errorf("actrunner: fetch %s: no directory in go mod download's answer (%v %s)", a.Uses, err, m.Error)
		}
		t.Local[a.Uses] = m.Dir
	}
	return t, nil
}

// goCmd runs go in dir, outside any module, with GOBIN at act's directory, for at most 15 minutes.
func goCmd(ctx context.Context, dir string, out *bytes.Buffer, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-modcacherw", "GO111MODULE=on",
		"GOBIN="+filepath.Join(dir, "act-"+ActVersion))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out != nil {
		cmd.Stdout = out
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %v: %w: %s", args, err, tail(stderr.String(), 2000))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
