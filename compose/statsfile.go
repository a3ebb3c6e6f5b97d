package compose

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/internal/outfile"
)

// StatsFile is OUT/stats.jsonl: every sampler's lines (the stack's engine
// stats, the generator's, the watched host processes'), one JSON line
// (Sample) per write, serialized, and copied to a tee when one is given
// (soak's memory collector).
//
// Writer and Emit may be used by several samplers at once; Close is called
// once, after every sampler stopped.
type StatsFile struct {
	f  io.Closer
	bw *bufio.Writer
	w  io.Writer // the locked sink of every sampler
}

// CreateStats creates out/stats.jsonl (internal/outfile: never through a
// symlink); tee, when not nil, also gets every line.
func CreateStats(out string, tee io.Writer) (*StatsFile, error) {
	f, err := outfile.Create(filepath.Join(out, "stats.jsonl"))
	if err != nil {
		return nil, err
	}
	s := &StatsFile{f: f, bw: bufio.NewWriter(f)}
	var sink io.Writer = s.bw
	if tee != nil {
		sink = io.MultiWriter(s.bw, tee)
	}
	s.w = &lockedWriter{w: sink}
	return s, nil
}

// Writer is the sink a sampler writes whole lines to (Stack.Sample).
func (s *StatsFile) Writer() io.Writer { return s.w }

// Emit writes a host process's sample (procstat.WatchOptions.Emit): the
// generator's (self) as service "loadgate", a watched process's by
// procstat.ServiceName.
func (s *StatsFile) Emit(p procstat.Sample, self bool) {
	line := Sample{Time: p.Time, Service: procstat.ServiceName(p.PID, p.Name), Container: fmt.Sprintf("pid %d", p.PID),
		IntervalS: p.Interval.Seconds(), CPUPct: p.CPUPct, CPUPctOfSet: p.CPUPctOfSet, MemBytes: p.MemBytes, CPUUsageNS: uint64(p.CPUTime)}
	if self {
		line.Service = "loadgate"
	}
	b, err := json.Marshal(line)
	if err == nil {
		_, _ = s.w.Write(append(b, '\n'))
	}
}

// Close flushes and closes the file.
func (s *StatsFile) Close() error { return errors.Join(s.bw.Flush(), s.f.Close()) }

// GeneratorService is the generator's summary as result.json states it,
// beside the stack's services.
func GeneratorService(sum procstat.Summary) result.Service {
	return result.Service{Name: "loadgate (generator)", Samples: sum.Samples, CPUAvgPct: sum.CPUAvgPct, CPUPeakPct: sum.CPUPeakPct, MemPeakBytes: sum.MemPeakBytes}
}

// lockedWriter serializes the samplers' lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
