package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
)

// The corpus line says how much of the generator's cores the hypervisor
// took, in the rounds behind schedule and in those on it, from the results
// that recorded it; a corpus of older results says nothing of it.
func TestDescribeStatesSteal(t *testing.T) {
	res := func(steal float64, behind bool) *result.Result {
		r := &result.Result{Offered: 3000, LatenessMS: result.Summary{Count: 3000, P99: 1}}
		if behind {
			r.LatenessMS.P99 = 12
		}
		if steal >= 0 {
			r.Steal = &result.Steal{WindowS: 15, Load: result.StealCores{CPUs: "1", Share: steal}}
		}
		return r
	}
	ds := &design{name: "duet5", scenario: "s.yaml", chunks: 1, pairs: []pair{
		{base: res(0.20, true), head: res(0.30, true)},
		{base: res(0.01, false), head: res(0.02, false)},
		{base: res(0.03, false), head: res(-1, false)}, // an older loadgate's: no steal
	}}
	got := ds.describe()
	want := "hypervisor steal on the generator's cores (5 of 6 results recorded it): median 3.0%, largest 30.0%; median 25.0% in the results behind schedule, 2.0% in those on it"
	if !strings.Contains(got, want) {
		t.Errorf("describe:\n%s\nlacks\n%s", got, want)
	}
	ds.pairs = ds.pairs[2:3]
	ds.pairs[0].base.Steal = nil
	if got := ds.describe(); strings.Contains(got, "steal") {
		t.Errorf("no steal recorded, yet: %s", got)
	}
}

// -ab-only replaces the A/B section of an earlier table, and only it.
func TestRewriteABKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	out := dir + "/table.md"
	before := "# Gate quality\n\n## Operating characteristic\n\n| a | b |\n\n## Real A/B gates\n\nold rows\n\n## After\n\nkept\n"
	if err := os.WriteFile(out, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteAB(out, dir+"/no-ab"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	want := "# Gate quality\n\n## Operating characteristic\n\n| a | b |\n\n## Real A/B gates\n\nNone kept yet (bench/gatequality/ab.sh).\n\n## After\n\nkept\n"
	if string(b) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", b, want)
	}
	if err := os.WriteFile(out, []byte("# no section\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rewriteAB(out, dir); err == nil || !strings.Contains(err.Error(), "no \"## Real A/B gates\" section") {
		t.Errorf("a file without the section: %v", err)
	}
}

// An A/B's summary line says when its gates' rounds ran, on what processor
// and between which commits: A/B gates are kept across sessions and hosts,
// so the corpus's conditions in the table's preamble are not theirs.
func TestABProvenance(t *testing.T) {
	at := func(hm string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", "2026-12-03 "+hm)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	file := &report.GateVerdictFile{Sides: []report.GateSideFile{{Commit: "a8c440a024ac"}, {Commit: "3a57799f07e7"}}}
	gates := []abGate{
		{name: "profile25", started: at("11:10"), finished: at("11:13"), machine: "Intel Xeon", file: file},
		{name: "profile25", started: at("10:54"), finished: at("10:58"), machine: "Intel Xeon", file: file},
		{name: "ingest25", started: at("09:00"), finished: at("09:30"), machine: "AMD EPYC", file: file},
	}
	want := " Rounds run 2026-12-03 10:54–11:13 UTC, on Intel Xeon, base → head a8c440a → 3a57799."
	if got := provenance(gates, "profile25"); got != want {
		t.Errorf("provenance:\n%q\nwant\n%q", got, want)
	}
	// Gates of two days say both dates; a side without its commit names no commits.
	next := abGate{name: "profile25", started: at("23:50"), finished: at("23:59").Add(24 * time.Hour), file: &report.GateVerdictFile{Sides: []report.GateSideFile{{Commit: ""}, {Commit: "3a57799f07e7"}}}}
	want = " Rounds run 2026-12-03 23:50–2026-12-04 23:59 UTC."
	if got := provenance([]abGate{next}, "profile25"); got != want {
		t.Errorf("provenance over two days:\n%q\nwant\n%q", got, want)
	}
	// Gates kept before the results named the processor or their rounds: nothing claimed.
	if got := provenance([]abGate{{name: "old", file: &report.GateVerdictFile{}}}, "old"); got != "" {
		t.Errorf("nothing recorded, yet: %q", got)
	}
}
