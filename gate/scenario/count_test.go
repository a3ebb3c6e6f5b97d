package scenario_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/loadgate/loadgate/gate/scenario"
)

const countYAML = `name: c
count: {service: api, port: 9090, metric: 'http_requests_total'}
phases:
  - {name: sustain, rate: 1, duration: 1s}
workloads:
  - name: a
    http: {path: /}
    count: {service: api, port: 9090, path: /m, metric: 'http_requests_total{route="GET /items", code = "2\"0\\0"}'}
  - name: b
    http: {path: /b}
`

func TestCountIsDecoded(t *testing.T) {
	sc, err := scenario.Parse([]byte(countYAML), "c.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names, counts := sc.Counts()
	if !reflect.DeepEqual(names, []string{"", "a"}) || len(counts) != 2 {
		t.Fatalf("Counts() = %q, %d counts", names, len(counts))
	}
	top, a := counts[0], counts[1]
	if top.Path != scenario.DefaultCountPath || top.Field != "count" || top.Line != 2 || top.Metric.Name != "http_requests_total" || len(top.Metric.Labels) != 0 {
		t.Errorf("scenario count %+v", top)
	}
	want := scenario.Selector{Name: "http_requests_total", Labels: []scenario.Label{{"route", "GET /items"}, {"code", `2"0\0`}}}
	if a.Path != "/m" || a.Field != "workloads[0].count" || a.Line != 8 || !reflect.DeepEqual(a.Metric, want) {
		t.Errorf("workload count %+v", a)
	}
	if err := sc.CountError(a, "no service %q", "api"); err.Error() != `c.yaml:8: workloads[0].count: no service "api"` {
		t.Errorf("CountError: %v", err)
	}
}

// count: does not change the load: the hash is the same without it.
func TestCountIsNotHashed(t *testing.T) {
	with, err := scenario.Parse([]byte(countYAML), "c.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(countYAML, "\n") {
		if !strings.Contains(l, "count:") {
			lines = append(lines, l)
		}
	}
	without, err := scenario.Parse([]byte(strings.Join(lines, "\n")), "c.yaml", scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if with.Hash != without.Hash {
		t.Errorf("count: changed the hash: %s vs %s", with.Hash, without.Hash)
	}
}

func TestParseSelector(t *testing.T) {
	for _, s := range []string{`x`, `a:b_c`, `x{}`, `x{a="1"}`, ` x { a = "1" , b="" } `, `x{a="\\\"\n}"}`} {
		sel, err := scenario.ParseSelector(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		again, err := scenario.ParseSelector(sel.String())
		if err != nil || !reflect.DeepEqual(again, sel) {
			t.Errorf("%s → %q → %+v, %v", s, sel.String(), again, err)
		}
	}
	for _, s := range []string{``, `1x`, `x{`, `x{a}`, `x{a="1"`, `x{a=1}`, `x{a!="1"}`, `x{a=~"1"}`, `x{a="1",a="2"}`, `x{1a="1"}`,
		`x{a="1"} y`, `x{a="\q"}`, `x{a="` + "\n" + `"}`, `x{a="1"}}`, `x` + strings.Repeat("y", scenario.MaxSelectorLen)} {
		if _, err := scenario.ParseSelector(s); !errors.Is(err, scenario.ErrSelector) {
			t.Errorf("%q: err %v, want ErrSelector", s, err)
		}
	}
}

func ExampleParseSelector() {
	sel, _ := scenario.ParseSelector(`http_requests_total{route="GET /items", code="200"}`)
	fmt.Println(sel.Name, len(sel.Labels), sel.Labels[0].Value)
	fmt.Println(sel)
	// Output:
	// http_requests_total 2 GET /items
	// http_requests_total{route="GET /items",code="200"}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`x`, `x{a="1"}`, `http_requests_total{route="GET /items",code="200"}`, `x{a="\\\"\n"}`, `x{a="1",}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := scenario.ParseSelector(s)
		if err != nil {
			return
		}
		again, err := scenario.ParseSelector(sel.String())
		if err != nil || !reflect.DeepEqual(again, sel) {
			t.Fatalf("%q → %q → %+v, %v", s, sel.String(), again, err)
		}
	})
}
