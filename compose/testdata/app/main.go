// Command app is compose's test service: HTTP with /healthz, and its own
// healthcheck client (the image has no curl).
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	health := flag.String("healthcheck", "", "GET this URL and exit 0 on 200 (healthcheck mode)")
	unhealthy := flag.Bool("unhealthy", false, "answer /healthz with 503")
	delay := flag.Duration("delay", 0, "sleep this long before listening (a slow starter)")
	exit := flag.Int("exit", -1, "after -delay, print a line and exit with this status instead of serving")
	flag.Parse()
	if *health != "" {
		c := http.Client{Timeout: 2 * time.Second}
		r, err := c.Get(*health)
		if err != nil {
			fmt.Fprintln(os.Stderr, "healthcheck:", err)
			os.Exit(1)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			fmt.Fprintln(os.Stderr, "healthcheck: status", r.StatusCode)
			os.Exit(1)
		}
		return
	}
	name := os.Getenv("APP_NAME")
	if *exit >= 0 {
		fmt.Printf("app %s: starting, will exit with status %d\n", name, *exit)
		time.Sleep(*delay)
		fmt.Printf("app %s: giving up on purpose, exit status %d\n", name, *exit)
		os.Exit(*exit)
	}
	if *delay > 0 {
		fmt.Printf("app %s: waiting %s before listening\n", name, *delay)
		time.Sleep(*delay)
	}
	fmt.Printf("app %s starting on %s greeting=%q\n", name, *listen, os.Getenv("GREETING"))
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if *unhealthy {
			fmt.Printf("app %s: refusing health check on purpose\n", name)
			http.Error(w, "sick on purpose", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", name)
	})
	if err := http.ListenAndServe(*listen, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
