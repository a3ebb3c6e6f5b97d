package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/loadgate/loadgate/gate/stub"
)

func stubCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stub", flag.ContinueOnError)
	listen := fs.String("listen", ":8081", "`address` to serve on")
	delay := fs.String("delay", "0s", "delay `distribution` of every answer (see above)")
	errRate := fs.Float64("error-rate", 0, "`fraction` of requests answered 500")
	toRate := fs.Float64("timeout-rate", 0, "`fraction` of requests held open without an answer")
	holdMax := fs.Duration("hold-max", stub.DefaultHoldMax, "how long a held request is held at most before its connection is closed")
	chunks := fs.Int("stream-chunks", 0, "server-sent events per streamed answer (0: never stream)")
	first := fs.String("stream-first", "0s", "delay `distribution` from the headers to the first event")
	every := fs.Duration("stream-every", 0, "pace between events")
	seed := fs.Uint64("seed", 1, "seed of the random draws")
	health := fs.String("healthcheck", "", "get this `URL`, exit 0 on 200 (healthcheck mode)")
	body := fs.String("body", "", "`JSON` of a 200 answer; {name} stands for the route's wildcard of that name (default: a small object naming the path and the delay)")
	var routes multiFlag
	fs.Var(&routes, "route", "a `pattern` the stub answers, net/http ServeMux syntax (repeatable; default \"/\": every path)")
	fs.Usage = func() { fmt.Fprint(stderr, helpText("stub")); fs.PrintDefaults() }
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *health != "" {
		return stubHealthcheck(ctx, *health)
	}
	cfg := stub.Config{ErrorRate: *errRate, TimeoutRate: *toRate, HoldMax: *holdMax, Seed: *seed, Routes: routes, Body: *body}
	var err error
	if cfg.Delay, err = stub.ParseDelay(*delay); err != nil {
		return usageErr("stub: --delay: %w", err)
	}
	if *chunks != 0 {
		s := &stub.Stream{Chunks: *chunks, Every: *every}
		if s.First, err = stub.ParseDelay(*first); err != nil {
			return usageErr("stub: --stream-first: %w", err)
		}
		cfg.Stream = s
	}
	srv, err := stub.New(cfg)
	if err != nil {
		return usageErr("stub: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *listen)
	if err != nil {
		return usageErr("stub: --listen: %w", err)
	}
	fmt.Fprintf(stderr, "loadgate stub: listening on %s · delay %s · error rate %g · timeout rate %g (held up to %s) · routes %s\n",
		ln.Addr(), cfg.Delay, cfg.ErrorRate, cfg.TimeoutRate, *holdMax, strings.Join(srv.Config().Routes, ", "))
	if err := srv.Serve(ctx, ln); err != nil {
		return unusable(err)
	}
	fmt.Fprintln(stderr, "loadgate stub: stopped")
	return nil
}

// stubHealthcheck gets url within 2 s: nil on 200, else unusable (exit 3).
func stubHealthcheck(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usageErr("stub: -healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return unusable(fmt.Errorf("stub: healthcheck: %w", err))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return unusable(fmt.Errorf("stub: healthcheck: %s answered %d", url, resp.StatusCode))
	}
	return nil
}
