package load

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loadgate/loadgate/gate/scenario"
)

// wsServer is a loopback WebSocket peer with one handler per path:
//
//	/chat    reads one message and answers it in 3 messages (a chat turn)
//	/live    pushes a message every 10 ms until the client closes; answers pings
//	/deny    refuses the handshake with 403
//	/crash   reads one message, then closes with 1011
//	/silent  reads one message and never answers
//	/big     answers with one 64 KiB message
type wsServer struct {
	*httptest.Server
	pings   atomic.Int64
	got     atomic.Value // last message received on /chat
	headers atomic.Value // last Authorization header
}

func newWSServer(t testing.TB) *wsServer {
	t.Helper()
	s := &wsServer{}
	mux := http.NewServeMux()
	accept := func(w http.ResponseWriter, r *http.Request) *websocket.Conn {
		s.headers.Store(r.Header.Get("Authorization"))
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
			OnPingReceived: func(context.Context, []byte) bool { s.pings.Add(1); return true },
		})
		if err != nil {
			return nil
		}
		return c
	}
	mux.HandleFunc("/chat", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		_, msg, err := c.Read(r.Context())
		if err != nil {
			return
		}
		s.got.Store(string(msg) + " " + r.URL.RawQuery)
		for i := range 3 {
			if err := c.Write(r.Context(), websocket.MessageText, []byte(`{"part":`+string(rune('0'+i))+`}`)); err != nil {
				return
			}
		}
		_, _, _ = c.Read(r.Context()) // until the client closes
	})
	mux.HandleFunc("/live", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		ctx := c.CloseRead(r.Context()) // reads (and answers pings) until the close
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := c.Write(ctx, websocket.MessageText, []byte(`{"tick":1}`)); err != nil {
					return
				}
			}
		}
	})
	mux.HandleFunc("/deny", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	})
	mux.HandleFunc("/crash", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		_, _, _ = c.Read(r.Context())
		_ = c.Close(websocket.StatusInternalError, "boom")
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		_, _, _ = c.Read(r.Context())
		_, _, _ = c.Read(r.Context())
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		c := accept(w, r)
		if c == nil {
			return
		}
		defer c.CloseNow()
		_, _, _ = c.Read(r.Context())
		_ = c.Write(r.Context(), websocket.MessageBinary, make([]byte, 64<<10))
		_, _, _ = c.Read(r.Context())
	})
	s.Server = httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(s.Close)
	return s
}

