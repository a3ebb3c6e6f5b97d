package actrunner_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/loadgate/loadgate/internal/actrunner"
)

// Every third-party action a workflow, an example or an action pins has
// its released code in actrunner.Actions, so that the e2e runs use it.
func TestEveryPinnedActionIsMapped(t *testing.T) {
	var files []string
	for _, g := range []string{"../../.github/workflows/*.yml", "../../examples/workflows/*.yml", "../../action.yml", "../../comment/action.yml"} {
		m, err := filepath.Glob(g)
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: no files (%v)", g, err)
		}
		files = append(files, m...)
	}
	var mapped []string
	for _, a := range actrunner.Actions {
		mapped = append(mapped, a.Uses)
	}
	uses := regexp.MustCompile(`uses:\s*(actions/[\w.-]+@[0-9a-f]{40})`)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range uses.FindAllStringSubmatch(string(b), -1) {
			n++
			if _, off := actrunner.Offline[m[1]]; !slices.Contains(mapped, m[1]) && !off {
				t.Errorf("%s pins %s, which actrunner.Actions does not map", f, m[1])
			}
		}
	}
	if n == 0 {
		t.Fatal("no pinned action found: the pattern is wrong")
	}
}

func TestPayloadsNameTheRepository(t *testing.T) {
	b, err := actrunner.PullRequestPayload(actrunner.PR{Number: 3, Repo: "o/r", HeadRepo: "fork/r", BaseRef: "main", HeadRef: "f", BaseSHA: "b", HeadSHA: "h"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"full_name":"o/r"`, `"full_name":"fork/r"`, `"fork":true`, `"sha":"h"`, `"number":3`} {
		if !regexp.MustCompile(regexp.QuoteMeta(want)).Match(b) {
			t.Errorf("payload lacks %s", want)
		}
	}
}
