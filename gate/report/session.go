package report

import "github.com/loadgate/loadgate/gate/result"

// sessionWorkloads are the WebSocket workloads, whose numbers follow a phase's latency table.
func sessionWorkloads(p result.Phase) []result.Workload {
	var out []result.Workload
	for _, w := range p.Workloads {
		if w.IsSession() {
			out = append(out, w)
		}
	}
	return out
}

func sessionCells(s *result.Summary) []string {
	if s == nil || s.Count == 0 {
		return []string{dash, dash, dash, "n=0"}
	}
	return []string{MS(s.P50), MS(s.P95), MS(s.P99), "n=" + Count(s.Count)}
}

func sessionRow(w result.Workload) []string {
	row := []string{w.Name}
	row = append(row, sessionCells(w.ConnectMS)...)
	row = append(row, sessionCells(w.FirstMessageMS)...)
	return append(row, Count(w.Cancelled), Count(w.MessagesReceived))
}

var sessionHeader = []string{"session", "connect p50", "p95", "p99", "n", "first message p50", "p95", "p99", "n", "cancelled", "messages"}

func textSessions(b *txt, p result.Phase) {
	ws := sessionWorkloads(p)
	if len(ws) == 0 {
		return
	}
	rows := [][]string{sessionHeader}
	for _, w := range ws {
		rows = append(rows, sessionRow(w))
	}
	b.line("  WebSocket sessions, ms from the due time (successes; cancelled ones have no latency sample):")
	b.table("  ", rows)
}

func mdSessions(b *md, p result.Phase) {
	ws := sessionWorkloads(p)
	if len(ws) == 0 {
		return
	}
	b.line("WebSocket sessions: connect and first message in ms from the due time, successes only; a cancelled session is a success without a latency sample.")
	b.line("")
	b.header("lrrrrrrrrrr", sessionHeader...)
	for _, w := range ws {
		b.row(sessionRow(w)...)
	}
	b.line("")
}