func (s *wsServer) target(t testing.TB) Target {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := Target{URL: u}.CheckLoopback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func wsScenario(t testing.TB, ws string) *scenario.Scenario {
	t.Helper()
	y := `name: ws
timeout: 2s
max_body: 16KiB
phases: [{name: sustain, rate: 10, duration: 1s}]
workloads:
  - name: s
    ws: ` + ws + "\n"
	sc, err := scenario.Parse([]byte(y), "ws.yaml", scenario.Options{})
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return sc
}

func newTestWSOp(t *testing.T, srv *wsServer, sc *scenario.Scenario, env map[string]string) *wsOp {
	t.Helper()
	client, tr := newWSClient(sc, srv.target(t))
	t.Cleanup(tr.CloseIdleConnections)
	return newWSOp(client, srv.target(t), sc.Workloads[0], env, sc.Timeout, maxBody(sc))
}

func TestWSChatTurn(t *testing.T) {
	srv := newWSServer(t)
	sc := wsScenario(t, `{path: "/chat?room={n}", headers: {Authorization: "Bearer ${TOK}"}, send: ['{"q":"hello {n}"}'], receive: 3}`)
	op := newTestWSOp(t, srv, sc, map[string]string{"TOK": "s3cret"})
	var s scratch
	for k := int64(0); k < 5; k++ {
		var st sessionStats
		if class := op.session(context.Background(), k, &s, &st); class != "" {
			t.Fatalf("session %d: class %q", k, class)
		}
		if st.messages != 3 || st.cancelled {
			t.Errorf("session %d: messages %d cancelled %v, want 3 false", k, st.messages, st.cancelled)
		}
		if !(st.connect > 0 && st.first >= st.connect && st.end >= st.first) {
			t.Errorf("session %d: connect %v first %v end %v: want 0 < connect <= first <= end", k, st.connect, st.first, st.end)
		}
	}
	if got := srv.got.Load(); got != `{"q":"hello 4"} room=4` {
		t.Errorf("server got %q", got)
	}
	if got := srv.headers.Load(); got != "Bearer s3cret" {
		t.Errorf("Authorization %q", got)
	}
}

func TestWSFailureClasses(t *testing.T) {
	srv := newWSServer(t)
	for _, tc := range []struct{ ws, class string }{
		{`{path: /deny, send: [hi], receive: 1}`, "handshake 403"},
		{`{path: /crash, send: [hi], receive: 1}`, "closed 1011"},
		{`{path: /big, send: [hi], receive: 1}`, ClassMessageTooLarge},
		{`{path: /nope, send: [hi], receive: 1}`, "handshake 404"},
	} {
		sc := wsScenario(t, tc.ws)
		op := newTestWSOp(t, srv, sc, nil)
		var s scratch
		if got := op.do(context.Background(), 0, &s); got != tc.class {
			t.Errorf("%s: class %q, want %q", tc.ws, got, tc.class)
		}
	}
}

func TestWSTimeout(t *testing.T) {
	srv := newWSServer(t)
	sc := wsScenario(t, `{path: /silent, send: [hi], receive: 1}`)
	op := newTestWSOp(t, srv, sc, nil)
	op.timeout = 150 * time.Millisecond
	var s scratch
	t0 := time.Now()
	if got := op.do(context.Background(), 0, &s); got != ClassTimeout {
		t.Errorf("class %q, want timeout", got)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("a 150ms timeout took %v", d)
	}
}

func TestWSLiveViewHoldAndPing(t *testing.T) {
	srv := newWSServer(t)
	sc := wsScenario(t, `{path: /live, receive: 1, hold: 300ms, ping: 50ms}`)
	op := newTestWSOp(t, srv, sc, nil)
	var s scratch
	var st sessionStats
	t0 := time.Now()
	if class := op.session(context.Background(), 0, &s, &st); class != "" {
		t.Fatalf("class %q", class)
	}
	if d := time.Since(t0); d < 300*time.Millisecond || d > 2*time.Second {
		t.Errorf("held %v, want about 300ms", d)
	}
	if st.end < 300*time.Millisecond {
		t.Errorf("end %v before the hold ended", st.end)
	}
	if st.messages < 10 { // one every 10 ms for 300 ms
		t.Errorf("messages %d, want >= 10", st.messages)
	}
	if p := srv.pings.Load(); p < 4 { // every 50 ms for 300 ms
		t.Errorf("pings %d, want >= 4", p)
	}
}

func TestWSCancelShare(t *testing.T) {
	srv := newWSServer(t)
	sc := wsScenario(t, `{path: /chat, send: [hi], receive: 3, cancel: 20%}`)
	op := newTestWSOp(t, srv, sc, nil)
	var s scratch
	cancelled := 0
	for k := int64(0); k < 10; k++ {
		var st sessionStats
		if class := op.session(context.Background(), k, &s, &st); class != "" {
			t.Fatalf("session %d: %q", k, class)
		}
		if st.cancelled {
			cancelled++
			if st.messages != 1 || st.end != st.first {
				t.Errorf("cancelled session %d: messages %d end %v first %v", k, st.messages, st.end, st.first)
			}
		}
	}
	if cancelled != 2 {
		t.Errorf("cancelled %d of 10 at 20%%, want 2", cancelled)
	}
}

// The handshake goes through the target's dialer: an address that did not
// pass the check is never connected to.
func TestWSDialsOnlyCheckedAddresses(t *testing.T) {
	srv := newWSServer(t)
	sc := wsScenario(t, `{path: /chat, send: [hi], receive: 1}`)
	tg := srv.target(t)
	tg.Addrs = []netip.Addr{netip.MustParseAddr("127.0.0.2")} // the server is on 127.0.0.1
	client, tr := newWSClient(sc, tg)
	defer tr.CloseIdleConnections()
	op := newWSOp(client, tg, sc.Workloads[0], nil, sc.Timeout, maxBody(sc))
	var s scratch
	if got := op.do(context.Background(), 0, &s); got != ClassTargetNotAllowed && got != ClassRefused {
		t.Errorf("class %q, want %q (or refused)", got, ClassTargetNotAllowed)
	}
	if !strings.HasPrefix(op.prefix, "ws://127.0.0.1:") {
		t.Errorf("prefix %q", op.prefix)
	}
}
