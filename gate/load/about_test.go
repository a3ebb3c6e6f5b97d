package load_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/loadgate/loadgate/gate/load"
	"github.com/loadgate/loadgate/gate/result"
)

// What the Config states of the run (machine, topology, target label,
// side, commit, round) is in the result Run returns: no caller patches it
// afterwards (issue 9: load.Run returns the result final).
func TestRunReturnsTheResultWithWhatConfigStates(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	sc := mustScenario(t, `
name: about
phases: [{name: sustain, rate: 20, duration: 100ms}]
workloads: [{name: a, http: {path: /}}]
`)
	u, _ := urlParse(srv.URL)
	cfg := load.Config{Scenario: sc, Target: load.Target{URL: u},
		Machine:     result.Machine{Host: "runner-7", CPUs: 4, Kernel: "6.1", Go: "go1.26", OS: "linux", Arch: "amd64"},
		Topology:    result.Topology{StackCPUs: "0-1", LoadCPUs: "2-3", GOMAXPROCS: 2, Pinned: true, TargetPath: "container-network"},
		TargetLabel: "api:8080 (172.18.0.3:8080)", Side: "head", Commit: "3f1c2a9be07d",
		Round: &result.Round{Number: 2, First: true, OtherPaused: true}}
	res, err := load.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Machine != cfg.Machine || !reflect.DeepEqual(res.Topology, cfg.Topology) || res.Target != cfg.TargetLabel ||
		res.Side != cfg.Side || res.Commit != cfg.Commit || !reflect.DeepEqual(res.Round, cfg.Round) {
		t.Errorf("result states machine %+v topology %+v target %q side %q commit %q round %+v; want what Config states",
			res.Machine, res.Topology, res.Target, res.Side, res.Commit, res.Round)
	}
	if res.Round == cfg.Round {
		t.Error("the result shares the Config's Round")
	}
	// Without a label the target is named by its URL.
	cfg.TargetLabel = ""
	if res, err = load.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if res.Target != srv.URL {
		t.Errorf("target %q, want %q", res.Target, srv.URL)
	}
}
