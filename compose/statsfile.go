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

// StatsFile is OUT/stats.jsonl, copied to tee when given. Writer and Emit are
// safe for concurrent use; Close is called once, after every sampler stopped.
type StatsFile struct {
	f  io.Closer
	bw *bufio.Writer
	w  io.Writer // the locked sink of every sampler
}

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

func (s *StatsFile) Writer() io.Writer { return s.w }

// Emit writes a host process's sample, the generator's as service "loadgate".
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

func (s *StatsFile) Close() error { return errors.Join(s.bw.Flush(), s.f.Close()) }

func GeneratorService(sum procstat.Summary) result.Service {
	return result.Service{Name: "loadgate (generator)", Samples: sum.Samples, CPUAvgPct: sum.CPUAvgPct, CPUPeakPct: sum.CPUPeakPct, MemPeakBytes: sum.MemPeakBytes}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
