package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// With --direct, the gate of the last entry straight against --since's
// commit decides the cumulative rule: three steady pushes pass as a chain,
// but a direct gate that measured +30% since the first is a regression
// (exit 1), the chain shown beside it. A direct gate of other commits, or
// --direct without --since, is refused (exit 2).
func TestHistoryDirectDecides(t *testing.T) {
	clone := historyRepo(t)
	out := filepath.Join(t.TempDir(), "history")
	commit := func(i int) string { return fmt.Sprintf("d1ec7%03x%032x", i, i) }
	t.Setenv("GITHUB_EVENT_NAME", "push")
	for i := 0; i < 3; i++ {
		base := commit(i - 1)
		if i == 0 {
			base = strings.Repeat("b", 40)
		}
		if got, stdout, stderr := runHistory(t, "record", "--from", gateResults(t, base, commit(i), 1), "--ref", "main", "--dir", clone); got != 0 {
			t.Fatalf("record %d: exit %d\n%s%s", i, got, stdout, stderr)
		}
	}
	if got, md, stderr := runHistory(t, "--scenario", "cmp", "--dir", clone, "--out", out, "--since", commit(0)); got != 0 || !strings.Contains(md, "**PASS**") {
		t.Fatalf("three steady entries, chained: exit %d\n%s%s", got, md, stderr)
	}
	direct := gateResults(t, commit(0), commit(2), 1.3)
	got, md, stderr := runHistory(t, "--scenario", "cmp", "--dir", clone, "--out", out, "--since", commit(0), "--direct", direct)
	if got != 1 || !strings.Contains(md, "**REGRESSION** since") || !strings.Contains(md, "measured directly: +") || !strings.Contains(md, ", regression. Chained: +0.0%") ||
		!strings.Contains(md, "decided by a direct paired gate") {
		t.Errorf("direct +30%%: exit %d, want 1\n%s%s", got, md, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--direct", direct}, "--direct needs --since"},
		{[]string{"--since", commit(0), "--direct", gateResults(t, commit(1), commit(2), 1.3)}, "the direct gate ran"},
		{[]string{"--since", commit(0), "--direct", t.TempDir()}, "--direct: report: gate results"},
	} {
		args := append([]string{"--scenario", "cmp", "--dir", clone, "--out", out}, c.args...)
		if got, _, stderr := runHistory(t, args...); got != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 naming %q\n%s", c.args, got, c.want, stderr)
		}
	}
}
