// Command service is the demo stack's service: one static binary plays every
// -role (FROM scratch images have nothing else); -healthcheck URL exits 0 on 200.
// The api serves /items, /items/{id}, /search, POST /documents and /profile/{id}
// (via the backend, which waits DELAY_MS), each doing apiWork's work.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	role := flag.String("role", env("ROLE", "api"), "the service to play (api, backend, ...; see roles)")
	listen := flag.String("listen", env("LISTEN", ":8080"), "address to serve on")
	health := flag.String("healthcheck", "", "GET this URL, exit 0 on 200 (healthcheck mode)")
	flag.Parse()
	if *health != "" {
		os.Exit(healthcheck(*health))
	}
	serve, ok := roles[*role]
	if !ok {
		log.Fatalf("unknown role %q (one of %s)", *role, roleNames())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log.Printf("%s listening on %s", *role, *listen)
	if err := serve(ctx, *listen); err != nil {
		log.Fatal(err)
	}
	log.Printf("%s stopped", *role)
}

// roles maps -role to its server; each role's file adds itself from init.
var roles = map[string]func(ctx context.Context, listen string) error{
	"api": func(ctx context.Context, listen string) error {
		return serveHTTP(ctx, listen, withMetrics(ctx, apiHandler(env("BACKEND_URL", "http://backend:8081"), envInt("SEARCH_ITERATIONS", 3000))))
	},
	"backend": func(ctx context.Context, listen string) error {
		return serveHTTP(ctx, listen, backendHandler(time.Duration(envInt("DELAY_MS", 20))*time.Millisecond))
	},
}

func roleNames() string {
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func serveHTTP(ctx context.Context, listen string, h http.Handler) error {
	srv := &http.Server{Addr: listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func healthcheck(url string) int {
	c := http.Client{Timeout: 2 * time.Second}
	r, err := c.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
		return 1
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "healthcheck: status", r.StatusCode)
		return 1
	}
	return 0
}

type item struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Price int    `json:"price_cents"`
}

const maxItems = 100000

// wrap maps any id >= 0 onto 1..n: a load's sequence numbers start at 0, unbounded.
func wrap(id, n int) int {
	if id == 0 {
		return n
	}
	return (id-1)%n + 1
}

func mkItem(id int) item {
	return item{ID: id, Name: fmt.Sprintf("item-%d", id), Price: (id * 7919) % 10000}
}

// work is one endpoint's work per request: chained sha256 rounds (a count, so a
// slower machine is slower, as a real service) and a wait standing for a database.
type work struct {
	cpuRounds int
	wait      time.Duration
}

// do performs the work, returning the digest so it is not optimized away.
func (w work) do(ctx context.Context, seed []byte) [32]byte {
	sum := sha256.Sum256(seed)
	for i := 1; i < w.cpuRounds; i++ {
		sum = sha256.Sum256(sum[:])
	}
	if w.wait > 0 {
		t := time.NewTimer(w.wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return sum
}

// apiWork is the api's work per endpoint: a few ms, mostly waiting, so scheduling
// jitter is not most of the latency (examples/demo/compose.yaml).
func apiWork(searchRounds int) map[string]work {
	get := func(ep string, rounds, waitUS int) work {
		return work{cpuRounds: envInt(ep+"_CPU_ROUNDS", rounds), wait: time.Duration(envInt(ep+"_WAIT_US", waitUS)) * time.Microsecond}
	}
	return map[string]work{
		"items":   get("ITEMS", 1900, 2500),
		"item":    get("ITEM", 950, 1800),
		"search":  {cpuRounds: searchRounds, wait: time.Duration(envInt("SEARCH_WAIT_US", 1500)) * time.Microsecond},
		"profile": get("PROFILE", 950, 0),
		"ingest":  get("INGEST", 950, 2500),
	}
}

// api is the api role's state.
type api struct {
	wk         map[string]work
	docs       atomic.Int64
	client     *http.Client
	backendURL string
}

func apiHandler(backendURL string, iterations int) http.Handler {
	a := &api{wk: apiWork(iterations), backendURL: backendURL,
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /items", a.items)
	mux.HandleFunc("GET /items/{id}", a.item)
	mux.HandleFunc("GET /search", a.search)
	mux.HandleFunc("POST /documents", a.documents)
	mux.HandleFunc("GET /profile/{id}", a.profile)
	return mux
}

// items is a page of 20 items (?page=N, 1 when absent).
func (a *api) items(w http.ResponseWriter, r *http.Request) {
	page, err := strconv.Atoi(r.URL.Query().Get("page"))
	if r.URL.Query().Get("page") == "" {
		page, err = 1, nil
	}
	if err != nil || page < 0 {
		http.Error(w, "page must be a non-negative integer", http.StatusBadRequest)
		return
	}
	const per = 20
	page = wrap(page, maxItems/per)
	a.wk["items"].do(r.Context(), []byte(strconv.Itoa(page)))
	items := make([]item, 0, per)
	for i := 0; i < per; i++ {
		items = append(items, mkItem((page-1)*per+i+1))
	}
	writeJSON(w, http.StatusOK, map[string]any{"page": page, "items": items})
}

func (a *api) item(w http.ResponseWriter, r *http.Request) {
	id, ok := a.byID(w, r, "item")
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, mkItem(wrap(id, maxItems)))
}

// byID does what's work for r's {id}; false once it answered 404.
func (a *api) byID(w http.ResponseWriter, r *http.Request, what string) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id < 0 {
		http.Error(w, "no such "+what, http.StatusNotFound)
		return 0, false
	}
	a.wk[what].do(r.Context(), []byte(r.PathValue("id")))
	return id, true
}

func (a *api) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	if q == "" {
		http.Error(w, "q is required", http.StatusBadRequest)
		return
	}
	sum := a.wk["search"].do(r.Context(), []byte(q))
	hits := make([]item, 0, 5)
	for i := 0; i < 5; i++ {
		hits = append(hits, mkItem(int(sum[i])<<8|int(sum[i+5])+1))
	}
	writeJSON(w, http.StatusOK, map[string]any{"q": q, "digest": hex.EncodeToString(sum[:8]), "hits": hits})
}

func (a *api) documents(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	a.wk["ingest"].do(r.Context(), []byte(strconv.FormatInt(n, 10)))
	id := a.docs.Add(1)
	writeJSON(w, http.StatusAccepted, map[string]any{"id": id, "bytes": n})
}

func (a *api) profile(w http.ResponseWriter, r *http.Request) {
	id, ok := a.byID(w, r, "profile")
	if !ok {
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, fmt.Sprintf("%s/profile/%d", a.backendURL, id), nil)
	resp, err := a.client.Do(req)
	if err != nil {
		http.Error(w, "backend: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var prof map[string]any
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&prof) != nil {
		http.Error(w, fmt.Sprintf("backend answered %d", resp.StatusCode), http.StatusBadGateway)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"profile": prof, "recent": []item{mkItem(wrap(id, maxItems)), mkItem(wrap(id+1, maxItems))}})
}

func backendHandler(delay time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /profile/{id}", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "name": "user-" + r.PathValue("id"), "delay_ms": delay.Milliseconds()})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envInt(k string, def int) int {
	v, err := strconv.Atoi(os.Getenv(k))
	if err != nil {
		return def
	}
	return v
}
