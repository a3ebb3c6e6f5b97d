package counted_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/counted"
	"github.com/loadgate/loadgate/gate/result"
	"github.com/loadgate/loadgate/gate/scenario"
)

const countsYAML = `name: c
count: {service: api, port: 9090, metric: 'http_requests_total'}
phases:
  - {name: ramp, rate: 1, duration: 1s}
  - {name: sustain, rate: 1, duration: 1s}
workloads:
  - name: a
    http: {path: /}
    count: {service: api, port: 9090, path: /m, metric: 'requests_total'}
  - name: b
    http: {path: /b}
`

var errNotAllowed = errors.New("not a service of the stack")

// resolver answers Target from errs (by service:port; absent: an address)
// and counts the calls.
type resolver struct {
	errs  map[string]error
	calls map[string]int
}

func (r *resolver) Target(ctx context.Context, at string) (string, string, error) {
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[at]++
	if err := r.errs[at]; err != nil {
		return "", "", err
	}
	return "127.0.0.1:1", "bridge", nil
}

func countsScenario(t *testing.T) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(countsYAML), "c.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A count naming a service:port the stack does not allow is a refusal
// (the caller's exit 2) naming the count's file and line.
func TestResolveRefusedCountNamesItsLine(t *testing.T) {
	r := &resolver{errs: map[string]error{"api:9090": fmt.Errorf("api:9090: %w", errNotAllowed)}}
	_, err := counted.Resolve(context.Background(), countsScenario(t), r, counted.ResolveOptions{Refused: errNotAllowed, UnreachedOK: true})
	var re *counted.RefusedError
	if !errors.As(err, &re) || !strings.HasPrefix(err.Error(), "c.yaml:2: count: ") {
		t.Errorf("err %v, want a *RefusedError at c.yaml:2", err)
	}
}

// A counter's port that accepted no connection: in a run, an error (not a
// refusal); on a gate's side, each of its counts is not measured in every
// span, saying why in one line, beside what was sent. Each service:port is
// resolved once.
func TestResolveUnreachedCounter(t *testing.T) {
	sc := countsScenario(t)
	r := &resolver{errs: map[string]error{"api:9090": errors.New("dial tcp: connection refused\nhint: is the port exposed?")}}
	_, err := counted.Resolve(context.Background(), sc, r, counted.ResolveOptions{Refused: errNotAllowed})
	var re *counted.RefusedError
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "count of every workload") {
		t.Errorf("in a run: %v, want an error that is not a refusal", err)
	}
	r.calls = nil
	ca, err := counted.Resolve(context.Background(), sc, r, counted.ResolveOptions{Refused: errNotAllowed, UnreachedOK: true})
	if err != nil || r.calls["api:9090"] != 1 {
		t.Fatalf("in a gate: %v, resolved %d times", err, r.calls["api:9090"])
	}
	res := &result.Result{Phases: []result.Phase{
		{Name: "ramp", Workloads: []result.Workload{{Name: "a", Offered: 3}, {Name: "b", Offered: 4}}},
		{Name: "sustain", Workloads: []result.Workload{{Name: "a", Offered: 5}, {Name: "b", Offered: 6}}}}}
	counted.New(sc, ca, nil).Finish(context.Background(), res)
	if res.Counting == nil || len(res.Counting.Counts) != 2 || res.Counting.Stubs == nil {
		t.Fatalf("counting %+v", res.Counting)
	}
	every, a := res.Counting.Counts[0], res.Counting.Counts[1]
	if every.Total.Sent != 18 || a.Total.Sent != 8 || a.Phases[1].Sent != 5 || a.Workload != "a" {
		t.Errorf("sent: every workload %d, a %d (sustain %d)", every.Total.Sent, a.Total.Sent, a.Phases[1].Sent)
	}
	for _, s := range append(a.Phases, a.Total) {
		if s.Counted != nil || !strings.Contains(s.NotMeasured, "api:9090 accepted no connection on this side's stack: dial tcp: connection refused") || strings.Contains(s.NotMeasured, "hint") {
			t.Errorf("%s: %q", s.Phase, s.NotMeasured)
		}
	}
}

// A plain run reads no count and says so of each, in not_measured.
func TestPlainSaysNoCountIsRead(t *testing.T) {
	c := counted.Plain(countsScenario(t))
	if c.Started(context.Background()) != nil {
		t.Error("a plain counting has reads to time")
	}
	res := &result.Result{}
	c.Finish(context.Background(), res)
	if len(res.NotMeasured) != 2 || !strings.Contains(res.NotMeasured[1], "the count of workload a (requests_total on api:9090) is not read in plain mode") || res.Counting != nil {
		t.Errorf("not measured %q, counting %+v", res.NotMeasured, res.Counting)
	}
	var none *counted.Counting
	none.Stop()
	none.Finish(context.Background(), res) // nothing, no panic
}

// Every stub is stated, sorted: one whose label is no port, one that
// cannot be reached, each not measured with why (and warned of).
func TestStubsStatesTheOnesItCannotRead(t *testing.T) {
	labels := map[string]map[string]string{
		"upstream": {counted.LabelStub: "http"},
		"api":      {"other": "1"},
		"payments": {counted.LabelStub: " 8080 "},
	}
	r := &resolver{errs: map[string]error{"payments:8080": errors.New("payments:8080: no such port\nlogs: ...")}}
	var warned []string
	stubs := counted.Stubs(context.Background(), labels, r, func(service, why string) { warned = append(warned, service) })
	if len(stubs) != 2 || stubs[0].Service != "payments" || stubs[1].Service != "upstream" || len(warned) != 2 {
		t.Fatalf("stubs %+v, warned %v", stubs, warned)
	}
	if stubs[0].Port != 8080 || stubs[0].NotMeasured != "payments:8080: no such port" || stubs[0].Config != nil {
		t.Errorf("unreachable stub %+v", stubs[0])
	}
	if !strings.Contains(stubs[1].NotMeasured, `label io.loadgate.stub="http" is not a TCP port`) {
		t.Errorf("bad label %+v", stubs[1])
	}
}
