package counted

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
	"github.com/loadgate/loadgate/gate/stub"
)

// LabelStub marks a `loadgate stub` service; its value is the stub's port.
const LabelStub = "io.loadgate.stub"

// Resolver resolves a stack's service:port to an address (Stack.Target).
type Resolver interface {
	Target(ctx context.Context, serviceColonPort string) (addr, path string, err error)
}

// RefusedError is a count naming a service:port the stack disallows (exit 2).
type RefusedError struct{ err error }

func (e *RefusedError) Error() string { return e.err.Error() }
func (e *RefusedError) Unwrap() error { return e.err }

// Addrs is where a stack's counts are read, resolved once per stack.
type Addrs struct {
	addrs []string // per count of sc.Counts(); "" where unreached
	whys  []string // why a count's port was not reached
}

// ResolveOptions: with UnreachedOK, a count whose port accepts no connection is
// not reached rather than an error (a gate's base may predate the counter).
type ResolveOptions struct {
	Refused     error // the Resolver's error for a disallowed service:port
	UnreachedOK bool
}

// Resolve resolves sc's counts, each service:port once (disallowed: *RefusedError).
func Resolve(ctx context.Context, sc *scenario.Scenario, r Resolver, o ResolveOptions) (Addrs, error) {
	names, counts := sc.Counts()
	var ca Addrs
	type resolved struct {
		addr string
		err  error
	}
	seen := map[string]resolved{}
	for i, n := range counts {
		at := n.Service + ":" + strconv.Itoa(n.Port)
		res, ok := seen[at]
		if !ok {
			res.addr, _, res.err = r.Target(ctx, at)
			seen[at] = res
		}
		why := ""
		switch err := res.err; {
		case err != nil && o.Refused != nil && errors.Is(err, o.Refused):
			return ca, &RefusedError{err: sc.CountError(n, "%v", err)}
		case err != nil && (!o.UnreachedOK || ctx.Err() != nil):
			return ca, fmt.Errorf("count of %s: %w", orEvery(names[i]), err)
		case err != nil:
			first, _, _ := strings.Cut(err.Error(), "\n") // not the hint and log lines
			why = "the counter's port " + at + " accepted no connection on this side's stack: " + first
		}
		ca.addrs, ca.whys = append(ca.addrs, res.addr), append(ca.whys, why)
	}
	return ca, nil
}

// Stubs reads each LabelStub service's configuration, sorted by service; one unread is not
// measured and warned of.
func Stubs(ctx context.Context, labels map[string]map[string]string, r Resolver, warn func(service, why string)) []result.Stub {
	var names []string
	for name, l := range labels {
		if _, ok := l[LabelStub]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []result.Stub
	for _, name := range names {
		raw := labels[name][LabelStub]
		port, err := strconv.Atoi(strings.TrimSpace(raw))
		s := result.Stub{Service: name, Port: port}
		switch {
		case err != nil || port < 1 || port > 65535:
			s.NotMeasured = fmt.Sprintf("label %s=%q is not a TCP port", LabelStub, raw)
		default:
			addr, _, terr := r.Target(ctx, name+":"+strconv.Itoa(port))
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
		if s.NotMeasured != "" && warn != nil {
			warn(name, s.NotMeasured)
		}
		out = append(out, s)
	}
	return out
}

// Counting is what one load reads from the services. One goroutine calls
// Started's listener, then Finish or Stop; a nil *Counting does nothing.
type Counting struct {
	reader    *Reader
	stubs     []result.Stub
	plain     []string     // counts a plain run cannot read
	unreached []unreachedC // counts whose port accepted no connection
}

type unreachedC struct {
	workload string
	count    *scenario.Count
	why      string
}

// Plain is the counting of a --target URL run: every count is not measured.
func Plain(sc *scenario.Scenario) *Counting {
	names, counts := sc.Counts()
	c := &Counting{}
	for i, n := range counts {
		c.plain = append(c.plain, fmt.Sprintf("counted by the service: the count of %s (%s on %s:%d) is not read in plain mode (--target URL): there is no stack whose service loadgate may ask",
			orEvery(names[i]), n.Metric, n.Service, n.Port))
	}
	return c
}

// New is the counting of one load on a stack.
func New(sc *scenario.Scenario, ca Addrs, stubs []result.Stub) *Counting {
	names, counts := sc.Counts()
	c := &Counting{stubs: stubs}
	var probes []Probe
	for i, n := range counts {
		switch {
		case i >= len(ca.addrs):
			c.unreached = append(c.unreached, unreachedC{workload: names[i], count: n, why: "the count was not resolved on this stack"})
		case ca.whys[i] != "":
			c.unreached = append(c.unreached, unreachedC{workload: names[i], count: n, why: ca.whys[i]})
		default:
			probes = append(probes, Probe{Workload: names[i], Count: n, Addr: ca.addrs[i]})
		}
	}
	if len(probes) > 0 {
		c.reader = NewReader(sc, probes, Options{})
	}
	return c
}

// Started returns the listener timing the reads on t0; nil if none to read.
func (c *Counting) Started(ctx context.Context) func(time.Time) {
	if c == nil || c.reader == nil {
		return nil
	}
	return func(t0 time.Time) { c.reader.Start(ctx, t0) }
}

// Stop ends the reads of a load that returns without Finish.
func (c *Counting) Stop() {
	if c != nil && c.reader != nil {
		c.reader.Stop()
	}
}

// Finish makes the last read and writes res.Counting (and not_measured).
func (c *Counting) Finish(ctx context.Context, res *result.Result) {
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

// counted is u as the result states it: not measured, beside what was sent.
func (u unreachedC) counted(res *result.Result) result.Counted {
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
