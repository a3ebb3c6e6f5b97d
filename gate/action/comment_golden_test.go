package action

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/verdict"
)

var updateGolden = flag.Bool("update", false, "rewrite the comment goldens in testdata")

// The whole pull request comment as GitHub receives it: the marker, the
// title with the verdict word, the report's comment rendering
// (gate/report's gate_*.comment.md goldens, report.CompareSummary) and the
// footer with the workflow run and the results artifact.
func TestCommentGolden(t *testing.T) {
	const runURL = "https://github.com/acme/shop/actions/runs/4242"
	for _, c := range []struct {
		name string
		v    verdict.Value
	}{
		{"duet_regression", verdict.Regression},
		{"duet_pass", verdict.Pass},
		{"duet_inconclusive", verdict.Inconclusive},
		{"duet_generator_behind", verdict.Inconclusive},
		{"duet_unusable", verdict.Unusable},
	} {
		t.Run(c.name, func(t *testing.T) {
			md, err := os.ReadFile(filepath.Join("..", "report", "testdata", "gate_"+c.name+".comment.md.golden"))
			if err != nil {
				t.Fatal(err)
			}
			footer := commentFooter("3f1c2a9be07d5f6a1c2d3e4f5a6b7c8d9e0f1a2b", runURL, ArtifactURL("", runURL), "")
			body, cut := CommentBody("demo-api", Titled(string(md), "demo-api", c.v), footer)
			if cut {
				t.Fatalf("the comment was cut (%d bytes)", len(body))
			}
			lines := strings.Split(body, "\n")
			if lines[0] != Marker("demo-api") || !strings.HasPrefix(lines[1], "# loadgate gate: demo-api — "+VerdictWord(c.v)) || !strings.HasPrefix(lines[len(lines)-1], "<sub>loadgate · head `3f1c2a9be07d`") {
				t.Errorf("marker, title or footer:\n%s", body)
			}
			path := filepath.Join("testdata", "comment_"+c.name+".md.golden")
			if *updateGolden {
				if err := os.WriteFile(path, []byte(body+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./gate/action -run TestCommentGolden -update)", err)
			}
			if body+"\n" != string(want) {
				t.Errorf("%s differs (run go test ./gate/action -run TestCommentGolden -update after checking)\n%s", path, body)
			}
		})
	}
}
