package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loadgate/loadgate/gate/procstat"
	"github.com/loadgate/loadgate/gate/result"
)

// maxPartial bounds a kept partial line; longer is not a stats line.
const maxPartial = 1 << 20

type statsLine struct {
	Time      time.Time `json:"time"`
	Service   string    `json:"service"`
	Container string    `json:"container"`
	MemBytes  int64     `json:"mem_bytes"`
}

// Collector keeps each process's memory samples from stats.jsonl written to it; safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	partial []byte
	series  map[string][]Point
	kinds   map[string]string
	pids    map[string]int
	byPID   map[int]string // a watched process's name, as first seen
	order   []string
}

func NewCollector() *Collector {
	return &Collector{series: map[string][]Point{}, kinds: map[string]string{}, pids: map[string]int{}, byPID: map[int]string{}}
}

// Write reads the complete lines of p and earlier Writes; it never fails.
func (c *Collector) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		var s statsLine
		if json.Unmarshal(c.partial[:i], &s) == nil && s.Service != "" {
			c.add(s)
		}
		c.partial = c.partial[i+1:]
	}
	if len(c.partial) > maxPartial { // not our lines: drop, never grow
		c.partial = nil
	}
	return len(p), nil
}

// Partial is how many bytes of an unfinished line c keeps.
func (c *Collector) Partial() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.partial)
}

func (c *Collector) add(s statsLine) {
	name, kind, pid := s.Service, KindService, 0
	switch {
	case s.Service == "loadgate":
		name, kind = "loadgate (generator)", KindGenerator
	case strings.HasPrefix(s.Container, "pid "):
		kind = KindPID
		if _, err := fmt.Sscanf(s.Container, "pid %d", &pid); err == nil {
			if first, ok := c.byPID[pid]; ok {
				name = first
			} else {
				c.byPID[pid] = name
			}
		}
	}
	if _, ok := c.kinds[name]; !ok {
		c.kinds[name], c.pids[name] = kind, pid
		c.order = append(c.order, name)
	}
	c.series[name] = append(c.series[name], Point{Time: s.Time, MemBytes: s.MemBytes})
}

// Estimated is a process's current growth estimate, for a progress line.
type Estimated struct {
	Name         string
	BytesPerHour float64
	OK           bool // false: too few samples yet
}

func (c *Collector) Estimates() []Estimated {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Estimated
	for _, name := range c.sorted() {
		v, ok := Estimate(c.series[name])
		out = append(out, Estimated{Name: name, BytesPerHour: v, OK: ok})
	}
	return out
}

func (c *Collector) sorted() []string {
	names := append([]string(nil), c.order...)
	rank := map[string]int{KindService: 0, KindPID: 1, KindGenerator: 2}
	sort.SliceStable(names, func(i, j int) bool {
		if ri, rj := rank[c.kinds[names[i]]], rank[c.kinds[names[j]]]; ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// Processes judges every sampled process against threshold (bytes/h).
func (c *Collector) Processes(threshold float64, stack *result.Stack, watched []procstat.Summary) []Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	cpu := map[string]result.Service{}
	if stack != nil {
		for _, s := range stack.Services {
			cpu[s.Name] = s
		}
		if g := stack.Generator; g != nil {
			cpu[g.Name] = *g
		}
	}
	byPID := map[int]procstat.Summary{}
	for _, w := range watched {
		byPID[w.PID] = w
	}
	var out []Process
	for _, name := range c.sorted() {
		p := NewProcess(name, c.kinds[name], c.pids[name], c.series[name], threshold)
		if s, ok := cpu[name]; ok && p.Kind != KindPID {
			p.CPUAvgPct, p.CPUPeakPct = s.CPUAvgPct, s.CPUPeakPct
		}
		if w, ok := byPID[p.PID]; ok && p.Kind == KindPID {
			p.CPUAvgPct, p.CPUPeakPct = w.CPUAvgPct, w.CPUPeakPct
			if w.Exited {
				p.SetExited(w.ExitedAt)
			}
		}
		out = append(out, p)
		delete(byPID, p.PID)
	}
	for _, w := range watched {
		if _, left := byPID[w.PID]; !left {
			continue
		}
		p := NewProcess(procstat.ServiceName(w.PID, w.Name), KindPID, w.PID, nil, threshold)
		if w.Exited {
			p.SetExited(w.ExitedAt)
		}
		out = append(out, p)
	}
	return out
}
