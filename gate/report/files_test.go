package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// The gate's report is rendered once: report.md on disk is the bytes handed
// on (to the step summary and the comment), not a file read back.
func TestGateReportRenderedOnce(t *testing.T) {
	out := t.TempDir()
	gr := rounds.Outcome{Verdict: rounds.ErrorVerdict("the stack did not come up")}
	var stdout, stderr bytes.Buffer
	md, err := report.WriteGate(out, gr, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := os.ReadFile(filepath.Join(out, "comment.md"))
	if err != nil || !bytes.Equal(md, disk) || !bytes.Contains(md, []byte("the stack did not come up")) {
		t.Errorf("returned %d bytes, comment.md %d (%v)", len(md), len(disk), err)
	}
	full, err := os.ReadFile(filepath.Join(out, "report.md"))
	if head := bytes.SplitN(md, []byte("\n"), 4); err != nil || len(head) < 4 || !bytes.Contains(full, head[2]) {
		t.Errorf("report.md does not open with the comment's headline (%v)", err)
	}
}
