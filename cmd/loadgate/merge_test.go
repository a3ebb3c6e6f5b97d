package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// merge refuses no shard directories and a directory that is not a
// shard's results, exit 2 naming it (the shard tests are gate/rounds').
func TestMergeRefusesWhatIsNoShard(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", "--out", t.TempDir() + "/m"}, "no shard directories given"},
		{[]string{"merge", "--out", t.TempDir() + "/m", dir}, dir + ": not a shard's results (no shard.json)"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
