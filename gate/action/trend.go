package action

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/loadgate/loadgate/gate/history"
	"github.com/loadgate/loadgate/gate/report"
	"github.com/loadgate/loadgate/gate/rounds"
)

// trendGitTimeout bounds each git call of the trend line: the gate must not wait on it.
const trendGitTimeout = 30 * time.Second

// HistoryTrend is Step.Trend on the clone in dir: gr's head against the data branch's history
// when gr's base is an entry of it, else "" (a history not read is said on log).
func HistoryTrend(log io.Writer) func(ctx context.Context, dir string, gr rounds.Outcome) string {
	return func(ctx context.Context, dir string, gr rounds.Outcome) string {
		name := gr.Scenario.Name
		if name == "" && len(gr.Head.Results) > 0 && gr.Head.Results[0] != nil {
			name = gr.Head.Results[0].Scenario.Name
		}
		if name == "" || gr.Base.Commit == "" {
			return ""
		}
		s := &history.Store{Dir: dir, Git: history.ExecGit{Timeout: trendGitTimeout}}
		a, err := history.Read(ctx, s, name, history.Options{})
		if err != nil {
			fmt.Fprintf(log, "loadgate: the history (%s) was not read, so the comment has no trend line: %v\n", history.DefaultBranch, err)
			return ""
		}
		t, ok := a.HeadTrend(gr)
		if !ok {
			return ""
		}
		return report.HistoryTrendLine(t, a)
	}
}
