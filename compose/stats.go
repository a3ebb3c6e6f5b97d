package compose

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/loadgate/loadgate/gate/result"
)

// DefaultSampleInterval is Sample's interval when it is given none (≤ 0).
const DefaultSampleInterval = time.Second

// Sample is one stats.jsonl line: one container over one interval.
type Sample struct {
	Time        time.Time `json:"time"`
	Service     string    `json:"service"`
	Container   string    `json:"container"`
	IntervalS   float64   `json:"interval_s"`
	CPUPct      float64   `json:"cpu_pct"`        // percent of one core over the interval
	CPUPctOfSet float64   `json:"cpu_pct_of_set"` // percent of the stack's cpuset (0 when not pinned)
	MemBytes    int64     `json:"mem_bytes"`      // usage minus inactive file cache
	MemLimit    int64     `json:"mem_limit_bytes,omitempty"`
	NetRxBytes  int64     `json:"net_rx_bytes"` // cumulative
	NetTxBytes  int64     `json:"net_tx_bytes"` // cumulative
	CPUUsageNS  uint64    `json:"cpu_usage_ns"` // cumulative total_usage
}

// Sample writes a JSON line per running container to w every interval, CPU from
// the engine's readings (about one a second). stop returns the per-service summary
// and may be called again; interval ≤ 0: DefaultSampleInterval.
func (s *Stack) Sample(ctx context.Context, interval time.Duration, w io.Writer) (stop func() []result.Service) {
	if interval <= 0 {
		interval = DefaultSampleInterval
	}
	ctx, cancel := context.WithCancel(ctx)
	sm := &sampler{s: s, w: w, used: map[string]reading{}, latest: map[string]latest{}, streams: map[string]bool{}, agg: map[string]*agg{}}
	for _, name := range s.Services() {
		sm.agg[name] = &agg{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer sm.wg.Wait()
		sm.tick(ctx) // start streams
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sm.tick(ctx)
			}
		}
	}()
	var once sync.Once
	var out []result.Service
	return func() []result.Service {
		once.Do(func() {
			cancel()
			<-done
			out = sm.summary()
		})
		return out
	}
}

type reading struct {
	at    time.Time
	usage uint64
}

type latest struct {
	c  ctr
	st container.StatsResponse
}

type agg struct {
	cpuSum  float64 // sum over ticks of the service's percent
	cpuPeak float64
	memPeak int64
	samples int
}

type sampler struct {
	s   *Stack
	w   io.Writer
	enc *json.Encoder
	wg  sync.WaitGroup

	mu      sync.Mutex         // guards latest and streams
	latest  map[string]latest  // by container id, fed by the streams
	streams map[string]bool    // container ids with a running stream
	used    map[string]reading // by container id: the reading the last sample ended at
	agg     map[string]*agg    // by service
}

func (sm *sampler) stream(ctx context.Context, c ctr) {
	defer sm.wg.Done()
	defer func() {
		sm.mu.Lock()
		delete(sm.streams, c.ID)
		delete(sm.latest, c.ID)
		sm.mu.Unlock()
	}()
	r, err := sm.s.api.ContainerStats(ctx, c.ID, true)
	if err != nil {
		return
	}
	defer r.Body.Close()
	dec := json.NewDecoder(r.Body)
	for {
		var st container.StatsResponse
		if err := dec.Decode(&st); err != nil {
			return
		}
		if st.Read.IsZero() {
			continue
		}
		sm.mu.Lock()
		sm.latest[c.ID] = latest{c: c, st: st}
		sm.mu.Unlock()
	}
}

