package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/loadgate/loadgate/gate/rounds"
	"github.com/loadgate/loadgate/gate/verdict"
)

// shardsLine is a merged gate's account of its shards beside the headline, or "".
func shardsLine(g *gateReport) string {
	if len(g.Shards) == 0 {
		return ""
	}
	given, parts := 0, make([]string, 0, len(g.Shards))
	for _, s := range g.Shards {
		switch s.Status {
		case rounds.ShardOK:
			if s.Rounds > 0 {
				given++
			}
			host := s.Machine.Host
			if host == "" {
				host = "machine unknown"
			}
			parts = append(parts, fmt.Sprintf("shard %s: %s (%s)", s.Name, roundsWord(s.Rounds), host))
		case rounds.ShardMissing:
			parts = append(parts, "shard "+s.Name+": did not arrive")
		default:
			parts = append(parts, "shard "+s.Name+": failed")
		}
	}
	return fmt.Sprintf("Merged from %d of %d runners, %s in all — %s. Only ratios within a round are compared, so a runner's speed as a whole cancels.",
		given, len(g.Shards), pairedWord(g.Rounds), strings.Join(parts, "; "))
}

func pairedWord(n int) string {
	if n == 1 {
		return "1 paired round"
	}
	return fmt.Sprintf("%d paired rounds", n)
}

// shardNoteText words the notes of a merged gate's shards.
func shardNoteText(n verdict.Note) string {
	switch n.Code {
	case verdict.NoteShardMissing:
		return fmt.Sprintf("shard %s: no result arrived; the gate is judged on the other shards' rounds", n.Shard)
	case verdict.NoteShardFailed:
		return fmt.Sprintf("shard %s failed (%s): its rounds are not used; the gate is judged on the other shards' rounds", n.Shard, n.Detail)
	default: // NoteShardsTooFew
		return fmt.Sprintf("%d of %s shards gave rounds (%s), fewer than the %d a merge needs (--min-shards): nothing is judged on so little",
			n.Shards, n.Shard, pairedWord(n.Rounds), n.MinShards)
	}
}

// ShardText is what `loadgate gate --shard` prints: its rounds, and no verdict.
func ShardText(w io.Writer, gr rounds.Outcome, out string, shard rounds.Shard) {
	fmt.Fprintf(w, "loadgate: shard %s of %s: %s in %s; no verdict here: `loadgate merge` judges the shards' rounds together\n",
		shard, gr.Scenario.Name, pairedWord(min(len(gr.Base.Results), len(gr.Head.Results))), filepath.Join(out, rounds.ShardFile))
}
