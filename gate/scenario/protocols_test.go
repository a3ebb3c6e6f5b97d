package scenario_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/gate/scenario"
)

const protoHead = `name: p
phases: [{name: sustain, rate: 10, duration: 10s}]
workloads:
`

func TestParseWS(t *testing.T) {
	s := mustParse(t, protoHead+`  - name: chat_stream
    share: 20
    ws:
      path: /ws/chat?room={n}
      headers: {Authorization: "Bearer ${API_TOKEN}"}
      send: ['{"q":"hello {n}"}']
      receive: 1
      cancel: 20%
    thresholds: {p95: 1500ms, first_message_p95: 1s, connect_p99: 300ms, error_rate: 1%}
  - name: live_view
    ws: {path: /ws/live, hold: 2m, ping: 25s}
`, scenario.Options{})
	w := s.Workloads[0]
	if w.Kind() != "ws" || w.HTTP != nil || w.WS == nil {
		t.Fatalf("kind %q", w.Kind())
	}
	x := w.WS
	if x.Path != "/ws/chat?room={n}" || x.Receive != 1 || x.Cancel != 0.2 || len(x.Send) != 1 || x.Headers["Authorization"] != "Bearer ${API_TOKEN}" {
		t.Errorf("ws %+v", x)
	}
	if w.Thresholds.FirstMessage.P95 != time.Second || w.Thresholds.Connect.P99 != 300*time.Millisecond || w.Thresholds.P95 != 1500*time.Millisecond {
		t.Errorf("thresholds %+v", w.Thresholds)
	}
	if l := s.Workloads[1].WS; l.Hold != 2*time.Minute || l.Ping != 25*time.Second {
		t.Errorf("live %+v", l)
	}
	n := 0
	for k := int64(0); k < 100; k++ {
		if x.Cancels(k) {
			n++
		}
	}
	if n != 20 {
		t.Errorf("Cancels: %d of 100 at 20%%", n)
	}
}

func TestParseGRPC(t *testing.T) {
	s := mustParse(t, protoHead+`  - name: evaluate
    grpc:
      method: iohr.engine.v1.EngineService/Evaluate
      request: {subject_id: "load-{n}", depth: 2, tags: [a, b]}
      descriptors: engine.protoset
      metadata: {authorization: "Bearer ${API_TOKEN}"}
    expect: {code: [OK, NOT_FOUND]}
  - name: health
    grpc: {method: grpc.health.v1.Health/Check}
`, scenario.Options{})
	g := s.Workloads[0].GRPC
	if g == nil || g.Service() != "iohr.engine.v1.EngineService" || g.MethodName() != "Evaluate" {
		t.Fatalf("grpc %+v", g)
	}
	if g.Request != `{"depth":2,"subject_id":"load-{n}","tags":["a","b"]}` {
		t.Errorf("request %s", g.Request)
	}
	if !strings.HasSuffix(g.Descriptors, "/engine.protoset") || !strings.HasPrefix(g.Descriptors, "/") {
		t.Errorf("descriptors %q: want absolute, next to the scenario", g.Descriptors)
	}
	if got := s.Workloads[0].Expect.Codes; len(got) != 2 || got[0] != "OK" || got[1] != "NotFound" {
		t.Errorf("codes %v", got)
	}
	if got := s.Workloads[1].Expect.Codes; len(got) != 1 || got[0] != "OK" {
		t.Errorf("default codes %v", got)
	}
	if s.Workloads[1].GRPC.Request != "{}" {
		t.Errorf("default request %q", s.Workloads[1].GRPC.Request)
	}
}

func TestParseProtocolErrors(t *testing.T) {
	for _, tc := range []struct{ name, workload, want string }{
		{"two kinds", `{name: a, http: {path: /}, ws: {path: /ws, receive: 1}}`, "workloads[0].ws: a workload has exactly one of http, ws, grpc, openapi, not both http and ws"},
		{"none", `{name: a}`, "workloads[0].http: is required: a workload has exactly one of http, ws, grpc, openapi"},
		{"ws nothing to do", `{name: a, ws: {path: /ws}}`, "workloads[0].ws: a session needs something to do"},
		{"ws ping without hold", `{name: a, ws: {path: /ws, receive: 1, ping: 1s}}`, "workloads[0].ws.ping: pings are sent while the socket is held"},
		{"ws cancel without receive", `{name: a, ws: {path: /ws, hold: 1s, cancel: 10%}}`, "workloads[0].ws.cancel: sessions are cancelled after their first message"},
		{"ws unknown var", `{name: a, ws: {path: "/ws/{room}", receive: 1}}`, "{room} has no entry in vars"},
		{"ws expect", `{name: a, ws: {path: /ws, receive: 1}, expect: {status: [101]}}`, "workloads[0].expect.status: a WebSocket session succeeds"},
		{"grpc bad method", `{name: a, grpc: {method: Evaluate}}`, "workloads[0].grpc.method: must be package.Service/Method"},
		{"grpc status", `{name: a, grpc: {method: a.B/C}, expect: {status: [200]}}`, "use expect.code"},
		{"grpc bad code", `{name: a, grpc: {method: a.B/C}, expect: {code: [UNAVAILABL]}}`, `unknown gRPC status code "UNAVAILABL"`},
		{"grpc request not a mapping", `{name: a, grpc: {method: a.B/C, request: "x"}}`, "workloads[0].grpc.request: must be a mapping"},
		{"grpc var", `{name: a, grpc: {method: a.B/C, request: {x: "{id}"}}}`, "only {n} is a template in a gRPC request"},
		{"http code", `{name: a, http: {path: /}, expect: {code: [OK]}}`, "expect.code is for gRPC workloads"},
		{"first_message on http", `{name: a, http: {path: /}, thresholds: {first_message_p95: 1s}}`, "first_message and connect thresholds are for WebSocket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scenario.Parse([]byte(protoHead+"  - "+tc.workload+"\n"), "s.yaml", scenario.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
