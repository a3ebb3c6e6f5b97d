package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/stack"
	"github.com/loadgate/loadgate/gate/stub"
)

// LabelStub marks a service of a stack as a `loadgate stub`; its value is
// the port the stub listens on. loadgate run reads the stub's stated
// configuration (GET /stub/config) and states it in the report.
const LabelStub = "io.loadgate.stub"

// counting is what a run reads from the services themselves: the counts of
// the scenario and the stubs' configurations.
type counting struct {
	reader    *counted.Reader
	stubs     []result.Stub
	plain     []string         // counts a plain run cannot read
	unreached []unreachedCount // a gate's counts whose port accepted no connection
}

// unreachedCount is a count of a gate's side whose service port could not
// be reached (the side's service exposes no such counter): not measured,
// with the reason, in every round of that side.
type unreachedCount struct {
	workload string
	count    *scenario.Count
	why      string
}

// countAddrs is where a stack's counts are read: resolved once per stack
// (resolveCounts), since a count's port is waited for up to the ready
// timeout.
type countAddrs struct {
	addrs []string // per count of sc.Counts(); "" where unreached
	whys  []string // why a count's port was not reached
}

// resolveCounts resolves the scenario's counts on the stack. A count
// naming a service the stack does not have is refused (exit 2). A port
// that accepts no connection is unusable in a run (exit 3); with
// unreachedOK (a gate, whose base may predate the counter) it is recorded
// as not reached.
func resolveCounts(ctx context.Context, sc *scenario.Scenario, sr *stackRun, unreachedOK bool) (countAddrs, error) {
	names, counts := sc.Counts()
	var ca countAddrs
	type resolved struct {
		addr string
		err  error
	}
	seen := map[string]resolved{} // each service:port is checked once
	for i, n := range counts {
		at := n.Service + ":" + strconv.Itoa(n.Port)
		r, ok := seen[at]
		if !ok {
			r.addr, _, r.err = sr.stack.Target(ctx, at)
			seen[at] = r
		}
		addr, err := r.addr, r.err
		why := ""
		switch {
		case errors.Is(err, stack.ErrTargetRefused):
			return ca, usageErr("run: %w", sc.CountError(n, "%v", err))
		case err != nil && (!unreachedOK || ctx.Err() != nil):
			return ca, unusable(fmt.Errorf("run: count of %s: %w", orEvery(names[i]), err))
		case err != nil:
			first, _, _ := strings.Cut(err.Error(), "\n") // not the hint and log lines
			why = "the counter's port " + at + " accepted no connection on this side's stack: " + first
		}
		ca.addrs, ca.whys = append(ca.addrs, addr), append(ca.whys, why)
	}
	return ca, nil
}

// startCounting resolves the scenario's counts and the stack's stubs once
// the stack is up (sr nil: a plain run, which has no service to ask). A
// count naming a service the stack does not have is refused (exit 2).
func startCounting(ctx context.Context, sc *scenario.Scenario, sr *stackRun, stderr io.Writer) (*counting, error) {
	if sr == nil {
		names, counts := sc.Counts()
		c := &counting{}
		for i, n := range counts {
			c.plain = append(c.plain, fmt.Sprintf("counted by the service: the count of %s (%s on %s:%d) is not read in plain mode (--target URL): there is no stack whose service loadgate may ask",
				orEvery(names[i]), n.Metric, n.Service, n.Port))
		}
		return c, nil
	}
	ca, err := resolveCounts(ctx, sc, sr, false)
	if err != nil {
		return nil, err
	}
	return newCounting(sc, ca, stackStubs(ctx, sr, stderr)), nil
}

// newCounting is the counting of one load with the counts resolved and
// the stubs' configurations read.
func newCounting(sc *scenario.Scenario, ca countAddrs, stubs []result.Stub) *counting {
	names, counts := sc.Counts()
	c := &counting{stubs: stubs}
	var probes []counted.Probe
	for i, n := range counts {
		if i >= len(ca.addrs) {
			c.unreached = append(c.unreached, unreachedCount{workload: names[i], count: n, why: "the count was not resolved on this stack"})
			continue
		}
		if ca.whys[i] != "" {
			c.unreached = append(c.unreached, unreachedCount{workload: names[i], count: n, why: ca.whys[i]})
			continue
		}
		probes = append(probes, counted.Probe{Workload: names[i], Count: n, Addr: ca.addrs[i]})
	}
	if len(probes) > 0 {
		c.reader = counted.NewReader(sc, probes, counted.Options{})
	}
	return c
}

