package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"github.com/loadgate/loadgate/gate/stub"
	"github.com/loadgate/loadgate/internal/cliflag"
)

func stubCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stub", flag.ContinueOnError)
	var cfg stub.Config
	var st stub.Stream
	listen := fs.String("listen", ":8081", "`address` to serve on")
	fs.TextVar(&cfg.Delay, "delay", stub.Delay{}, "delay `distribution` of every answer (see above)")
	fs.Float64Var(&cfg.ErrorRate, "error-rate", 0, "`fraction` of requests answered 500")
	fs.Float64Var(&cfg.TimeoutRate, "timeout-rate", 0, "`fraction` of requests held open without an answer")
	fs.DurationVar(&cfg.HoldMax, "hold-max", stub.DefaultHoldMax, "how long a held request is held at most before its connection is closed")
	fs.IntVar(&st.Chunks, "stream-chunks", 0, "server-sent events per streamed answer (0: never stream)")
	fs.TextVar(&st.First, "stream-first", stub.Delay{}, "delay `distribution` from the headers to the first event")
	fs.DurationVar(&st.Every, "stream-every", 0, "pace between events")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the random draws")
	health := fs.String("healthcheck", "", "get this `URL`, exit 0 on 200 (healthcheck mode)")
	fs.StringVar(&cfg.Body, "body", "", "`JSON` of a 200 answer; {name} stands for the route's wildcard of that name (default: a small object naming the path and the delay)")
	fs.Var((*cliflag.Strings)(&cfg.Routes), "route", "a `pattern` the stub answers, net/http ServeMux syntax (repeatable; default \"/\": every path)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *health != "" {
		if _, err := url.ParseRequestURI(*health); err != nil {
			return usageErr("stub: -healthcheck: %w", err)
		}
		if err := stub.Healthcheck(ctx, *health); err != nil {
			return unusable(fmt.Errorf("stub: healthcheck: %w", err))
		}
		return nil
	}
	if st.Chunks != 0 {
		cfg.Stream = &st
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
		ln.Addr(), cfg.Delay, cfg.ErrorRate, cfg.TimeoutRate, cfg.HoldMax, strings.Join(srv.Config().Routes, ", "))
	if err := srv.Serve(ctx, ln); err != nil {
		return unusable(err)
	}
	fmt.Fprintln(stderr, "loadgate stub: stopped")
	return nil
}
