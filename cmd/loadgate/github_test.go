package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/action"
)

// The Action's inputs become the gate's flags (action.Inputs.Apply, tested
// there), and the Action's log has no progress line.
func TestActionInputsAreTheGateFlags(t *testing.T) {
	f := gateFlags{progress: "auto"}.withInputs(action.Inputs{Scenario: "load.yaml", Base: "abc123", Against: "base"})
	if f.Scenario != "load.yaml" || f.Base != "abc123" || f.progress != "never" {
		t.Errorf("scenario %q base %q progress %q", f.Scenario, f.Base, f.progress)
	}
}

// GitHub not answering the on-demand step is a runtime failure (exit 3, naming
// the call), not a usage error: before the fix it exited 2.
func TestRegression_OnDemandAPIOutageExitedAsUsage(t *testing.T) {
	b, err := os.ReadFile("../../gate/action/testdata/issue_comment-created.json")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	p["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"}
	p["comment"].(map[string]any)["body"] = "/loadgate"
	b, _ = json.Marshal(p)
	ev := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(ev, b, 0o644); err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // connection refused: an outage
	for k, v := range map[string]string{"GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": ev, "GITHUB_REPOSITORY": "Codertocat/Hello-World",
		"GITHUB_API_URL": down.URL, "INPUT_GITHUB-TOKEN": "ghs_x", "GITHUB_OUTPUT": filepath.Join(t.TempDir(), "out")} {
		t.Setenv(k, v)
	}
	var stdout, stderr bytes.Buffer
	err = run(context.Background(), []string{"ondemand", "--github"}, &stdout, &stderr)
	if got := exitCode(err, &stderr); got != exitUnusable || !strings.Contains(stderr.String(), "GitHub API: reading @Codertocat's permission") {
		t.Errorf("exit %d, stderr %q; want 3, naming the permission read", got, stderr.String())
	}
}