// counted is u as the result states it: every span not measured, beside
// what was sent toward it (the workload's offered requests, or every
// workload's for the scenario-wide count).
func (u unreachedCount) counted(res *result.Result) result.Counted {
	c := result.Counted{Workload: u.workload, Service: u.count.Service, Port: u.count.Port, Path: u.count.Path,
		Metric: u.count.Metric.String(), Phases: []result.CountedSpan{}, Total: result.CountedSpan{Phase: result.TotalSpan, NotMeasured: u.why}}
	for _, p := range res.Phases {
		s := result.CountedSpan{Phase: p.Name, NotMeasured: u.why}
		for _, w := range p.Workloads {
			if u.workload == "" || w.Name == u.workload {
				s.Sent += w.Offered
			}
		}
		c.Total.Sent += s.Sent
		c.Phases = append(c.Phases, s)
	}
	return c
}

func orEvery(workload string) string {
	if workload == "" {
		return "every workload"
	}
	return "workload " + workload
}

// stackStubs reads the stated configuration of every service labelled
// LabelStub.
func stackStubs(ctx context.Context, sr *stackRun, stderr io.Writer) []result.Stub {
	p := sr.stack.Project()
	var names []string
	for name, svc := range p.Services {
		if _, ok := svc.Labels[LabelStub]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []result.Stub
	for _, name := range names {
		raw := p.Services[name].Labels[LabelStub]
		port, err := strconv.Atoi(strings.TrimSpace(raw))
		s := result.Stub{Service: name, Port: port}
		switch {
		case err != nil || port < 1 || port > 65535:
			s.NotMeasured = fmt.Sprintf("label %s=%q is not a TCP port", LabelStub, raw)
		default:
			addr, _, terr := sr.stack.Target(ctx, name+":"+strconv.Itoa(port))
			if terr == nil {
				var cfg result.StubConfig
				if cfg, terr = stub.FetchConfig(ctx, addr); terr == nil {
					s.Config = &cfg
				}
			}
			if terr != nil {
				s.NotMeasured, _, _ = strings.Cut(terr.Error(), "\n") // not the hint and log lines
			}
		}
		if s.NotMeasured != "" {
			fmt.Fprintf(stderr, "loadgate: warning: stub %s: %s\n", name, s.NotMeasured)
		}
		out = append(out, s)
	}
	return out
}

// started returns the load's start listener (load.Config.Started) that
// times the counted reads on the schedule's own t0, which the engine hands
// it before the first request is due; nil without counts.
func (c *counting) started(ctx context.Context) func(time.Time) {
	if c == nil || c.reader == nil {
		return nil
	}
	return func(t0 time.Time) { c.reader.Start(ctx, t0) }
}

// stop ends the counted reads of a run that returns without finish (its
// load failed, or it was interrupted), so that none outlives the stack:
// run defers it right after startCounting. After finish it does nothing.
func (c *counting) stop() {
	if c != nil && c.reader != nil {
		c.reader.Stop()
	}
}

// finish makes the last read and writes what was counted into res.
func (c *counting) finish(ctx context.Context, res *result.Result) {
	if c == nil {
		return
	}
	res.NotMeasured = append(res.NotMeasured, c.plain...)
	if c.reader == nil && len(c.stubs) == 0 && len(c.unreached) == 0 {
		return
	}
	res.Counting = &result.Counting{Counts: []result.Counted{}, Stubs: c.stubs}
	if c.reader != nil {
		res.Counting.Counts = c.reader.Finish(context.WithoutCancel(ctx), res)
	}
	for _, u := range c.unreached {
		res.Counting.Counts = append(res.Counting.Counts, u.counted(res))
	}
	if res.Counting.Stubs == nil {
		res.Counting.Stubs = []result.Stub{}
	}
}