// tick turns each container's latest reading into a sample, summed per service.
func (sm *sampler) tick(ctx context.Context) {
	sm.streamNew(ctx)
	if ctx.Err() != nil {
		return
	}
	setLen := sm.s.stackCPUs.Len()
	cpu := map[string]float64{}
	mem := map[string]int64{}
	got := map[string]bool{}
	for _, l := range sm.snapshot() {
		now := reading{at: l.st.Read, usage: l.st.CPUStats.CPUUsage.TotalUsage}
		prev, had := sm.used[l.c.ID]
		if had && !now.at.After(prev.at) {
			continue // no new reading since the last tick
		}
		sm.used[l.c.ID] = now
		if !had || now.usage < prev.usage {
			continue
		}
		smp, pct := newSample(l, prev, now, setLen)
		if sm.w != nil {
			if sm.enc == nil {
				sm.enc = json.NewEncoder(sm.w)
			}
			_ = sm.enc.Encode(smp)
		}
		cpu[l.c.service] += pct
		mem[l.c.service] += smp.MemBytes
		got[l.c.service] = true
	}
	sm.aggregate(cpu, mem, got)
}

func (sm *sampler) streamNew(ctx context.Context) {
	cs, err := sm.s.containers(ctx, false)
	if err != nil {
		return
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for _, c := range cs {
		if !sm.streams[c.ID] {
			sm.streams[c.ID] = true
			sm.wg.Add(1)
			go sm.stream(ctx, c)
		}
	}
}

func (sm *sampler) snapshot() []latest {
	sm.mu.Lock()
	snap := make([]latest, 0, len(sm.latest))
	for _, l := range sm.latest {
		snap = append(snap, l)
	}
	sm.mu.Unlock()
	sort.Slice(snap, func(i, j int) bool { return snap[i].c.name < snap[j].c.name })
	return snap
}

// newSample is l's sample from prev to now and its CPU percent of one core;
// setLen is the stack's cpus (0: unknown).
func newSample(l latest, prev, now reading, setLen int) (Sample, float64) {
	dt := now.at.Sub(prev.at)
	pct := float64(now.usage-prev.usage) / float64(dt.Nanoseconds()) * 100
	smp := Sample{
		Time:       now.at.UTC(),
		Service:    l.c.service,
		Container:  l.c.name,
		IntervalS:  round(dt.Seconds(), 4),
		CPUPct:     round(pct, 3),
		MemBytes:   memUsage(l.st.MemoryStats),
		MemLimit:   int64(l.st.MemoryStats.Limit),
		CPUUsageNS: now.usage,
	}
	if setLen > 0 {
		smp.CPUPctOfSet = round(pct/float64(setLen), 3)
	}
	for _, n := range l.st.Networks {
		smp.NetRxBytes += int64(n.RxBytes)
		smp.NetTxBytes += int64(n.TxBytes)
	}
	return smp, pct
}

func (sm *sampler) aggregate(cpu map[string]float64, mem map[string]int64, got map[string]bool) {
	for svc := range got {
		a := sm.agg[svc]
		if a == nil {
			a = &agg{}
			sm.agg[svc] = a
		}
		a.samples++
		a.cpuSum += cpu[svc]
		a.cpuPeak = math.Max(a.cpuPeak, cpu[svc])
		if mem[svc] > a.memPeak {
			a.memPeak = mem[svc]
		}
	}
}

func (sm *sampler) summary() []result.Service {
	out := make([]result.Service, 0, len(sm.agg))
	for name, a := range sm.agg {
		svc := result.Service{Name: name, CPUPeakPct: round(a.cpuPeak, 3), MemPeakBytes: a.memPeak, Samples: a.samples}
		if a.samples > 0 {
			svc.CPUAvgPct = round(a.cpuSum/float64(a.samples), 3)
		}
		out = append(out, svc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// memUsage is usage minus inactive file cache, as `docker stats` shows.
func memUsage(m container.MemoryStats) int64 {
	u := m.Usage
	if v, ok := m.Stats["total_inactive_file"]; ok && v < u {
		u -= v
	} else if v, ok := m.Stats["inactive_file"]; ok && v < u {
		u -= v
	}
	return int64(u)
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
