package report_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/report"
)

// A gate's results directory read back gives the entry the gate itself
// would have recorded: same commits, same steps, the rounds merged alike.
func TestReadGateRoundTrip(t *testing.T) {
	gr := gateFixture(t, shape{sustain: 1.04, recover: 1.04, ingestOK: 400}, calm, nil)
	dir := t.TempDir()
	if _, err := report.WriteGate(dir, gr, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for i, r := range gr.Head.Results {
		rd := filepath.Join(dir, "head", fmt.Sprintf("round-%d", i+1))
		if err := os.MkdirAll(rd, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile(filepath.Join(rd, "result.json")); err != nil {
			t.Fatal(err)
		}
	}
	back, err := report.ReadGate(dir)
	if err != nil {
		t.Fatal(err)
	}
	date := time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC)
	want, err := history.FromGate(gr, "main", date)
	if err != nil {
		t.Fatal(err)
	}
	got, err := history.FromGate(back, "main", date)
	if err != nil {
		t.Fatal(err)
	}
	if got.Commit != headCommit || got.Base != baseCommit || len(got.Steps) == 0 {
		t.Fatalf("entry read back: commit %s base %s, %d steps", got.Commit, got.Base, len(got.Steps))
	}
	if !reflect.DeepEqual(got.Steps, want.Steps) {
		t.Errorf("steps read back\n%+v\nwant\n%+v", got.Steps, want.Steps)
	}
	if got.Result.Recorded != want.Result.Recorded {
		t.Errorf("merged rounds: %d recorded, want %d", got.Result.Recorded, want.Result.Recorded)
	}
}

// A directory that is not a gate's results is refused, naming the file.
func TestReadGateRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := report.ReadGate(dir); err == nil || !strings.Contains(err.Error(), "verdict.json") {
		t.Errorf("no verdict.json: %v", err)
	}
	gr := gateFixture(t, shape{sustain: 1, recover: 1, ingestOK: 400}, calm, nil)
	if _, err := report.WriteGate(dir, gr, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := report.ReadGate(dir); err == nil || !strings.Contains(err.Error(), "head") {
		t.Errorf("no head rounds: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "verdict.json"), []byte(`{"schema":"loadgate/verdict/v1"}`), 0o644)
	if _, err := report.ReadGate(dir); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("a run's verdict.json: %v", err)
	}
}

// WriteHistory writes the table, the JSON and an SVG per series.
func TestWriteHistory(t *testing.T) {
	a := historyFixture(t)
	dir := t.TempDir()
	if err := report.WriteHistory(dir, a, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"history.md", "history.json", "history-steady-api-p95.svg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if got := report.HistorySVGName(history.Key{Phase: "a b", Workload: "../x", Metric: "p95"}); got != "history-a_b-.._x-p95.svg" {
		t.Errorf("HistorySVGName: %s", got)
	}
}
