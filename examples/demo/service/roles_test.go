package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestWSChatStreamsEachTurn(t *testing.T) {
	_, base := startEdge(t)
	ctx := testCtx(t)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws/chat?room=7", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for turn := 1; turn <= 2; turn++ {
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"q":"hi"}`)); err != nil {
			t.Fatal(err)
		}
		for part := 1; part <= 3; part++ {
			_, m, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Room           string
				Turn, Part, Of int
			}
			if err := json.Unmarshal(m, &got); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			if got.Room != "7" || got.Turn != turn || got.Part != part || got.Of != 3 {
				t.Errorf("turn %d part %d: got %s", turn, part, m)
			}
		}
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestWSLiveAnswersApplicationPings(t *testing.T) {
	_, base := startEdge(t)
	ctx := testCtx(t)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws/live?every_ms=20", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	msgs := make(chan string, 16)
	go func() { // the client's reader: a pong reaches Ping through it
		defer close(msgs)
		for {
			_, m, err := c.Read(ctx)
			if err != nil {
				return
			}
			msgs <- string(m)
		}
	}()
	if err := c.Ping(ctx); err != nil { // a WebSocket ping, answered by the library while the server reads
		t.Fatalf("ping: %v", err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"ping"}`)); err != nil {
		t.Fatal(err)
	}
	pushes, pong := 0, false
	for !pong || pushes < 3 {
		m, ok := <-msgs
		if !ok {
			t.Fatalf("closed after %d pushes, pong %v", pushes, pong)
		}
		switch {
		case m == `{"type":"pong"}`:
			pong = true
		case strings.HasPrefix(m, `{"seq":`):
			pushes++
		default:
			t.Fatalf("unexpected message %s", m)
		}
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
	resp, err := http.Get(base + "/ws/live?every_ms=0")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("every_ms=0: %d, want 400", resp.StatusCode)
	}
}

// TestGRPCQuoteOnTheEdgePort: a gRPC client on the same port as the HTTP
// routes (the edge tells them apart by the HTTP/2 preface) gets Quote, the
// health service, and InvalidArgument for a negative item.
func TestGRPCQuoteOnTheEdgePort(t *testing.T) {
	_, base := startEdge(t)
	ctx := testCtx(t)
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(base, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fd, err := quoteDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	m := fd.Services().ByName("QuoteService").Methods().ByName("Quote")
	call := func(req string) (*dynamicpb.Message, error) {
		in := dynamicpb.NewMessage(m.Input())
		if err := protojson.Unmarshal([]byte(req), in); err != nil {
			t.Fatal(err)
		}
		out := dynamicpb.NewMessage(m.Output())
		return out, conn.Invoke(ctx, "/"+quoteService+"/Quote", in, out)
	}
	out, err := call(`{"item_id":"41","quantity":2,"customer":"c"}`)
	if err != nil {
		t.Fatal(err)
	}
	it := mkItem(42)
	want := `{"itemId":"42","name":"item-42","unitCents":"` + itoa(it.Price) + `","totalCents":"` + itoa(2*it.Price) + `"`
	if got, _ := protojson.Marshal(out); !strings.HasPrefix(strings.ReplaceAll(string(got), " ", ""), want) {
		t.Errorf("Quote: %s, want %s,digest...}", got, want)
	}
	if _, err := call(`{"item_id":"-1"}`); status.Code(err) != codes.InvalidArgument {
		t.Errorf("negative item: %v, want InvalidArgument", err)
	}
	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v %v", h, err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestEdgeServesShortAndSlowHTTP1: a request shorter than the HTTP/2
// preface, sent a byte at a time, still reaches the HTTP server (the
// split reads only until the bytes differ from the preface).
func TestEdgeServesShortAndSlowHTTP1(t *testing.T) {
	_, base := startEdge(t)
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	for _, b := range []byte("GET /healthz HTTP/1.0\r\n\r\n") {
		if _, err := c.Write([]byte{b}); err != nil {
			t.Fatal(err)
		}
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.0 200") {
		t.Errorf("status line %q, %v", line, err)
	}
}

// TestRegression_FirstSequenceNumberFailed: the demo's scenarios put a
// workload's sequence number {n}, which starts at 0, in /items?page={n},
// /items/{n} and /profile/{n}, and the api answered 0 with 400 and 404, so
// every run failed three warm-up requests and every gate noted that the
// service had failed. Any id >= 0 names an item (1..n, 0 wraps to the last);
// a negative or non-integer one is still refused.
func TestRegression_FirstSequenceNumberFailed(t *testing.T) {
	backend := httptest.NewServer(backendHandler(time.Millisecond))
	defer backend.Close()
	api := httptest.NewServer(apiHandler(backend.URL, 10))
	defer api.Close()
	for _, c := range []struct {
		path   string
		status int
		want   string // in the body
	}{
		{"/items?page=0", 200, `"page":5000}`},         // wraps to the last page
		{"/items?page=1", 200, `"page":1}`},            // unchanged
		{"/items?page=5001", 200, `"page":1}`},         // wraps past the last
		{"/items/0", 200, `{"id":100000,`},             // wraps to the last item
		{"/items/100001", 200, `{"id":1,`},             // wraps past the last
		{"/profile/0", 200, `"id":"0"`},                // the backend's answer
		{"/profile/0", 200, `"recent":[{"id":100000,`}, // its recent items wrap too
		{"/profile/100000", 200, `"item-100000","price_cents":0},{"id":1,`},
		{"/items?page=-1", 400, "non-negative integer"}, // still refused
		{"/items/-3", 404, "no such item"},
		{"/profile/x", 404, "no such profile"},
	} {
		resp, err := http.Get(api.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
			t.Errorf("GET %s: %d %s, want %d with %s", c.path, resp.StatusCode, body, c.status, c.want)
		}
	}
}
