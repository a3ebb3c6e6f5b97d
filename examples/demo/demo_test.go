package demo_test

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadgate/loadgate/compose"
	"github.com/loadgate/loadgate/examples/demo"
	"github.com/loadgate/loadgate/gate/pin"
	"github.com/loadgate/loadgate/internal/enginetest"
)

// TestDemoStack builds the demo service, brings the demo stack up pinned
// like a real run, and exercises every endpoint through the target.
func TestDemoStack(t *testing.T) {
	enginetest.Require(t, "demo stack test")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, _ := filepath.Abs(".")
	if err := demo.Build(ctx, dir); err != nil {
		t.Fatal(err)
	}
	all, err := pin.Available()
	if err != nil {
		t.Fatal(err)
	}
	stackCPUs, _ := pin.Split(all)
	s, err := compose.Up(ctx, compose.Options{
		Files: []string{filepath.Join(dir, "compose.yaml")}, Side: "demo",
		StackCPUs: stackCPUs, OutDir: t.TempDir(), ReadyTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Down(ctx); err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(s.Name(), "loadgate-") {
		t.Errorf("project name %q: the file's name must not win", s.Name())
	}
	if cpus, pinned, reason, _ := s.Topology(); !pinned {
		t.Errorf("not pinned to %s: %s", cpus, reason)
	}
	addr, path, err := s.Target(ctx, "api:8080")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("target %s via %s", addr, path)
	base := "http://" + addr
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/healthz", "", 200, "ok"},
		{"GET", "/items?page=3", "", 200, `"item-41"`},
		{"GET", "/items/7", "", 200, `"item-7"`},
		{"GET", "/items/x", "", 404, ""},
		{"GET", "/search?q=alpha", "", 200, `"digest"`},
		{"POST", "/documents", `{"title":"t"}`, 202, `"id"`},
		{"GET", "/profile/5", "", 200, `"user-5"`},
	} {
		req, _ := http.NewRequestWithContext(ctx, c.method, base+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
			t.Errorf("%s %s: %d %q, want %d with %q", c.method, c.path, resp.StatusCode, b, c.status, c.want)
		}
	}
}
