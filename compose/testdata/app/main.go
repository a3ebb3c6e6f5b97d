// Command app is the tiny test service of package compose's tests: an HTTP
// server with /healthz, and its own healthcheck client (the image is FROM
// scratch: no curl).
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
