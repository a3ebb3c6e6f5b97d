package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// A merged gate's comment states, beside its headline, how many runners
// gave how many rounds and which shard did not arrive; the golden is the
// answer (headline, table, lines under it), up to the folded details.
func TestMergedGateHeadlineGolden(t *testing.T) {
	g := duetFixture(t, shape{sustain: 1.31, recover: 1.02, apiFail: 12, ingestOK: 400}, calm, nil)
	m := result.Machine{Host: "runner-a", CPUs: 4}
	g.Shards = []rounds.ShardInfo{
		{Name: "1/3", Status: rounds.ShardOK, Rounds: 3, Machine: m},
		{Name: "2/3", Status: rounds.ShardOK, Rounds: 2, Machine: result.Machine{Host: "runner-b", CPUs: 4}},
		{Name: "3/3", Status: rounds.ShardMissing},
	}
	g.Notes = append(g.Notes, verdict.Note{Code: verdict.NoteShardMissing, Shard: "3/3"})
	var b bytes.Buffer
	if err := report.CompareSummary(&b, g); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(b.String(), "<details>")
	checkGolden(t, "merged_headline.comment.md.golden", head)
	for _, want := range []string{"Merged from 2 of 3 runners, 5 paired rounds in all — shard 1/3: 3 rounds (runner-a); shard 2/3: 2 rounds (runner-b); shard 3/3: did not arrive."} {
		if !strings.Contains(head, want) {
			t.Errorf("the answer lacks %q:\n%s", want, head)
		}
	}
	var js bytes.Buffer
	if err := report.CompareJSON(&js, g); err != nil {
		t.Fatal(err)
	}
	vf, err := report.DecodeGateVerdict(&js)
	if err != nil || len(vf.Shards) != 3 || vf.Shards[1].Rounds != 2 || vf.Shards[2].Status != rounds.ShardMissing {
		t.Errorf("verdict.json shards %+v (%v)", vf.Shards, err)
	}
	var md bytes.Buffer
	if err := report.CompareMarkdown(&md, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "shard 3/3: no result arrived; the gate is judged on the other shards' rounds") {
		t.Errorf("report.md does not state the missing shard:\n%s", md.String())
	}
}

// Too few shards: the unusable verdict says how many arrived and the
// minimum, never a pass.
func TestMergedTooFewShardsWords(t *testing.T) {
	n := verdict.Note{Code: verdict.NoteShardsTooFew, Shards: 1, Shard: "4", MinShards: 2, Rounds: 3}
	want := "1 of 4 shards gave rounds (3 paired rounds), fewer than the 2 a merge needs (--min-shards): nothing is judged on so little"
	if got := report.NoteText(n); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
