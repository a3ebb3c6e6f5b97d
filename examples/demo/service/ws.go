package main

// The ws role (and edge's /ws/ routes): /ws/chat answers each message with
// CHAT_MESSAGES messages CHAT_GAP_MS apart; /ws/live pushes one every every_ms
// (LIVE_EVERY_MS), answers pings, and closes after LIVE_MAX_S.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

func init() {
	roles["ws"] = func(ctx context.Context, listen string) error {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
		registerWS(ctx, mux, wsConfigFromEnv())
		return serveHTTP(ctx, listen, mux)
	}
}

type wsConfig struct {
	chatMessages int
	chatGap      time.Duration
	liveEvery    time.Duration
	liveMax      time.Duration
}

func wsConfigFromEnv() wsConfig {
	return wsConfig{
		chatMessages: max(envInt("CHAT_MESSAGES", 3), 1),
		chatGap:      time.Duration(max(envInt("CHAT_GAP_MS", 5), 0)) * time.Millisecond,
		liveEvery:    time.Duration(max(envInt("LIVE_EVERY_MS", 200), 1)) * time.Millisecond,
		liveMax:      time.Duration(max(envInt("LIVE_MAX_S", 600), 1)) * time.Second,
	}
}

// wsIdle bounds a wait for the client's next message.
const wsIdle = 2 * time.Minute

// wsReadLimit bounds a client's message.
const wsReadLimit = 64 << 10

// registerWS adds /ws/chat and /ws/live to mux; sessions end with ctx.
func registerWS(ctx context.Context, mux *http.ServeMux, cfg wsConfig) {
	var sessions atomic.Int64
	mux.HandleFunc("GET /ws/chat", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return // Accept has answered the handshake's error
		}
		defer c.CloseNow()
		sessions.Add(1)
		defer sessions.Add(-1)
		c.SetReadLimit(wsReadLimit)
		sctx, cancel := mergeDone(r.Context(), ctx)
		defer cancel()
		room := r.URL.Query().Get("room")
		chat(sctx, c, room, cfg)
	})
	mux.HandleFunc("GET /ws/live", func(w http.ResponseWriter, r *http.Request) {
		every := cfg.liveEvery
		if s := r.URL.Query().Get("every_ms"); s != "" {
			ms, err := strconv.Atoi(s)
			if err != nil || ms < 1 || ms > 60000 {
				http.Error(w, "every_ms must be an integer from 1 to 60000", http.StatusBadRequest)
				return
			}
			every = time.Duration(ms) * time.Millisecond
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		sessions.Add(1)
		defer sessions.Add(-1)
		c.SetReadLimit(wsReadLimit)
		sctx, cancel := mergeDone(r.Context(), ctx)
		defer cancel()
		live(sctx, c, every, cfg.liveMax)
	})
	mux.HandleFunc("GET /ws/sessions", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d\n", sessions.Load())
	})
}

// chat answers each message with cfg.chatMessages messages until the client goes.
func chat(ctx context.Context, c *websocket.Conn, room string, cfg wsConfig) {
	for turn := 1; ; turn++ {
		rctx, cancel := context.WithTimeout(ctx, wsIdle)
		_, q, err := c.Read(rctx)
		cancel()
		if err != nil {
			return // closed by the client (the normal end), idle, or shutdown
		}
		for i := 1; i <= cfg.chatMessages; i++ {
			if i > 1 && cfg.chatGap > 0 {
				t := time.NewTimer(cfg.chatGap)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return
				}
			}
			msg := fmt.Sprintf(`{"room":%q,"turn":%d,"part":%d,"of":%d,"len_q":%d}`, room, turn, i, cfg.chatMessages, len(q))
			wctx, cancel := context.WithTimeout(ctx, wsIdle)
			err := c.Write(wctx, websocket.MessageText, []byte(msg))
			cancel()
			if err != nil {
				return // the client went away part-way (a cancelled answer)
			}
		}
	}
}

var (
	appPing = []byte(`{"type":"ping"}`)
	appPong = []byte(`{"type":"pong"}`)
)

// live pushes a message every every, answering pings, until the client goes or max passes.
func live(ctx context.Context, c *websocket.Conn, every, maxDur time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, maxDur)
	defer cancel()
	go func() { // reads the client's messages: pings, and the close
		defer cancel()
		for {
			_, m, err := c.Read(ctx)
			if err != nil {
				return
			}
			if bytes.Equal(bytes.TrimSpace(m), appPing) {
				wctx, wcancel := context.WithTimeout(ctx, wsIdle)
				err := c.Write(wctx, websocket.MessageText, appPong)
				wcancel()
				if err != nil {
					return
				}
			}
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for seq := 1; ; seq++ {
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				_ = c.Close(websocket.StatusNormalClosure, "live view ends")
			}
			return
		case now := <-t.C:
			msg := fmt.Sprintf(`{"seq":%d,"at_unix_ms":%d}`, seq, now.UnixMilli())
			wctx, wcancel := context.WithTimeout(ctx, wsIdle)
			err := c.Write(wctx, websocket.MessageText, []byte(msg))
			wcancel()
			if err != nil {
				return
			}
		}
	}
}

// mergeDone is a context of a that also ends when b does.
func mergeDone(a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(a)
	stop := context.AfterFunc(b, cancel)
	return ctx, func() { stop(); cancel() }
}
